#include "restarter/controller/slim.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "restarter/cache/store.hpp"
#include "restarter/controller/workload.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/write_plan.hpp"

namespace restarter::controller {

using nlohmann::json;

namespace {

// Keeps only the fields of `object` (when it is an object) named in `keep`; drops every other.
void keepFields(json& object, const std::vector<const char*>& keep) {
  if (!object.is_object()) return;
  json kept = json::object();
  for (const char* name : keep) {
    auto it = object.find(name);
    if (it != object.end()) kept[name] = std::move(*it);
  }
  object = std::move(kept);
}

void keepPrefixed(json& map, const std::vector<std::string_view>& prefixes) {
  if (!map.is_object()) return;
  json kept = json::object();
  for (auto& [key, value] : map.items()) {
    for (std::string_view prefix : prefixes) {
      if (std::string_view(key).substr(0, prefix.size()) == prefix) {
        kept[key] = std::move(value);
        break;
      }
    }
  }
  map = std::move(kept);
}

void slimMetadata(json& object, const std::vector<const char*>& keep) {
  if (!object.is_object()) return;
  auto metadata = object.find("metadata");
  if (metadata == object.end()) return;
  keepFields(*metadata, keep);
}

}  // namespace

void slimReferencedObjectWithDigest(json& object, core::RefKind kind, const core::DigestKey& key) {
  if (!object.is_object()) return;
  std::optional<std::string> digest;
  std::optional<std::string> other;
  auto hashed = core::objectContentDigest(object, kind, key);
  auto second = key.previous() != nullptr ? core::objectContentDigest(object, kind, *key.previous())
                                          : core::keyedContentDigest(object, kind, key);
  std::optional<std::string> keys;
  if (hashed && second) {
    digest = core::formatDigest(*hashed);
    other = core::formatDigest(*second);
    if (auto perKey = core::objectKeyDigests(object, key)) keys = core::formatKeyDigests(*perKey);
  }
  slimReferencedObject(object);  // drops data, binaryData, type
  if (digest) object[cache::kContentDigestField] = std::move(*digest);
  if (other) object[cache::kOtherDigestField] = std::move(*other);
  if (keys) object[cache::kKeyDigestsField] = std::move(*keys);
}

OtherDigestKind otherDigestKind(const core::DigestKey& key) {
  if (key.previous() != nullptr) return OtherDigestKind{key.previous()->id(), core::DigestScheme::H2};
  return OtherDigestKind{key.id(), core::DigestScheme::H1};
}

void slimReferencedObject(json& object) {
  if (!object.is_object()) return;
  keepFields(object, {"apiVersion", "kind", "metadata"});
  slimMetadata(object, {"name", "namespace", "uid", "resourceVersion", "labels", "annotations"});
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return;
  if (auto labels = metadata->find("labels"); labels != metadata->end()) {
    keepPrefixed(*labels, {core::kIgnoreLabel});
  }
  if (auto annotations = metadata->find("annotations"); annotations != metadata->end()) {
    keepPrefixed(*annotations, {core::kReloaderMatchAnnotation, core::kReloaderIgnoreAnnotation});
    if (annotations->empty()) metadata->erase(annotations);
  }
}

void slimWorkload(json& object) {
  if (!object.is_object()) return;
  keepFields(object,
             {"apiVersion", "kind", "metadata", "spec", "status", core::kOmittedAnnotationsBytesField.data()});
  slimMetadata(object, {"name", "namespace", "uid", "resourceVersion", "generation", "labels", "annotations"});
  if (auto status = object.find("status"); status != object.end()) {
    // The OnDelete roll's inputs and triggers (ondelete.hpp): pods becoming Ready change these.
    // The rollout hold reads them too (core::rolloutProgressOf, with metadata.generation and
    // spec.replicas and spec.updateStrategy; an Argo Rollout's phase too).
    keepFields(*status, {"observedGeneration", "updateRevision", "currentRevision", "replicas", "readyReplicas",
                         "availableReplicas", "updatedReplicas", "currentReplicas", "desiredNumberScheduled",
                         "currentNumberScheduled", "numberReady", "numberAvailable", "numberUnavailable",
                         "updatedNumberScheduled", "phase"});
  }
  if (auto metadata = object.find("metadata"); metadata != object.end() && metadata->is_object()) {
    if (auto annotations = metadata->find("annotations"); annotations != metadata->end()) {
      // The size check of a write counts every metadata annotation (core/write_plan.hpp), also
      // those dropped here (a kubectl last-applied-configuration may hold most of the limit).
      const std::size_t before = core::metadataAnnotationsBytes(object);
      keepPrefixed(
          *annotations,
          {core::kIgnoreConfigMapAnnotationPrefix, core::kIgnoreSecretAnnotationPrefix,
           core::kLastRolloutAnnotation, core::kRolloutWindowAnnotation, core::kContentDigestsAnnotation,
           core::kBaselineAnnotation, core::kOnDeleteAnnotation, core::kRolloutModeAnnotation,
           core::kRolloutPriorityAnnotation, core::kQueuedSinceAnnotation, core::kReloaderAutoAnnotation,
           core::kReloaderConfigMapAutoAnnotation, core::kReloaderSecretAutoAnnotation,
           core::kReloaderSearchAnnotation, core::kReloaderConfigMapReloadAnnotation,
           core::kReloaderSecretReloadAnnotation, core::kReloaderConfigMapExcludeAnnotation,
           core::kReloaderSecretExcludeAnnotation});
      if (const std::size_t omitted = before - core::metadataAnnotationsBytes(object); omitted > 0)
        object[std::string(core::kOmittedAnnotationsBytesField)] = omitted;
    }
  }
  if (auto spec = object.find("spec"); spec != object.end()) {
    // workloadRef: an Argo Rollout's other source of its pod template (core/rollout_source.hpp).
    keepFields(*spec, {"template", "replicas", "selector", "updateStrategy", "minReadySeconds", "workloadRef"});
  }
}

void slimWorkload(json& object, const core::SelectionOptions& selection) {
  if (selection.reloaderAnnotations && object.is_object() &&
      core::workloadManagement(object, selection).by == core::ManagedBy::None) {
    keepFields(object, {"apiVersion", "kind", "metadata"});
    slimMetadata(object, {"name", "namespace", "uid", "resourceVersion"});
    object[kUnmanagedField] = true;
    return;
  }
  slimWorkload(object);
}

void slimPod(json& object) {
  if (!object.is_object()) return;
  keepFields(object, {"apiVersion", "kind", "metadata"});
  slimMetadata(object, {"name", "namespace", "uid", "resourceVersion", "deletionTimestamp", "annotations"});
  if (auto metadata = object.find("metadata"); metadata != object.end() && metadata->is_object()) {
    if (auto annotations = metadata->find("annotations"); annotations != metadata->end()) {
      keepPrefixed(*annotations, {core::kExpiresAtAnnotationPrefix});
    }
  }
}

}  // namespace restarter::controller
