#pragma once
// The workload restarter: makes a labeled StatefulSet's, Deployment's or DaemonSet's pod template
// carry the annotations lib/core says it should (core::desiredAnnotations, the same function the
// webhook and explain-restart call), and announces every change it makes.
//
// reconcile(object):
//   1. the workload from the cache (absent: nothing to do);
//   2. desired annotations, looking referenced ConfigMaps/Secrets up in the metadata-only caches;
//   3. core::planWrite: no change, no write (a cluster migrated from commons-operator,
//      whose annotations are identical, sees zero writes; a reference whose new version has the
//      content its template's version had keeps that version, core::decideTrackedValue: same
//      content, logged once at debug level per state, no Event);
//      a write (rollout or baseline) that would make the pod template's or the workload's own
//      metadata annotations longer than the apiserver accepts (core/write_plan.hpp) is not
//      applied: the apiserver would refuse it, and the same state would be refused on every
//      retry. One log line and one Warning Event (reason AnnotationsTooLarge, naming the sizes and
//      the changes) per state: a reconcile of the same state (same workload uid, sizes and
//      changes) records nothing more, and nothing is requeued; the next change of the workload or
//      of a referenced object is reconciled afresh;
//   3b. no template change, but the baseline record (core/baseline.hpp) changes: a running
//      workload opted in, an object its pods need created after them, a baseline entry dropped.
//      One server-side apply of the metadata alone (the baseline, its content record, and every
//      field this manager owns sent again unchanged), which restarts nothing; a log line and a
//      Normal Event BaselineRecorded naming why (dry-run: the log line only, once per state);
//   3m. the gates of a template change, in order (docs/behaviour.md), the first being manual mode:
//      a workload annotated restarter.stackable.tech/rollout: manual is never rolled; the first
//      reconcile of each pending set logs it and records a Normal Event RolloutPending naming the
//      set, its changes and the `restarter roll` command (manualGate, manual_rollout.cpp), and
//      restarter_controller_manual_pending counts it. `restarter roll` makes step 4's write.
//      Not in dry-run (the dry run announces what would be rolled, as for any workload);
//   3a. core::decideRollout (docs/architecture.md, "Rollouts rate-limited per workload"): within
//      the floor after the workload's last-rollout annotation, or while that rollout is still in
//      progress by the workload's status (core::rolloutProgressOf; a write of ours the cache does
//      not show yet counts as in progress), at most until the minimum rollout interval has
//      passed, nothing is written; the key comes back at the end of the floor, when the status
//      change that finishes the rollout queues it (rolloutFinished, predicates.hpp), or at the latest after
//      core::kRolloutProgressRecheck, and then applies whatever is desired (every change made
//      meanwhile, merged). The first reconcile of each hold (one per last rollout) announces it:
//      a log line, restarter_controller_rollouts_held_total, and an Event (Normal, reason
//      RolloutHeld, naming what it waits for and the upper bound); later reconciles of the same
//      hold announce nothing, so a ConfigMap changing ten times a second costs one Event per
//      hold, not one per change.
//      Not in dry-run (no rollout is made, so there is nothing to space out);
//   4. otherwise one server-side apply with the kind's field manager and force, whose body holds
//      only metadata.name/namespace/uid (the uid makes the apply fail instead of re-creating a
//      deleted workload, as commons-operator does), the metadata annotations last-rollout (now)
//      and content-digests (the record of core::DesiredAnnotations::contentDigests; left out when
//      empty), the baseline ("" to empty one; left out when there is none) and
//      spec.template.metadata.annotations with the desired restarter-owned keys. Owned keys
//      no longer sent are removed by the server.
//      A restarter key that another manager owns (e.g. written by the webhook during CREATE, which
//      is attributed to the creator's manager) survives an apply; it is then removed by a JSON
//      Patch guarded by `test` operations;
//   5. one log line and one Event (reason Restarted) naming each changed object, its namespace
//      and the version change. In dry-run: the log line and an Event with reason WouldRestart,
//      no apply; the same plan is announced once, not on every reconcile.
//
// Thread-safety: reconcile() may run on several workers at once for different keys (the queue
// never hands one key to two workers).

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/cache/store.hpp"
#include "restarter/controller/announcements.hpp"
#include "restarter/controller/reconcile.hpp"
#include "restarter/controller/rollout_slots.hpp"
#include "restarter/controller/workload_resources.hpp"
#include "restarter/core/annotation_size.hpp"
#include "restarter/core/annotations.hpp"
#include "restarter/core/rollout.hpp"
#include "restarter/core/rollout_source.hpp"
#include "restarter/core/rollout_write.hpp"
#include "restarter/core/time.hpp"
#include "restarter/core/workload_kinds.hpp"
#include "restarter/core/write_plan.hpp"
#include "restarter/kube/resource.hpp"

namespace restarter::controller {

// What one server-side apply of the controller sends (see the file comment and
// core/rollout_write.hpp, which `restarter roll` shares).
using AppliedAnnotations = core::AppliedAnnotations;
nlohmann::json applyBody(const WorkloadResource& kind, const nlohmann::json& workload,
                         const AppliedAnnotations& sent);

// "configmap/a: <uid>/1 -> <uid>/2 (updated); secret/b: none -> <uid>/7 (added)".
std::string describeChanges(const std::vector<core::AnnotationChange>& changes);

// How often a Rollout whose workloadRef Deployment is not managed (missing, not labeled, or not yet
// in the cache) is looked at again: one cache lookup, logged only when the outcome changes.
inline constexpr milliseconds kWorkloadRefRecheck{30'000};

class WorkloadReconciler final : public Reconciler {
 public:
  WorkloadReconciler(WorkloadResource kind, CachesFor caches, ReconcileContext& context);

  // `object`: a workload of this kind. `stop` interrupts a wait for the write limiter (the write is
  // then not made and the key is retried).
  core::Result<Action> reconcile(const ObjectName& object, std::stop_token stop = {}) override;

  // The kind's name ("statefulset").
  const std::string& name() const override { return kind_.name; }
  const WorkloadResource& kind() const { return kind_; }

 private:
  struct LastWrite {
    std::string uid;
    std::string resourceVersionBefore;    // the cached resourceVersion the write was planned on
    core::AnnotationMap annotations;      // what was written
    std::string rolledAt;                 // the last-rollout annotation written ("" none: a baseline write)
    std::string contentDigests;           // the content-digests annotation written ("" none)
    std::optional<std::string> baseline;  // the baseline annotation written (nullopt: not sent)
  };

  // Step 1: the cached workload, decoded, with what its entry keeps beside it (the size of the
  // annotations the cache trimmed, which step 3 counts); nullopt when it is gone or not managed (a
  // stub).
  struct CachedWorkload {
    nlohmann::json object;
    cache::PackedTrim trim;
  };
  core::Result<std::optional<CachedWorkload>> managedWorkload(const cache::PackedStore& workloads,
                                                              const std::string& key) const;
  // Between steps 1 and 2: the cache may not show our last write yet (its watch event is on the
  // way): plan against what we wrote, not the stale copy, so that a second trigger in that gap
  // neither writes the same thing again nor announces the same restart twice. Overlays the
  // template keys, last-rollout, content record and baseline of `key`'s last write onto `workload`
  // while the cache still shows the resourceVersion that write was planned on; forgets the write
  // once it does not.
  void overlayLastWrite(const std::string& key, nlohmann::json& workload);
  // Step 3a, first gate (workload_window.cpp): the rollout window (kRolloutWindowAnnotation, else
  // --rollout-window). Closed: the change is held, announced once per opening and pending set
  // (a log line, a RolloutHeld Event), and the key looked at again at the opening, at the latest
  // after core::kRolloutWindowRecheck (a wall-clock step); the Action says so. Open, no window, or
  // an invalid annotation (a Warning Event once per value, no hold): nullopt, the next gate decides.
  std::optional<Action> windowGate(const nlohmann::json& workload, const std::string& key,
                                   const std::vector<core::AnnotationChange>& changes, core::TimePoint now);
  // The workload is no longer held by its window (rolled, nothing pending, gone): the gauge.
  void releaseWindowHold(const std::string& key);
  // Step 3a: may a template change roll now (core::decideRollout), judging a rollout of
  // ours the cache does not show yet as not finished.
  core::RolloutDecision rolloutGate(const nlohmann::json& workload, const std::string& key,
                                    core::TimePoint now);
  // The workload's rollout progress by its status, a rollout of ours the cache does not show yet
  // being unfinished.
  core::RolloutProgress progressOf(const nlohmann::json& workload, const std::string& key);
  // Step 1c (--max-concurrent-rollouts): tells RolloutSlots whether the workload's last rollout
  // holds a slot (core::rolloutSlotUntil), which frees one when it has finished.
  void observeSlot(const nlohmann::json& workload, const std::string& key, const ObjectName& object);
  // Step 3d (--max-concurrent-rollouts; docs/behaviour.md, "Fleet-wide rollout concurrency"):
  // after the hold, a slot among the fleet's rollouts (RolloutSlots::request). nullopt: roll now.
  // Otherwise the workload is queued: first queued, its queued-since annotation is written (a
  // metadata-only apply); once per queued change a log line, restarter_controller_rollouts_queued_total
  // and a RolloutQueued Event; an invalid priority annotation is one Warning Event
  // (InvalidRolloutPriority) per value and priority 0. The key comes back when a slot frees
  // (RolloutSlots wakes it) or after core::kRolloutProgressRecheck.
  core::Result<std::optional<Action>> queueGate(const nlohmann::json& workload, const std::string& key,
                                                const ObjectName& object,
                                                const std::vector<core::AnnotationChange>& changes,
                                                core::TimePoint now, std::stop_token stop);
  // One metadata-only apply that sets (or, nullopt, removes) the queued-since annotation, every
  // other field this manager owns sent again as the workload has it.
  core::Result<Action> writeQueuedSince(const nlohmann::json& workload, const std::string& key,
                                        std::optional<std::string> queuedSince, std::stop_token stop);
  // Steps 4 and 5: the write limiter, one apply of the template annotations and records, the
  // guarded removal of foreign leftovers, the restart metric and the Restarted Event.
  core::Result<Action> rollOut(const nlohmann::json& workload, const std::string& key,
                               const core::DesiredAnnotations& desired,
                               const std::vector<core::AnnotationChange>& changes, std::stop_token stop);
  core::Status announce(const nlohmann::json& workload, const std::string& key,
                        const std::vector<core::AnnotationChange>& changes);
  // One events.k8s.io Event regarding `workload`, through the controller's one recordEvent
  // (events.hpp). Every Event of this reconciler goes through here.
  core::Status recordEvent(const nlohmann::json& workload, const std::string& type, const std::string& reason,
                           const std::string& action, const std::string& note);
  // Steps 3b and 3c, one step: no template change, but the records change (`write` is
  // core::WriteKind::RecordOnly or ContentRecord); one metadata-only apply, which restarts nothing.
  //   RecordOnly (3b): the baseline record changes; a log line and a BaselineRecorded Event.
  //   ContentRecord (3c): no baseline change, but the content record holds entries not keyed with
  //     the controller's key, or lacks entries it can record now (desired.recordRewrite): the
  //     record as desired, all keyed (docs/architecture.md, "Keyed digests", "Content-aware
  //     restarts"); a log line, no Event.
  // Dry-run: the log line only, once per state.
  core::Result<Action> applyRecords(const nlohmann::json& workload, const std::string& key,
                                    const core::DesiredAnnotations& desired, core::WriteKind write,
                                    std::stop_token stop);
  // Gate 1 of a template change (manual_rollout.cpp; docs/behaviour.md, "Manual mode and roll"):
  // a workload annotated restarter.stackable.tech/rollout: manual is not rolled. The first
  // reconcile of each pending set (core::pendingSetDigest, once per set on this replica) logs it
  // and records a Normal Event RolloutPending naming the set, its changes and the `roll` command;
  // restarter_controller_manual_pending counts it. nullopt: not manual, go on to the next gate.
  std::optional<Action> manualGate(const nlohmann::json& workload, const std::string& key,
                                   const core::DesiredAnnotations& desired,
                                   const std::vector<core::AnnotationChange>& changes);
  // A rollout annotation that is neither manual nor auto: one log line and one Warning Event
  // InvalidRolloutMode per value (the workload is rolled as auto).
  void noteRolloutMode(const nlohmann::json& workload, const std::string& key);
  // Counts `key` among the manual workloads with a pending change, or no longer (and then forgets
  // the pending set announced: the same set pending again later is announced again).
  void setManualPending(const std::string& key, bool pending);
  // Step 3a: announces the hold once, and says when to look again.
  Action hold(const nlohmann::json& workload, const std::string& key,
              const std::vector<core::AnnotationChange>& changes, core::TimePoint lastRollout,
              const core::RolloutDecision& decision, core::TimePoint now);
  // Step 3's refusal of a change that would pass the annotations size limit.
  Action refuseTooLarge(const nlohmann::json& workload, const std::string& key, const core::WritePlan& plan);
  // Step 3's debug line for references kept at an older version, once per state.
  void logMetadataOnly(const std::string& key, const core::DesiredAnnotations& desired);
  // Step 1b: the log line of an Argo Rollout whose pod template is not its own (`source`: its
  // workloadRef, looked up in `deployments`, the labeled Deployments; or none), once per
  // generation and outcome. Nothing is written to such a Rollout. A workloadRef Deployment not
  // (yet) among the managed ones is looked for again after kWorkloadRefRecheck; else the next
  // change decides.
  Action noteTemplateSource(const nlohmann::json& workload, const std::string& key,
                            const core::PodTemplateSource& source, const cache::PackedStore* deployments);
  // Drops what is remembered of a workload that is gone or no longer managed.
  void forget(const std::string& key);
  core::Status removeForeignLeftovers(const nlohmann::json& applied, const core::DesiredAnnotations& desired);

  WorkloadResource kind_;
  CachesFor caches_;
  ReconcileContext& context_;
  std::mutex mutex_;
  std::map<std::string, LastWrite> lastWrites_;  // key -> the last write made
  std::set<std::string> manualPending_;          // manual workloads with a pending change
  // key -> the queued-since this reconciler wrote, until the cache shows it or a write removes it
  // (a second reconcile in between must not write a later time).
  std::map<std::string, core::TimePoint> queuedSinceWritten_;
  // By workload key, topics: "dry-run" (the last plan announced), "held" (the last rollout of the
  // hold announced), "queued" (the queued-since of the queued rollout announced), "priority" (the
  // invalid priority warned about), "too-large" (the refused state warned about), "metadata-only"
  // (the kept references logged), "manual" (the pending set announced), "rollout-mode" (the invalid
  // value warned about).
  Announcements announced_;
  std::set<std::string> windowHeld_;  // keys held by their rollout window (the gauge); under mutex_
};

}  // namespace restarter::controller
