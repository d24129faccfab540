#include "restarter/core/ignore.hpp"

#include <nlohmann/json.hpp>

#include "json_access.hpp"
#include "restarter/core/constants.hpp"

namespace restarter::core {

using nlohmann::json;

bool IgnoreRules::ignores(RefKind kind, const std::string& name) const {
  const auto& names = kind == RefKind::ConfigMap ? configMaps : secrets;
  return names.count(name) > 0;
}

Result<IgnoreRules> ignoreRulesFromAnnotations(const json& workloadAnnotations) {
  IgnoreRules rules;
  if (workloadAnnotations.is_null()) return rules;
  if (!workloadAnnotations.is_object()) {
    return detail::wrongType("metadata.annotations", "an object", workloadAnnotations);
  }
  for (const auto& [key, value] : workloadAnnotations.items()) {
    std::set<std::string>* target = nullptr;
    if (key.rfind(kIgnoreConfigMapAnnotationPrefix, 0) == 0) {
      target = &rules.configMaps;
    } else if (key.rfind(kIgnoreSecretAnnotationPrefix, 0) == 0) {
      target = &rules.secrets;
    } else {
      continue;
    }
    if (!value.is_string()) {
      return detail::wrongType("metadata.annotations[" + key + "]", "a string", value);
    }
    target->insert(value.get<std::string>());
  }
  return rules;
}

bool hasIgnoreLabel(const json& labels) noexcept {
  if (!labels.is_object()) return false;
  auto it = labels.find(kIgnoreLabel);
  return it != labels.end() && it->is_string() && it->get_ref<const std::string&>() == kIgnoreLabelValue;
}

}  // namespace restarter::core
