#pragma once
// The pod template both inspect tests build their workloads and revisions from.

#include <string>

#include <nlohmann/json.hpp>

namespace inspect_fixtures {

inline const std::string kCm = "configmap.restarter.stackable.tech/cfg";

// Container "app" running `image`, mounting ConfigMap "cfg", with these template annotations.
inline nlohmann::json podTemplate(const std::string& image, const nlohmann::json& annotations) {
  return {{"metadata", {{"labels", {{"app", "web"}}}, {"annotations", annotations}}},
          {"spec",
           {{"containers", {{{"name", "app"}, {"image", image}}}},
            {"volumes", {{{"name", "cfg"}, {"configMap", {{"name", "cfg"}}}}}}}}};
}

}  // namespace inspect_fixtures
