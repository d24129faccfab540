#include "restarter/controller/metrics.hpp"

namespace restarter::controller {

Metrics::Metrics(obs::Registry& registry)
    : reconciles(registry.counter("restarter_controller_reconciles_total",
                                  "Reconciles run, by controller and result.", {"controller", "result"})),
      reconcileReasons(registry.counter("restarter_controller_reconcile_reasons_total",
                                        "Why the keys reconciled were queued, by controller and reason "
                                        "(a key queued for two reasons counts under both).",
                                        {"controller", "reason"})),
      errors(registry.counter("restarter_controller_reconcile_errors_total",
                              "Reconciles that failed, by controller and error kind.",
                              {"controller", "error"})),
      writes(registry.counter("restarter_controller_writes_total",
                              "API writes made, by resource and operation.", {"resource", "operation"})),
      restarts(registry.counter("restarter_controller_restarts_triggered_total",
                                "Workload rollouts triggered by an annotation change, by kind.", {"kind"})),
      dryRunRestarts(registry.counter("restarter_controller_dry_run_restarts_total",
                                      "Workload rollouts that --dry-run announced but did not make.",
                                      {"kind"})),
      rolloutsHeld(registry.counter("restarter_controller_rollouts_held_total",
                                    "Workload rollouts held back by --min-rollout-interval (one per "
                                    "hold, however many changes it merges), by kind.",
                                    {"kind"})),
      manualPending(registry.gauge("restarter_controller_manual_pending",
                                   "Workloads in manual mode (restarter.stackable.tech/rollout: manual) with a "
                                   "pending change, by kind.",
                                   {"kind"})),
      rolloutsHeldByWindow(registry.gauge("restarter_controller_rollouts_held_by_window",
                                          "Workloads whose pending rollout waits for its rollout window "
                                          "to open, by kind.",
                                          {"kind"})),
      rolloutsQueued(registry.counter("restarter_controller_rollouts_queued_total",
                                      "Workload rollouts queued for a slot by --max-concurrent-rollouts "
                                      "(one per queued change), by kind.",
                                      {"kind"})),
      queuedRollouts(registry.gauge("restarter_controller_queued_rollouts",
                                    "Workloads waiting for a rollout slot (--max-concurrent-rollouts).")),
      rolloutsInProgress(registry.gauge("restarter_controller_rollouts_in_progress",
                                        "restarter's rollouts in progress holding a slot "
                                        "(--max-concurrent-rollouts).")),
      contentUnchanged(registry.counter("restarter_controller_content_unchanged_total",
                                        "Updates of a ConfigMap or Secret whose content did not "
                                        "change (metadata-only), by resource; only for the kinds "
                                        "whose content is read (--content-aware).",
                                        {"resource"})),
      evictions(registry.counter("restarter_controller_evictions_total",
                                 "Pod evictions for expired credentials, by result "
                                 "(evicted, refused, dry_run).",
                                 {"result"})),
      rollEvictions(registry.counter("restarter_controller_roll_evictions_total",
                                     "Evictions of the OnDelete roll, by workload kind and result "
                                     "(evicted, refused, gone, dry_run).",
                                     {"kind", "result"})),
      outdatedPods(registry.gauge("restarter_controller_outdated_pods",
                                  "Pods of labeled OnDelete workloads on an outdated revision, by kind.",
                                  {"kind"})),
      queueDepth(registry.gauge("restarter_controller_queue_depth",
                                "Keys waiting in the work queue or being processed.")),
      watchRestarts(registry.counter("restarter_controller_watch_restarts_total",
                                     "List or watch failures after which a cache re-watched or "
                                     "relisted, by resource.",
                                     {"resource"})),
      cacheObjects(registry.gauge("restarter_controller_cache_objects",
                                  "Objects held in the caches, by resource.", {"resource"})),
      cacheUnloadedObjects(registry.gauge("restarter_controller_cache_unloaded_objects",
                                          "ConfigMaps and Secrets no workload references, cached only as "
                                          "existing, by resource.",
                                          {"resource"})),
      referenceLoads(registry.counter("restarter_controller_reference_loads_total",
                                      "Reads of a ConfigMap or Secret a workload came to reference while it "
                                      "was cached only as existing, by resource and result.",
                                      {"resource", "result"})),
      leader(registry.gauge("restarter_controller_leader",
                            "1 while this replica does the work (leader, or no leader election).")),
      reconcileDuration(registry.histogram("restarter_controller_reconcile_duration_seconds",
                                           "Time spent in one reconcile, by controller.", {"controller"})) {}

}  // namespace restarter::controller
