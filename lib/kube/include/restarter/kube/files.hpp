#pragma once
// Reading the local files restarter is pointed at (kubeconfigs, tokens, certificates, CA bundles).

#include <string>

#include "restarter/core/result.hpp"

namespace restarter::kube {

// The whole contents of `path`, byte for byte. Errors name the path and say why: NotFound when it
// does not exist, Forbidden when it may not be read, Unavailable for anything else (a directory,
// an I/O error).
core::Result<std::string> readFile(const std::string& path);

}  // namespace restarter::kube
