#pragma once
// The fleet view of `restarter status`, one row per labeled workload (docs/architecture.md,
// "status").
//
// Each row is derived from the workload's explanation (explanation.hpp), so status and
// explain-restart can never disagree: readStatusRows reads each labeled workload's explanation
// input exactly as explain-restart does and condenses it; the rest are pure functions.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/inspect/explain.hpp"
#include "restarter/inspect/explanation.hpp"
#include "restarter/kube/client.hpp"

namespace restarter::inspect {

// One labeled workload, condensed.
struct WorkloadStatus {
  core::WorkloadKind kind = core::WorkloadKind::StatefulSet;
  std::string namespace_;
  std::string name;
  // Pods: what the workload wants, how many are Ready (from its status) and how many run its
  // current revision (from the explanation's revisions: pods of the revision marked current).
  std::int64_t desired = 0;
  std::int64_t ready = 0;
  std::int64_t current = 0;
  // Revisions with at least one restarter annotation change among their causes: the restarts
  // restarter recorded (revision 1, the creation, never counts).
  std::int64_t restarts = 0;
  // The explanation's pending state; with RestartDue the held-until time when the controller
  // holds it (the upper bound while it waits for the previous rollout), and what it waits for
  // ("2 of 3 pods updated"; none when only the floor holds it).
  PendingState pending = PendingState::Unknown;
  std::optional<std::string> heldUntil;
  // When a pending restart waits for the rollout window: its next opening (RFC 3339).
  std::optional<std::string> heldByWindowUntil;
  std::optional<std::string> heldFor;
  // A restart due on a workload in manual mode (restarter.stackable.tech/rollout: manual): the
  // command that rolls it (the explanation's pending.mode.rollCommand); the controller never does.
  std::optional<std::string> rollCommand;
  // Waiting in the controller's rollout queue (--max-concurrent-rollouts): the queued rollouts
  // ahead of it (the explanation's pending.queue.ahead).
  std::optional<std::int64_t> queuedAhead;
  std::vector<std::string> pendingChanges;  // "configmap/app: u/1 -> u/2 (updated)", ...
  std::string pendingReason;                // why pending is unknown or refused-too-large
  // "configmap/app: deleted: running pods keep their copy, no restart", ...: the explanation's
  // references whose noRestart is set (docs/behaviour.md, "Restart only when pods need it").
  std::vector<std::string> noRestart;
  core::FirstRolloutVerdict firstRollout = core::FirstRolloutVerdict::Unknown;
  std::optional<std::string> lastRollout;  // RFC 3339, restarter's last rollout of it
  // The explanation's roll of an OnDelete StatefulSet or DaemonSet (its state, reason and the
  // budget a rolling eviction waits for); none for other workloads, where Kubernetes rolls.
  std::optional<Roll> roll;
  // The explanation's managedBy.reason: what opts it in (the label, or Reloader's annotations).
  std::string managedBy;
};

// The row of one explanation (explain()) and the live workload object it was made from (for the
// pod counts in its status; any JSON shape is tolerated).
WorkloadStatus statusFromExplanation(const Explanation& explanation, const nlohmann::json& workload);

// A row for a workload whose explanation could not be read: pending Unknown with the reason.
WorkloadStatus unreadableStatus(core::WorkloadKind kind, const std::string& namespace_, const std::string& name,
                                const std::string& reason);

// Sorted so that what needs attention comes first: pending unknown, then a restart due, a write
// refused as too large or a paused roll, then an extra first-rollout restart, then pods not all Ready or not all on the
// current revision; within each group by namespace, kind and name.
void sortByAttention(std::vector<WorkloadStatus>& rows);

// Whether --fail-if-pending fails on this row: a restart due (held, manual or not), a write refused
// as too large, or an unknown state.
bool pendingOrUnknown(const WorkloadStatus& row);

// The document of `-o json` / `-o yaml`: apiVersion restarter.stackable.tech/v1alpha1, kind
// WorkloadStatusList, items in the given order (schema: cli/schema/workload-status-list.schema.json).
nlohmann::ordered_json statusDocument(const std::vector<WorkloadStatus>& rows);

// The table: NAMESPACE (only with allNamespaces), WORKLOAD, READY, CURRENT, RESTARTS, PENDING,
// FIRST-ROLLOUT, ROLL (OnDelete workloads; "-" for the others); wide adds LAST-ROLLOUT and the
// pending changes (or the paused roll's reason). "No labeled workloads found ..."
// when there are none.
std::string renderStatusTable(const std::vector<WorkloadStatus>& rows, bool allNamespaces, bool wide,
                              const std::string& scope);

// The label selector that lists the workloads status shows: restarter's label (none with
// Reloader's annotations, which are not labels: core::workloadManagement filters then, as the
// controller does), and `more` when not empty.
std::string statusSelector(const core::SelectionOptions& selection, const std::string& more);

// The unsorted rows of every StatefulSet, Deployment and DaemonSet in `namespace_` ("" all)
// matching `labelSelector` that `judgement.selection` manages, each read with readExplainInput; a
// workload whose input cannot be read is an unreadableStatus row, one deleted since the list none.
// A failed list is its error, the message starting "listing <plural>: ".
core::Result<std::vector<WorkloadStatus>> readStatusRows(kube::Client& client, const std::string& namespace_,
                                                         const std::string& labelSelector,
                                                         const JudgementOptions& judgement,
                                                         const core::DigestKey* digestKey);

}  // namespace restarter::inspect
