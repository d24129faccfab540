#pragma once
// Where two pod templates differ, as readable paths: what explain-restart shows for a revision
// that was not caused (only) by restarter's annotations.
//
// Paths are relative to the template: spec fields drop the "spec." prefix
// ("containers[app].image", "volumes[config].configMap.name"), metadata keeps it
// ("metadata.labels.tier", "metadata.annotations[kubectl.kubernetes.io/restartedAt]"). Lists whose
// elements are objects with unique string names (containers, volumes, env, ports, ...) are keyed
// by name; other lists by index, or as a whole when their lengths differ. Restarter-owned
// annotations are left out (diffAnnotations in annotations.hpp explains those).

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace restarter::core {

// Each path once, in a stable order (metadata paths, then spec paths, each sorted). Non-object
// templates compare as wholes ("" when they differ).
std::vector<std::string> templateChangePaths(const nlohmann::json& before, const nlohmann::json& after);

}  // namespace restarter::core
