#pragma once
// The workloads the controller manages as it reads them from its caches: the table of kinds
// (core::kManagedKinds as resources), the reference indexes of a workload store, and the lookup of
// referenced ConfigMaps and Secrets in the metadata-only caches (docs/architecture.md, "Watches and dispatch", "Compact cache entries").
// The reconcilers (workload.hpp, ondelete.hpp) and the wiring (controller_wiring.cpp) share them.
//
// Thread-safety: pure functions and immutable tables; a lookup reads stores that are thread-safe.

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "restarter/cache/store.hpp"
#include "restarter/controller/slim.hpp"
#include "restarter/core/annotations.hpp"
#include "restarter/core/reloader.hpp"
#include "restarter/core/workload_kinds.hpp"
#include "restarter/kube/resource.hpp"

namespace restarter::controller {

// One of core::kManagedKinds (core/workload_kinds.hpp) as the controller uses it. Named apart from
// core::WorkloadKind, the enum it carries.
struct WorkloadResource {
  std::string name;  // "statefulset", "deployment", "daemonset": queue keys, logs, metrics
  kube::ResourceRef resource;
  std::string fieldManager;
  core::WorkloadKind coreKind = core::WorkloadKind::StatefulSet;  // its row in core::kManagedKinds
  bool hasOnDelete = false;  // the row's hasOnDelete: the OnDelete roll (ondelete.hpp) runs for it
  bool crd = false;          // the row's crd: watched only while discovery finds it served
};

// Every row of core::kManagedKinds, in its order: StatefulSet, Deployment, DaemonSet, Rollout.
const std::vector<WorkloadResource>& workloadResources();
// The rows the controller manages: every kind but the custom resources unless `argoRollouts`.
std::vector<WorkloadResource> enabledWorkloadResources(bool argoRollouts);

// Index names on a workload store: the "<namespace>/<name>" of each ConfigMap (Secret) its pod
// template references, and with Reloader's annotations the reload lists' names
// (core::trackedReferences).
inline constexpr const char* kConfigMapIndex = "configmap";
inline constexpr const char* kSecretIndex = "secret";
// The index function for `kind` (core::RefKind::ConfigMap -> kConfigMapIndex values, ...). A
// template that cannot be read indexes nothing.
cache::IndexFunc referenceIndex(core::RefKind kind, const core::SelectionOptions& selection = {});
// The same over packed workloads (the controller's caches).
cache::PackedStore::IndexFunc packedReferenceIndex(core::RefKind kind,
                                                   const core::SelectionOptions& selection = {});

// Reads a ConfigMap or Secret its cache holds only as existing (cache::MetaStore::find says
// unloaded) from the API into the cache: its entry, nullptr when it is gone, or why it could not
// be read (docs/architecture.md, "Memory that follows references"). Controller::Impl's
// loadReferenced; any worker thread.
using ReferenceLoader = std::function<core::Result<cache::MetaPtr>(
    core::RefKind kind, std::string_view namespace_, std::string_view name, std::stop_token stop)>;

// Where one namespace's (or, with an empty namespace, every namespace's) objects are cached.
struct WorkloadCaches {
  const cache::PackedStore* workloads = nullptr;  // of the reconciler's kind
  const cache::MetaStore* configMaps = nullptr;
  const cache::MetaStore* secrets = nullptr;
  // The labeled Deployments (a Rollout's workloadRef names one; core/rollout_source.hpp);
  // nullptr where the reconciler needs none.
  const cache::PackedStore* deployments = nullptr;
  // Reads what configMaps and secrets hold unloaded; empty where nothing is held so.
  ReferenceLoader load = nullptr;
};
using CachesFor = std::function<std::optional<WorkloadCaches>(std::string_view namespace_)>;

// Object states from the metadata-only caches: nullptr -> Absent, an unloaded object -> read
// through `load` (Unknown when there is none or the read fails), a store not yet synced or an
// entry without uid or resourceVersion -> Unknown; the ignore label as core::hasIgnoreLabel reads it,
// Reloader's match and ignore annotations as the entry's booleans; an entry's content digests as
// the store keeps them: h2 under the key `digestKeyId` names, and the other digest as `other` says
// (referencedEntry, otherDigestKind; its empty key id: h1 under `digestKeyId`).
core::ObjectLookup cacheLookup(const cache::MetaStore& configMaps, const cache::MetaStore& secrets,
                               std::string namespace_, std::string digestKeyId = {}, OtherDigestKind other = {},
                               ReferenceLoader load = {}, std::stop_token stop = {});

}  // namespace restarter::controller
