#pragma once
// The controller's Prometheus metrics (served on /metrics). Names and labels are part of the
// user-facing contract (docs/operations.md "Metrics").
//
// Owned by the controller (Controller::Impl) and shared by reference with every reconciler through
// ReconcileContext; the families lock themselves (obs/metrics.hpp), so any thread may update them.

#include "restarter/obs/metrics.hpp"

namespace restarter::controller {

struct Metrics {
  // `registry` must outlive this object.
  explicit Metrics(obs::Registry& registry);

  // restarter_controller_reconciles_total{controller, result}: result = success | error.
  obs::Family<obs::Counter>& reconciles;
  // restarter_controller_reconcile_reasons_total{controller, reason}: why the keys reconciled were
  // queued (queue_reason.hpp names the reasons); a key queued for two reasons counts under both.
  obs::Family<obs::Counter>& reconcileReasons;
  // restarter_controller_reconcile_errors_total{controller, error}: by error kind.
  obs::Family<obs::Counter>& errors;
  // restarter_controller_writes_total{resource, operation}: API writes made (apply, patch, evict,
  // create for Events, update for the Lease is not counted).
  obs::Family<obs::Counter>& writes;
  // restarter_controller_restarts_triggered_total{kind}: workload rollouts caused (in dry-run:
  // announced only, counted under restarter_controller_dry_run_restarts_total).
  obs::Family<obs::Counter>& restarts;
  obs::Family<obs::Counter>& dryRunRestarts;
  // restarter_controller_rollouts_held_total{kind}: rollouts held back while the previous one was
  // in progress (core::decideRollout, bounded by --min-rollout-interval), one per hold (however
  // many changes it merges and whatever it waits for), each announced by a RolloutHeld Event.
  obs::Family<obs::Counter>& rolloutsHeld;
  // restarter_controller_manual_pending{kind}: workloads in manual mode
  // (restarter.stackable.tech/rollout: manual) with a pending change the controller does not roll,
  // as this replica last reconciled them (core/rollout_mode.hpp).
  obs::Family<obs::Gauge>& manualPending;
  // restarter_controller_rollouts_held_by_window{kind}: workloads whose pending rollout waits for
  // its rollout window to open (core/rollout_window.hpp), as this replica last looked at them.
  obs::Family<obs::Gauge>& rolloutsHeldByWindow;
  // restarter_controller_rollouts_queued_total{kind}: rollouts queued for a slot
  // (--max-concurrent-rollouts), one per queued change, each announced by a RolloutQueued Event.
  obs::Family<obs::Counter>& rolloutsQueued;
  // restarter_controller_queued_rollouts: workloads waiting for a slot now;
  // restarter_controller_rollouts_in_progress: restarter's rollouts holding a slot now (both 0
  // without --max-concurrent-rollouts).
  obs::Family<obs::Gauge>& queuedRollouts;
  obs::Family<obs::Gauge>& rolloutsInProgress;
  // restarter_controller_content_unchanged_total{resource}: updates of a ConfigMap or Secret
  // (resource: configmaps, secrets) whose content digest did not change (same uid, new
  // resourceVersion): metadata-only changes. Counted only for the kinds whose content is read.
  obs::Family<obs::Counter>& contentUnchanged;
  // restarter_controller_evictions_total{result}: evicted | refused (PodDisruptionBudget) |
  // dry_run.
  obs::Family<obs::Counter>& evictions;
  // restarter_controller_roll_evictions_total{kind, result}: evictions of the OnDelete roll
  // (ondelete.hpp), kind = statefulset | daemonset, result = evicted | refused
  // (PodDisruptionBudget) | gone | dry_run.
  obs::Family<obs::Counter>& rollEvictions;
  // restarter_controller_outdated_pods{kind}: pods of labeled OnDelete workloads on an outdated
  // revision, as the roll last saw them (kind = statefulset | daemonset).
  obs::Family<obs::Gauge>& outdatedPods;
  // restarter_controller_queue_depth: keys waiting or being processed.
  obs::Family<obs::Gauge>& queueDepth;
  // restarter_controller_watch_restarts_total{resource}: list/watch failures after which a
  // reflector re-watched or relisted.
  obs::Family<obs::Counter>& watchRestarts;
  // restarter_controller_cache_objects{resource}: objects held by the caches (entries and
  // unloaded objects).
  obs::Family<obs::Gauge>& cacheObjects;
  // restarter_controller_cache_unloaded_objects{resource}: ConfigMaps and Secrets no workload
  // references, known only to exist (docs/architecture.md, "Memory that follows references").
  obs::Family<obs::Gauge>& cacheUnloadedObjects;
  // restarter_controller_reference_loads_total{resource, result}: reads of an unloaded object a
  // workload came to reference; result = loaded | absent | error.
  obs::Family<obs::Counter>& referenceLoads;
  // restarter_controller_leader: 1 while this replica works (leader, or no leader election).
  obs::Family<obs::Gauge>& leader;
  // restarter_controller_reconcile_duration_seconds{controller}.
  obs::Family<obs::Histogram>& reconcileDuration;
};

}  // namespace restarter::controller
