#pragma once
// Ignore rules (docs/architecture.md, "Annotation contract"):
//   - a ConfigMap or Secret labeled `restarter.stackable.tech/ignore: "true"` never restarts
//     anything;
//   - a workload annotated `restarter.stackable.tech/ignore-configmap.<anything>: <name>` (or
//     `ignore-secret.<anything>: <name>`) ignores that one object; the suffix only makes keys
//     unique, so a workload can ignore several.
// What "ignored" does to the annotation is decided in annotations.hpp.

#include <set>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "restarter/core/references.hpp"
#include "restarter/core/result.hpp"

namespace restarter::core {

struct IgnoreRules {
  std::set<std::string> configMaps;
  std::set<std::string> secrets;

  bool ignores(RefKind kind, const std::string& name) const;
};

// Reads the ignore annotations from a workload's `metadata.annotations` (an object, or null when
// the workload has none). InvalidInput if it is not an object of strings.
Result<IgnoreRules> ignoreRulesFromAnnotations(const nlohmann::json& workloadAnnotations);

// True if `labels` (an object or null) carries the ignore label with value "true".
bool hasIgnoreLabel(const nlohmann::json& labels) noexcept;

}  // namespace restarter::core
