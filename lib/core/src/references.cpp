#include "restarter/core/references.hpp"

#include <map>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "json_access.hpp"
#include "restarter/core/text.hpp"

namespace restarter::core {

using nlohmann::json;
namespace d = detail;

std::string_view refKindName(RefKind kind) noexcept {
  return kind == RefKind::ConfigMap ? "configmap" : "secret";
}

namespace {

bool isLowerAlphanumeric(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// One DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool isDns1123Label(std::string_view label) noexcept {
  if (label.empty() || !isLowerAlphanumeric(label.front()) || !isLowerAlphanumeric(label.back())) return false;
  for (char c : label) {
    if (!isLowerAlphanumeric(c) && c != '-') return false;
  }
  return true;
}

}  // namespace

bool isValidObjectName(std::string_view name) noexcept {
  if (name.empty() || name.size() > kMaxObjectNameLength) return false;
  // Labels separated by single dots: a leading, trailing or doubled dot makes an empty label.
  for (;;) {
    const auto dot = name.find('.');
    if (!isDns1123Label(name.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    name.remove_prefix(dot + 1);
  }
}

bool isValidNamespaceName(std::string_view name) noexcept {
  return name.size() <= kMaxNamespaceNameLength && isDns1123Label(name);
}

std::string shownName(std::string_view name) {
  if (name.size() <= kMaxObjectNameLength) return std::string(name);
  return truncateUtf8(name, kMaxObjectNameLength) + "...(" + std::to_string(name.size()) + " bytes)";
}

namespace {

// Accumulates references; one entry per (kind, name), optional only while every use is.
class ReferenceSet {
 public:
  // Reads `nameField` and `optional` from a reference object (e.g. a configMapKeyRef) at `path`.
  Status addFrom(RefKind kind, const json& ref, std::string_view nameField, std::string_view path) {
    auto name = d::optionalString(ref, nameField, path);
    if (!name) return std::move(name).error();
    if (!name->has_value() || name->value().empty()) {
      return makeError(ErrorKind::InvalidInput, d::joinPath(path, nameField) + ": a " +
                                                    std::string(refKindName(kind)) +
                                                    " reference needs a non-empty name");
    }
    auto optional = d::optionalBool(ref, "optional", path);
    if (!optional) return std::move(optional).error();
    if (!isValidObjectName(name->value())) {
      // Not a reference: no object can have this name (references.hpp).
      if (walk_.invalid.size() < kMaxInvalidShown) {
        walk_.invalid.push_back(InvalidReference{kind, d::joinPath(path, nameField), shownName(name->value())});
      }
      ++walk_.invalidUses;
      return okStatus();
    }
    auto [it, inserted] = uses_.try_emplace({kind, std::move(name->value())}, *optional);
    if (!inserted) it->second = it->second && *optional;
    return okStatus();
  }

  // Sorted by (kind, name) because std::map orders its keys so.
  ReferenceWalk take() && {
    std::vector<Reference>& out = walk_.references;
    out.reserve(uses_.size());
    for (auto& [key, optional] : uses_) out.push_back(Reference{key.first, key.second, optional});
    return std::move(walk_);
  }

 private:
  std::map<std::pair<RefKind, std::string>, bool> uses_;
  ReferenceWalk walk_;
};

// If parent[field] is an object, adds the reference it holds.
Status addIfPresent(ReferenceSet& refs, RefKind kind, const json& parent, std::string_view field,
                    std::string_view nameField, std::string_view path) {
  auto ref = d::optionalObject(parent, field, path);
  if (!ref) return std::move(ref).error();
  if (*ref == nullptr) return okStatus();
  return refs.addFrom(kind, **ref, nameField, d::joinPath(path, field));
}

// Applies `visit(element, elementPath)` to each element of parent[field] (an array of objects).
template <typename Visit>
Status forEachObject(const json& parent, std::string_view field, std::string_view path, Visit&& visit) {
  auto array = d::optionalArray(parent, field, path);
  if (!array) return std::move(array).error();
  if (*array == nullptr) return okStatus();
  const std::string arrayPath = d::joinPath(path, field);
  std::size_t index = 0;
  for (const json& element : **array) {
    const std::string elementPath = d::indexPath(arrayPath, index++);
    if (!element.is_object()) return d::wrongType(elementPath, "an object", element);
    if (Status s = visit(element, elementPath); !s) return s;
  }
  return okStatus();
}

Status walkVolumes(ReferenceSet& refs, const json& podSpec, std::string_view path) {
  return forEachObject(podSpec, "volumes", path, [&](const json& volume, const std::string& vp) {
    if (Status s = addIfPresent(refs, RefKind::ConfigMap, volume, "configMap", "name", vp); !s) {
      return s;
    }
    if (Status s = addIfPresent(refs, RefKind::Secret, volume, "secret", "secretName", vp); !s) {
      return s;
    }
    auto projected = d::optionalObject(volume, "projected", vp);
    if (!projected) return Status(std::move(projected).error());
    if (*projected == nullptr) return okStatus();
    const std::string pp = d::joinPath(vp, "projected");
    return forEachObject(**projected, "sources", pp, [&](const json& source, const std::string& sp) {
      if (Status s = addIfPresent(refs, RefKind::ConfigMap, source, "configMap", "name", sp); !s) {
        return s;
      }
      return addIfPresent(refs, RefKind::Secret, source, "secret", "name", sp);
    });
  });
}

Status walkContainer(ReferenceSet& refs, const json& container, std::string_view path) {
  Status envStatus = forEachObject(container, "env", path, [&](const json& env, const std::string& ep) {
    auto valueFrom = d::optionalObject(env, "valueFrom", ep);
    if (!valueFrom) return Status(std::move(valueFrom).error());
    if (*valueFrom == nullptr) return okStatus();
    const std::string vp = d::joinPath(ep, "valueFrom");
    if (Status s = addIfPresent(refs, RefKind::ConfigMap, **valueFrom, "configMapKeyRef", "name", vp); !s) {
      return s;
    }
    return addIfPresent(refs, RefKind::Secret, **valueFrom, "secretKeyRef", "name", vp);
  });
  if (!envStatus) return envStatus;
  return forEachObject(container, "envFrom", path, [&](const json& source, const std::string& sp) {
    if (Status s = addIfPresent(refs, RefKind::ConfigMap, source, "configMapRef", "name", sp); !s) {
      return s;
    }
    return addIfPresent(refs, RefKind::Secret, source, "secretRef", "name", sp);
  });
}

}  // namespace

Result<std::vector<Reference>> collectReferences(const json& podTemplate) {
  auto walk = walkReferences(podTemplate);
  if (!walk) return std::move(walk).error();
  return std::move(walk->references);
}

Result<ReferenceWalk> walkReferences(const json& podTemplate) {
  if (!podTemplate.is_object()) return d::wrongType("template", "an object", podTemplate);
  auto spec = d::optionalObject(podTemplate, "spec", "template");
  if (!spec) return std::move(spec).error();
  if (*spec == nullptr) return ReferenceWalk{};
  const json& podSpec = **spec;
  const std::string specPath = "template.spec";

  ReferenceSet refs;
  if (Status s = walkVolumes(refs, podSpec, specPath); !s) return std::move(s).error();
  for (std::string_view field : {"containers", "initContainers"}) {
    Status s = forEachObject(podSpec, field, specPath,
                             [&](const json& c, const std::string& cp) { return walkContainer(refs, c, cp); });
    if (!s) return std::move(s).error();
  }
  return std::move(refs).take();
}

}  // namespace restarter::core
