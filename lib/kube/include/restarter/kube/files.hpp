#pragma once
// Reading the local files restarter is pointed at (kubeconfigs, tokens, certificates, CA bundles).

#include <cstddef>
#include <string>

#include "restarter/core/result.hpp"

namespace restarter::kube {

// The most readFile reads: 16 MiB, far beyond any kubeconfig, token, certificate or CA bundle, so
// a path to /dev/zero or a huge file is refused instead of read until memory runs out.
inline constexpr std::size_t kMaxFileBytes = std::size_t{16} << 20;

// The whole contents of `path`, byte for byte. Errors name the path and say why: NotFound when it
// does not exist, Forbidden when it may not be read, InvalidInput when it holds more than
// `maxBytes` (judged by its size when it has one, else while reading), Unavailable for anything
// else (a directory, an I/O error).
core::Result<std::string> readFile(const std::string& path, std::size_t maxBytes = kMaxFileBytes);

}  // namespace restarter::kube
