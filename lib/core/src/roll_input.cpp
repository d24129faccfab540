#include "restarter/core/roll_input.hpp"

#include <charconv>
#include <cstdint>
#include <optional>

#include "json_access.hpp"
#include "restarter/base/rfc3339.hpp"
#include "restarter/core/constants.hpp"

namespace restarter::core {

using detail::joinPath;
using detail::optionalObject;
using detail::optionalString;
using detail::wrongType;
using nlohmann::json;

namespace {

// The object at a path of keys from `root` ("" path = root), nullptr when any step is absent.
Result<const json*> objectAt(const json& root, std::initializer_list<std::string_view> keys) {
  if (!root.is_object()) return wrongType("", "an object", root);
  const json* current = &root;
  std::string path;
  for (std::string_view key : keys) {
    auto next = optionalObject(*current, key, path);
    if (!next) return std::move(next).error();
    if (*next == nullptr) return static_cast<const json*>(nullptr);
    current = *next;
    path = joinPath(path, key);
  }
  return current;
}

// An integer field of `parent` (may be nullptr), `fallback` when absent or null.
Result<std::int64_t> optionalInteger(const json* parent, std::string_view key, std::string_view path,
                                     std::int64_t fallback) {
  if (parent == nullptr) return fallback;
  auto it = parent->find(key);
  if (it == parent->end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) return wrongType(joinPath(path, key), "an integer", *it);
  return it->get<std::int64_t>();
}

Result<std::string> stringOr(const json* parent, std::string_view key, std::string_view path) {
  if (parent == nullptr) return std::string();
  auto value = optionalString(*parent, key, path);
  if (!value) return std::move(value).error();
  return value->value_or(std::string());
}

int clampToInt(std::int64_t value) {
  if (value < 0) return 0;
  if (value > 1'000'000'000) return 1'000'000'000;
  return static_cast<int>(value);
}

// The numeric suffix after the last '-', -1 when there is none.
int ordinalOf(std::string_view name) {
  const auto dash = name.rfind('-');
  if (dash == std::string_view::npos || dash + 1 == name.size()) return -1;
  const std::string_view digits = name.substr(dash + 1);
  int value = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size() || value < 0) return -1;
  return value;
}

}  // namespace

Result<RollWorkload> rollWorkloadFromJson(const json& workload, WorkloadKind kind,
                                          std::string_view daemonSetRevision) {
  if (kind == WorkloadKind::Deployment) {
    return makeError(ErrorKind::InvalidInput, "a Deployment has no pod-by-pod roll");
  }
  RollWorkload out;
  out.kind = kind;
  auto metadata = objectAt(workload, {"metadata"});
  auto spec = objectAt(workload, {"spec"});
  auto status = objectAt(workload, {"status"});
  auto strategy = objectAt(workload, {"spec", "updateStrategy"});
  auto rolling = objectAt(workload, {"spec", "updateStrategy", "rollingUpdate"});
  auto annotations = objectAt(workload, {"metadata", "annotations"});
  for (const auto* part : {&metadata, &spec, &status, &strategy, &rolling, &annotations}) {
    if (!*part) return part->error();
  }
  auto type = stringOr(*strategy, "type", "spec.updateStrategy");
  if (!type) return std::move(type).error();
  out.strategy = *type == "OnDelete" ? UpdateStrategy::OnDelete : UpdateStrategy::RollingUpdate;
  auto partition = optionalInteger(*rolling, "partition", "spec.updateStrategy.rollingUpdate", 0);
  if (!partition) return std::move(partition).error();
  out.partition = clampToInt(*partition);
  auto optOut = stringOr(*annotations, kOnDeleteAnnotation, "metadata.annotations");
  if (!optOut) return std::move(optOut).error();
  out.manual = *optOut == kOnDeleteManualValue;

  auto generation = optionalInteger(*metadata, "generation", "metadata", 0);
  auto observed = optionalInteger(*status, "observedGeneration", "status", -1);
  if (!generation) return std::move(generation).error();
  if (!observed) return std::move(observed).error();
  out.statusCurrent = *observed >= *generation;
  auto minReady = optionalInteger(*spec, "minReadySeconds", "spec", 0);
  if (!minReady) return std::move(minReady).error();
  out.minReadySeconds = std::chrono::seconds(clampToInt(*minReady));

  if (kind == WorkloadKind::StatefulSet) {
    auto revision = stringOr(*status, "updateRevision", "status");
    auto replicas = optionalInteger(*spec, "replicas", "spec", 1);
    if (!revision) return std::move(revision).error();
    if (!replicas) return std::move(replicas).error();
    out.updateRevision = *revision;
    out.desired = clampToInt(*replicas);
  } else {
    auto desired = optionalInteger(*status, "desiredNumberScheduled", "status", 0);
    if (!desired) return std::move(desired).error();
    out.updateRevision = std::string(daemonSetRevision);
    out.desired = clampToInt(*desired);
  }
  return out;
}

Result<RollPod> rollPodFromJson(const json& pod, WorkloadKind kind) {
  RollPod out;
  auto metadata = objectAt(pod, {"metadata"});
  auto labels = objectAt(pod, {"metadata", "labels"});
  auto spec = objectAt(pod, {"spec"});
  auto status = objectAt(pod, {"status"});
  for (const auto* part : {&metadata, &labels, &spec, &status}) {
    if (!*part) return part->error();
  }
  auto name = stringOr(*metadata, "name", "metadata");
  auto revision = stringOr(*labels, kRevisionHashLabel, "metadata.labels");
  auto node = stringOr(*spec, "nodeName", "spec");
  auto deletion = stringOr(*metadata, "deletionTimestamp", "metadata");
  auto created = stringOr(*metadata, "creationTimestamp", "metadata");
  for (const auto* part : {&name, &revision, &node, &deletion, &created}) {
    if (!*part) return part->error();
  }
  if (name->empty()) return makeError(ErrorKind::InvalidInput, "metadata.name: missing");
  out.name = *name;
  out.revision = *revision;
  out.node = *node;
  out.terminating = !deletion->empty();
  out.ordinal = kind == WorkloadKind::StatefulSet ? ordinalOf(out.name) : -1;

  std::optional<TimePoint> transition;
  if (*status != nullptr) {
    auto conditions = detail::optionalArray(**status, "conditions", "status");
    if (!conditions) return std::move(conditions).error();
    if (*conditions != nullptr) {
      for (const json& condition : **conditions) {
        if (!condition.is_object()) return wrongType("status.conditions[]", "an object", condition);
        auto type = stringOr(&condition, "type", "status.conditions[]");
        auto value = stringOr(&condition, "status", "status.conditions[]");
        auto at = stringOr(&condition, "lastTransitionTime", "status.conditions[]");
        for (const auto* part : {&type, &value, &at}) {
          if (!*part) return part->error();
        }
        if (*type != "Ready") continue;
        out.ready = *value == "True";
        if (auto parsed = base::parseRfc3339(*at)) transition = *parsed;
      }
    }
  }
  if (transition) {
    out.since = transition;
  } else if (!out.ready) {
    if (auto parsed = base::parseRfc3339(*created)) out.since = *parsed;
  }
  return out;
}

std::string podSelector(const json& workload) {
  std::string out;
  const json::json_pointer pointer("/spec/selector/matchLabels");
  if (!workload.is_object() || !workload.contains(pointer)) return out;
  const json& matchLabels = workload.at(pointer);
  if (!matchLabels.is_object()) return out;
  for (const auto& [key, value] : matchLabels.items()) {
    if (!value.is_string()) continue;
    out += (out.empty() ? "" : ",") + key + "=" + value.get<std::string>();
  }
  return out;
}

bool controlledBy(const json& object, std::string_view uid) {
  if (uid.empty() || !object.is_object()) return false;
  const json::json_pointer pointer("/metadata/ownerReferences");
  if (!object.contains(pointer)) return false;
  const json& owners = object.at(pointer);
  if (!owners.is_array()) return false;
  for (const json& owner : owners) {
    if (!owner.is_object()) continue;
    auto id = owner.find("uid");
    auto controller = owner.find("controller");
    if (id != owner.end() && id->is_string() && *id == uid && controller != owner.end() &&
        controller->is_boolean() && controller->get<bool>()) {
      return true;
    }
  }
  return false;
}

std::string daemonSetRevisionHash(const std::vector<json>& revisions, std::string_view uid) {
  std::int64_t newest = -1;
  std::string hash;
  for (const json& revision : revisions) {
    if (!revision.is_object() || !controlledBy(revision, uid)) continue;
    auto number = revision.find("revision");
    if (number == revision.end() || !number->is_number_integer()) continue;
    const std::int64_t value = number->get<std::int64_t>();
    if (value <= newest) continue;
    const json::json_pointer label("/metadata/labels/controller-revision-hash");
    if (!revision.contains(label) || !revision.at(label).is_string()) continue;
    newest = value;
    hash = revision.at(label).get<std::string>();
  }
  return hash;
}

}  // namespace restarter::core
