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
// required use makes the pod depend on the object).
//
// What each use reads of the object (docs/behaviour.md, "What a reference reads"): the key of an
// env `valueFrom` ref; the `items` keys of a volume or a projected source that lists items; every
// key for `envFrom`, a projected source without items, and a volume without items that a
// container mounts whole (or through `subPathExpr`, or that no container mounts); a volume
// without items mounted only through `subPath` reads the key each subPath starts with (the
// volume's files are named by its keys). A reference reads every key if one of its uses does, else
// the union. A key that is not a valid ConfigMap key (apimachinery's IsConfigMapKey) can never be
// present, so it reads nothing; more than kMaxReadKeys keys read count as every key. A ConfigMap and a Secret of the same name are
// two references. The result is sorted by (kind, name): same template, same output.
//
// Names are checked with Kubernetes' own rule before anything else sees them
// (docs/architecture.md, "Fresh lookups"): ConfigMap and Secret names are DNS-1123 subdomains (at
// most 253 characters, dot-separated labels of lowercase alphanumerics and '-', each starting and
// ending alphanumeric), which the apiserver enforces when it stores one. A name that breaks the
// rule can never name an existing object, so it can never change and there is nothing to track:
// such a use is not a reference (never looked up, never annotated, never logged whole; `.` and `..`
// would otherwise be path segments of a lookup URL). A missing or empty name is still an error:
// the apiserver refuses such a template.

#include <cstddef>
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
  // Whether the uses read every key of the object; if not, `keys` (sorted, unique) are all they read.
  bool allKeys = true;
  std::vector<std::string> keys{};

  friend bool operator==(const Reference&, const Reference&) = default;
};

// A ConfigMap's or Secret's name is a DNS-1123 subdomain (apimachinery's IsDNS1123Subdomain).
inline constexpr std::size_t kMaxObjectNameLength = 253;
bool isValidObjectName(std::string_view name) noexcept;
// A namespace's name is a DNS-1123 label (apimachinery's IsDNS1123Label): at most 63 characters.
inline constexpr std::size_t kMaxNamespaceNameLength = 63;
bool isValidNamespaceName(std::string_view name) noexcept;
// `name` for a log line or a message: as is up to kMaxObjectNameLength bytes, else cut there (never
// inside a UTF-8 character) and marked with its full length, so no input makes a long line.
std::string shownName(std::string_view name);

// A use of an invalid name (isValidObjectName), for a warning or an explanation.
struct InvalidReference {
  RefKind kind = RefKind::ConfigMap;
  std::string path;  // the JSON path of the name field
  std::string name;  // shownName of the name
};

struct ReferenceWalk {
  std::vector<Reference> references;      // as collectReferences
  std::vector<InvalidReference> invalid;  // the first kMaxInvalidShown uses of an invalid name
  std::size_t invalidUses = 0;            // all of them
};
inline constexpr std::size_t kMaxInvalidShown = 8;
// More keys read than this by one reference count as every key (the record stays one digest).
inline constexpr std::size_t kMaxReadKeys = 256;
// A ConfigMap (or Secret) key: at most 253 characters of [-._a-zA-Z0-9], not "." or "..".
bool isValidConfigMapKey(std::string_view key) noexcept;

// Walks a PodTemplateSpec (the JSON of `spec.template` of a workload). A template without a spec,
// volumes or containers simply has fewer references. Errors (InvalidInput, naming the JSON path)
// when a field has the wrong JSON type or a reference has no usable name.
Result<std::vector<Reference>> collectReferences(const nlohmann::json& podTemplate);
// The same walk, also saying which uses were dropped for an invalid name.
Result<ReferenceWalk> walkReferences(const nlohmann::json& podTemplate);

}  // namespace restarter::core
