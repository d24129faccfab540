#include "restarter/controller/slim.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

std::optional<cache::ObjectMeta> referencedEntry(json&& object, core::RefKind kind,
                                                 const core::DigestKey* key) {
  std::optional<core::ContentDigest> digest;
  std::optional<core::ContentDigest> other;
  std::optional<core::KeyDigests> keys;
  if (key != nullptr && object.is_object()) {
    auto hashed = core::objectContentDigest(object, kind, *key);
    auto second = key->previous() != nullptr ? core::objectContentDigest(object, kind, *key->previous())
                                             : core::keyedContentDigest(object, kind, *key);
    if (hashed && second) {
      digest = *hashed;
      other = *second;
      keys = core::objectKeyDigests(object, *key);
    }
  }
  slimReferencedObject(object);  // drops data, binaryData, type
  std::optional<cache::ObjectMeta> meta = cache::objectMetaOf(object);
  if (!meta) return meta;
  meta->contentDigest = digest;
  meta->otherDigest = other;
  if (keys) {
    meta->keyDigests = std::move(*keys);
    meta->keyDigests.shrink_to_fit();
    meta->keyDigestsKnown = true;
  }
  return meta;
}

std::optional<cache::PackedObject> workloadEntry(json&& object, const core::SelectionOptions& selection) {
  const cache::PackedTrim trim = slimWorkload(object, selection);
  std::optional<cache::PackedObject> packed = cache::packObject(object);
  if (packed) packed->trim = trim;
  return packed;
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

cache::PackedTrim slimWorkload(json& object) {
  cache::PackedTrim trim;
  if (!object.is_object()) return trim;
  keepFields(object, {"apiVersion", "kind", "metadata", "spec", "status"});
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
      // At most 256 KiB (the apiserver's limit), so it fits (saturated all the same).
      trim.omittedAnnotationsBytes = static_cast<std::uint32_t>(std::min<std::size_t>(
          before - core::metadataAnnotationsBytes(object), std::numeric_limits<std::uint32_t>::max()));
    }
  }
  if (auto spec = object.find("spec"); spec != object.end()) {
    // workloadRef: an Argo Rollout's other source of its pod template (core/rollout_source.hpp).
    keepFields(*spec, {"template", "replicas", "selector", "updateStrategy", "minReadySeconds", "workloadRef"});
  }
  return trim;
}

cache::PackedTrim slimWorkload(json& object, const core::SelectionOptions& selection) {
  if (selection.reloaderAnnotations && object.is_object() &&
      core::workloadManagement(object, selection).by == core::ManagedBy::None) {
    keepFields(object, {"apiVersion", "kind", "metadata"});
    slimMetadata(object, {"name", "namespace", "uid", "resourceVersion"});
    return cache::PackedTrim{0, true};
  }
  return slimWorkload(object);
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
