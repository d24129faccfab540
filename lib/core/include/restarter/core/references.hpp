#pragma once
// Reference walk: which ConfigMaps and Secrets does a pod template use?
//
// Followed (the commons-operator set plus projected volumes):
//   spec.volumes[].configMap.name, spec.volumes[].secret.secretName,
//   spec.volumes[].projected.sources[].configMap.name | .secret.name,
//   and for spec.containers[] and spec.initContainers[]:
//   env[].valueFrom.configMapKeyRef.name | .secretKeyRef.name,
//   envFrom[].configMapRef.name | .secretRef.name.
// Duplicates collapse into one Reference; it is optional only if every use is optional (one
// required use makes the pod depend on the object). A ConfigMap and a Secret of the same name are
// two references. The result is sorted by (kind, name): same template, same output.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "restarter/core/result.hpp"

namespace restarter::core {

enum class RefKind { ConfigMap, Secret };

// "configmap" or "secret": the word used in annotation keys, logs and explanations.
std::string_view refKindName(RefKind kind) noexcept;

struct Reference {
  RefKind kind = RefKind::ConfigMap;
  std::string name;
  bool optional = false;

  friend bool operator==(const Reference&, const Reference&) = default;
};

// Walks a PodTemplateSpec (the JSON of `spec.template` of a workload). A template without a spec,
// volumes or containers simply has fewer references. Errors (InvalidInput, naming the JSON path)
// when a field has the wrong JSON type or a reference has no usable name.
Result<std::vector<Reference>> collectReferences(const nlohmann::json& podTemplate);

}  // namespace restarter::core
