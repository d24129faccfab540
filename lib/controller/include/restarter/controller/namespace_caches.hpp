#pragma once
// The caches of one watched namespace (or of all, with an empty name): what the controller's
// reflectors fill and its watches and reconcilers read (docs/architecture.md, "Watches and
// dispatch"). Made once by the controller before any thread starts; the stores lock themselves
// (cache/store.hpp).

#include <map>
#include <memory>
#include <string>

#include "restarter/cache/store.hpp"

namespace restarter::controller {

struct NamespaceCaches {
  std::string namespace_;
  std::map<std::string, std::unique_ptr<cache::PackedStore>> workloads;  // by WorkloadResource::name
  cache::MetaStore configMaps;  // identity and version only (docs/architecture.md, "Metadata only")
  cache::MetaStore secrets;
  cache::Store pods;
};

}  // namespace restarter::controller
