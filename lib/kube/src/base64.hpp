#pragma once
// Standard base64 (RFC 4648 section 4) for kubeconfig *-data fields and exec credentials.
// Internal to restarter::kube.

#include <optional>
#include <string>
#include <string_view>

namespace restarter::kube {

// Whitespace is skipped; padding is optional. nullopt on any other non-alphabet character.
std::optional<std::string> base64Decode(std::string_view text);
std::string base64Encode(std::string_view data);

}  // namespace restarter::kube
