#pragma once
// Slimming: what the controller's caches keep of each object (docs/architecture.md, "Metadata
// only"). Each function runs as a reflector's transform or a store's entry maker, on an object no
// other thread sees yet; none holds state, so any thread may call any of them.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "restarter/cache/store.hpp"
#include "restarter/core/content.hpp"
#include "restarter/core/reloader.hpp"
#include "restarter/kube/digest_key.hpp"

namespace restarter::controller {

// What the caches keep of each object (everything else is dropped as it arrives, so memory scales
// with what the reconcilers read, not with object size: kubectl's last-applied-configuration
// annotation alone holds a ConfigMap's whole data):
//   ConfigMap/Secret: kind, apiVersion, metadata.{name, namespace, uid, resourceVersion}, the
//     ignore label and Reloader's match and ignore annotations (then stored as cache::ObjectMeta,
//     the annotations as two booleans);
//   workload: metadata.{name, namespace, uid, resourceVersion, generation, labels}, the
//     ignore-configmap./ignore-secret. annotations, the last-rollout, content-digests, ondelete,
//     rollout-priority and queued-since annotations, Reloader's workload annotations, spec.{template, replicas, selector, updateStrategy, minReadySeconds} and status
//     (a few numbers and names; the OnDelete roll reads them and is queued by their changes);
//   Pod: metadata.{name, namespace, uid, resourceVersion, deletionTimestamp} and the expires-at.
//     annotations.
// What is derived from the whole object before it is cut lives beside the cached copy, typed
// (cache::ObjectMeta's digests, cache::PackedTrim), never as fields of the copy's JSON.
void slimReferencedObject(nlohmann::json& object);
// Which digest cache::ObjectMeta::otherDigest holds under `key` (referencedEntry): its key id and
// scheme.
struct OtherDigestKind {
  std::string keyId;  // empty: h1 under the key the entry's contentDigest is under
  core::DigestScheme scheme = core::DigestScheme::H1;
};
OtherDigestKind otherDigestKind(const core::DigestKey& key);
// The workload slimmed as above; returns what it cut: the bytes of the metadata annotations it
// dropped, which the size check of a write still counts (core::WriteOptions).
cache::PackedTrim slimWorkload(nlohmann::json& object);
// The same, and with selection.reloaderAnnotations (the workloads are then listed without the
// label selector) a workload that core::workloadManagement does not opt in is cut down to
// apiVersion, kind and metadata.{name, namespace, uid, resourceVersion}: a stub (PackedTrim::stub)
// the reconcilers leave alone.
cache::PackedTrim slimWorkload(nlohmann::json& object, const core::SelectionOptions& selection);
void slimPod(nlohmann::json& object);

// The entry makers of the controller's caches (cache::BasicStore::setEntryMaker); nullopt when the
// object has no name.
//   referencedEntry: a ConfigMap/Secret slimmed (slimReferencedObject) as cache::ObjectMeta. With
//     `key` (its content is read; nullptr: metadata only) the content is hashed first:
//     contentDigest is its h2 digest under `key` (core::objectContentDigest), otherDigest the
//     digest otherDigestKind(key) names: during a rotation (`key` has a previous key) its h2
//     digest under the previous key, which compares the records written before the rotation;
//     otherwise its h1 digest under `key` (core::keyedContentDigest), which compares the records
//     releases before this one wrote; keyDigests its key digests (core::objectKeyDigests). None
//     when the content cannot be hashed, which then rolls at every version. The content itself is
//     dropped before the entry is kept.
//   workloadEntry: a workload slimmed (slimWorkload with `selection`) and packed, what slimming
//     cut in its PackedObject::trim.
std::optional<cache::ObjectMeta> referencedEntry(nlohmann::json&& object, core::RefKind kind,
                                                 const core::DigestKey* key);
std::optional<cache::PackedObject> workloadEntry(nlohmann::json&& object,
                                                 const core::SelectionOptions& selection);

}  // namespace restarter::controller
