#include "restarter/core/references.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>
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

bool isValidConfigMapKey(std::string_view key) noexcept {
  if (key.empty() || key.size() > kMaxObjectNameLength || key == "." || key == "..") return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
}

namespace {

// What one use reads of its object: every key, or `keys` (valid keys only).
struct KeyUse {
  bool all = true;
  std::set<std::string> keys;

  static KeyUse every() { return KeyUse{}; }
  static KeyUse some(std::set<std::string> keys) {
    std::erase_if(keys, [](const std::string& key) { return !isValidConfigMapKey(key); });
    return KeyUse{false, std::move(keys)};
  }
  void merge(const KeyUse& other) {
    all = all || other.all || keys.size() + other.keys.size() > kMaxReadKeys;
    if (all) {
      keys.clear();
      return;
    }
    keys.insert(other.keys.begin(), other.keys.end());
    if (keys.size() > kMaxReadKeys) {
      all = true;
      keys.clear();
    }
  }
};

// How the containers mount one volume: whole somewhere, or only through these subPaths' keys.
struct VolumeMounts {
  bool whole = false;
  std::set<std::string> subPathKeys;
};

// Accumulates references; one entry per (kind, name), optional only while every use is.
class ReferenceSet {
 public:
  // Reads `nameField` and `optional` from a reference object (e.g. a configMapKeyRef) at `path`;
  // the use reads `use` of the object.
  Status addFrom(RefKind kind, const json& ref, std::string_view nameField, std::string_view path,
                 const KeyUse& use) {
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
    auto [it, inserted] = uses_.try_emplace({kind, std::move(name->value())}, Use{*optional, use});
    if (!inserted) {
      it->second.optional = it->second.optional && *optional;
      it->second.reads.merge(use);
    }
    return okStatus();
  }

  // Sorted by (kind, name) because std::map orders its keys so.
  ReferenceWalk take() && {
    std::vector<Reference>& out = walk_.references;
    out.reserve(uses_.size());
    for (auto& [key, use] : uses_) {
      out.push_back(Reference{key.first, key.second, use.optional, use.reads.all,
                              std::vector<std::string>(use.reads.keys.begin(), use.reads.keys.end())});
    }
    return std::move(walk_);
  }

 private:
  struct Use {
    bool optional = false;
    KeyUse reads;
  };
  std::map<std::pair<RefKind, std::string>, Use> uses_;
  ReferenceWalk walk_;
};

// What a use names in `reads(ref)` reads, for a reference object `ref`.
using ReadsOf = KeyUse (*)(const json& ref);

KeyUse readsEveryKey(const json&) { return KeyUse::every(); }

// An env valueFrom's configMapKeyRef/secretKeyRef: its `key` (a ref without a string key, which
// the apiserver refuses, reads every key).
KeyUse readsKeyField(const json& ref) {
  const auto key = ref.find("key");
  if (key == ref.end() || !key->is_string()) return KeyUse::every();
  return KeyUse::some({key->get<std::string>()});
}

// A volume's or projected source's `items`: their keys; none listed, every key.
KeyUse readsItems(const json& ref) {
  const auto items = ref.find("items");
  if (items == ref.end() || !items->is_array() || items->empty()) return KeyUse::every();
  std::set<std::string> keys;
  for (const json& item : *items) {
    if (!item.is_object()) return KeyUse::every();
    const auto key = item.find("key");
    if (key == item.end() || !key->is_string()) return KeyUse::every();
    keys.insert(key->get<std::string>());
    if (keys.size() > kMaxReadKeys) return KeyUse::every();
  }
  return KeyUse::some(std::move(keys));
}

// If parent[field] is an object, adds the reference it holds, reading what `reads` says of it.
Status addIfPresent(ReferenceSet& refs, RefKind kind, const json& parent, std::string_view field,
                    std::string_view nameField, std::string_view path, ReadsOf reads = readsEveryKey) {
  auto ref = d::optionalObject(parent, field, path);
  if (!ref) return std::move(ref).error();
  if (*ref == nullptr) return okStatus();
  return refs.addFrom(kind, **ref, nameField, d::joinPath(path, field), reads(**ref));
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

// What a whole volume (no items) reads: every key if it is mounted whole (or through
// subPathExpr) or not at all, else the key each of its subPaths starts with.
KeyUse readsMountedVolume(const json& ref, const VolumeMounts* mounts) {
  KeyUse listed = readsItems(ref);
  if (!listed.all || mounts == nullptr || mounts->whole) return listed;
  std::set<std::string> keys = mounts->subPathKeys;
  if (keys.size() > kMaxReadKeys) return KeyUse::every();
  return KeyUse::some(std::move(keys));
}

// volumeMounts of every container and init container, by volume name. A malformed mount (the
// apiserver refuses those) counts as a whole one.
std::map<std::string, VolumeMounts> collectMounts(const json& podSpec) {
  std::map<std::string, VolumeMounts> out;
  for (const char* field : {"containers", "initContainers"}) {
    const auto containers = podSpec.find(field);
    if (containers == podSpec.end() || !containers->is_array()) continue;
    for (const json& container : *containers) {
      if (!container.is_object()) continue;
      const auto mounts = container.find("volumeMounts");
      if (mounts == container.end() || !mounts->is_array()) continue;
      for (const json& mount : *mounts) {
        if (!mount.is_object()) continue;
        const auto name = mount.find("name");
        if (name == mount.end() || !name->is_string()) continue;
        VolumeMounts& entry = out[name->get<std::string>()];
        const auto subPath = mount.find("subPath");
        const auto subPathExpr = mount.find("subPathExpr");
        const bool hasExpr = subPathExpr != mount.end() && subPathExpr->is_string() && !subPathExpr->empty();
        if (hasExpr || subPath == mount.end() || !subPath->is_string() || subPath->empty()) {
          entry.whole = true;
          continue;
        }
        const std::string& path = subPath->get_ref<const std::string&>();
        entry.subPathKeys.insert(path.substr(0, path.find('/')));
      }
    }
  }
  return out;
}

Status walkVolumes(ReferenceSet& refs, const json& podSpec, std::string_view path) {
  const std::map<std::string, VolumeMounts> mounts = collectMounts(podSpec);
  return forEachObject(podSpec, "volumes", path, [&](const json& volume, const std::string& vp) {
    const VolumeMounts* mounted = nullptr;
    if (const auto name = volume.find("name"); name != volume.end() && name->is_string()) {
      const auto it = mounts.find(name->get<std::string>());
      if (it != mounts.end()) mounted = &it->second;
    }
    for (const auto& [kind, field, nameField] : {std::tuple{RefKind::ConfigMap, "configMap", "name"},
                                                 std::tuple{RefKind::Secret, "secret", "secretName"}}) {
      auto ref = d::optionalObject(volume, field, vp);
      if (!ref) return Status(std::move(ref).error());
      if (*ref == nullptr) continue;
      if (Status s =
              refs.addFrom(kind, **ref, nameField, d::joinPath(vp, field), readsMountedVolume(**ref, mounted));
          !s) {
        return s;
      }
    }
    auto projected = d::optionalObject(volume, "projected", vp);
    if (!projected) return Status(std::move(projected).error());
    if (*projected == nullptr) return okStatus();
    const std::string pp = d::joinPath(vp, "projected");
    return forEachObject(**projected, "sources", pp, [&](const json& source, const std::string& sp) {
      if (Status s = addIfPresent(refs, RefKind::ConfigMap, source, "configMap", "name", sp, readsItems); !s) {
        return s;
      }
      return addIfPresent(refs, RefKind::Secret, source, "secret", "name", sp, readsItems);
    });
  });
}

Status walkContainer(ReferenceSet& refs, const json& container, std::string_view path) {
  Status envStatus = forEachObject(container, "env", path, [&](const json& env, const std::string& ep) {
    auto valueFrom = d::optionalObject(env, "valueFrom", ep);
    if (!valueFrom) return Status(std::move(valueFrom).error());
    if (*valueFrom == nullptr) return okStatus();
    const std::string vp = d::joinPath(ep, "valueFrom");
    if (Status s =
            addIfPresent(refs, RefKind::ConfigMap, **valueFrom, "configMapKeyRef", "name", vp, readsKeyField);
        !s) {
      return s;
    }
    return addIfPresent(refs, RefKind::Secret, **valueFrom, "secretKeyRef", "name", vp, readsKeyField);
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
