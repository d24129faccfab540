#pragma once
// Slimming: what the controller's caches keep of each object (docs/architecture.md, "Metadata
// only"). Each function runs as a reflector's transform, on that reflector's thread, on an object
// no other thread sees yet; none holds state, so any thread may call any of them.

#include <string>

#include <nlohmann/json.hpp>

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
//     (a few numbers and names; the OnDelete roll reads them and is queued by their changes),
//     and core::kOmittedAnnotationsBytesField: the bytes of the metadata annotations dropped, which
//     the size check of a write still counts (core/write_plan.hpp);
//   Pod: metadata.{name, namespace, uid, resourceVersion, deletionTimestamp} and the expires-at.
//     annotations.
//   a ConfigMap/Secret whose content is read: the same, plus cache::kContentDigestField with the
//     h2 digest of the object under `key` (core::objectContentDigest) and cache::kOtherDigestField
//     with the digest otherDigestKind(key) names: during a rotation (`key` has a previous key) its
//     h2 digest under the previous key, which compares the records written before the rotation;
//     otherwise its h1 digest under `key` (core::keyedContentDigest), which compares the records
//     releases before this one wrote (both left out when the content cannot be hashed,
//     which then rolls at every version). The content itself is dropped here, on the reflector's
//     thread, before the object reaches the store.
void slimReferencedObject(nlohmann::json& object);
void slimReferencedObjectWithDigest(nlohmann::json& object, core::RefKind kind, const core::DigestKey& key);
// Which digest cache::kOtherDigestField holds under `key` (see above): its key id and scheme.
struct OtherDigestKind {
  std::string keyId;  // empty: h1 under the key the entry's contentDigest is under
  core::DigestScheme scheme = core::DigestScheme::H1;
};
OtherDigestKind otherDigestKind(const core::DigestKey& key);
void slimWorkload(nlohmann::json& object);
// The same, and with selection.reloaderAnnotations (the workloads are then listed without the
// label selector) a workload that core::workloadManagement does not opt in is cut down to
// apiVersion, kind, metadata.{name, namespace, uid, resourceVersion} and kUnmanagedField.
void slimWorkload(nlohmann::json& object, const core::SelectionOptions& selection);
void slimPod(nlohmann::json& object);

}  // namespace restarter::controller
