#pragma once
// The workload kinds restarter manages, in one table: the controller's watches, queue keys and
// field managers (lib/controller/src/workload.cpp), the webhook's accepted kinds and metric
// labels (lib/webhook/src/admission.cpp), its rule's resources (lib/webhook/src/mwc.cpp), and
// explain-restart's kinds (explain.hpp) all read it. A new kind is one row here.
// A row with `crd` set is a custom resource (Argo Rollouts' Rollout): restarter manages it only
// when asked to (--argo-rollouts) and watches it only while discovery finds it served
// (docs/architecture.md, "Custom resource kinds").

#include <array>
#include <string_view>

#include "restarter/core/constants.hpp"

namespace restarter::core {

enum class WorkloadKind { StatefulSet, Deployment, DaemonSet, Rollout };

struct ManagedKind {
  WorkloadKind kind;
  std::string_view name;          // the API kind, "StatefulSet"; the webhook's metric label
  std::string_view id;            // "statefulset": the controller's queue keys, logs and metrics
  std::string_view group;         // "apps"
  std::string_view version;       // "v1"
  std::string_view plural;        // "statefulsets": the API resource, the webhook rule's resource
  std::string_view fieldManager;  // the controller's server-side apply field manager (constants.hpp)
  // Whether the kind has an OnDelete update strategy: the controller then also runs its pod-by-pod
  // roll (lib/controller/include/restarter/controller/ondelete.hpp) for workloads that choose it.
  bool hasOnDelete;
  // Whether the kind is a custom resource: served only while its CustomResourceDefinition is
  // installed, and managed only with --argo-rollouts (its RBAC and webhook rule are optional too).
  bool crd = false;
};

inline constexpr std::array<ManagedKind, 4> kManagedKinds = {{
    {WorkloadKind::StatefulSet, "StatefulSet", "statefulset", "apps", "v1", "statefulsets",
     kStatefulSetFieldManager, true},
    {WorkloadKind::Deployment, "Deployment", "deployment", "apps", "v1", "deployments", kDeploymentFieldManager,
     false},
    {WorkloadKind::DaemonSet, "DaemonSet", "daemonset", "apps", "v1", "daemonsets", kDaemonSetFieldManager,
     true},
    // Argo Rollouts' Rollout: a Deployment's pod template (or, with spec.workloadRef, the
    // referenced Deployment's; rollout_source.hpp) and its own progress (rollout.hpp).
    {WorkloadKind::Rollout, "Rollout", "rollout", "argoproj.io", "v1alpha1", "rollouts", kRolloutFieldManager,
     false, true},
}};

// The row of `kind`.
constexpr const ManagedKind& managedKind(WorkloadKind kind) noexcept {
  for (const ManagedKind& row : kManagedKinds) {
    if (row.kind == kind) return row;
  }
  return kManagedKinds.front();
}

// Whether restarter manages `row` with Argo Rollouts support on (`argoRollouts`) or off.
constexpr bool kindEnabled(const ManagedKind& row, bool argoRollouts) noexcept {
  return !row.crd || argoRollouts;
}

// Whether the kind's revisions are ReplicaSets it owns (Deployment, Rollout), not
// ControllerRevisions (StatefulSet, DaemonSet): explain-restart's history reads them.
constexpr bool revisionsInReplicaSets(WorkloadKind kind) noexcept {
  return kind == WorkloadKind::Deployment || kind == WorkloadKind::Rollout;
}

// The row whose API kind is `name` ("StatefulSet"); nullptr when restarter does not manage it.
constexpr const ManagedKind* findManagedKind(std::string_view name) noexcept {
  for (const ManagedKind& row : kManagedKinds) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

}  // namespace restarter::core
