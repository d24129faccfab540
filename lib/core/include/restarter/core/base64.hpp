#pragma once
// Standard base64 (RFC 4648 section 4: the "+/" alphabet, "=" padding, no line breaks), as
// Kubernetes writes it: Secret data, a webhook's caBundle, an AdmissionReview's patch, kubeconfig
// *-data fields. The one implementation of lib/ and cli/; pure, so it lives in core, below every
// module that needs it (certs, kube, webhook, cli).

#include <optional>
#include <string>
#include <string_view>

namespace restarter::core {

// `data` (any bytes) encoded, with padding.
std::string base64Encode(std::string_view data);

// The bytes `text` encodes, or nullopt when it is not base64. As Go's base64.StdEncoding reads it
// (so as kubectl and the apiserver do): padding is required, the length without whitespace is a
// multiple of 4, "=" only at the end (at most two); spaces, tabs, CR and LF anywhere are skipped.
std::optional<std::string> base64Decode(std::string_view text);

}  // namespace restarter::core
