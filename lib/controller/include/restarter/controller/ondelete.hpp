#pragma once
// The OnDelete roll: for a labeled StatefulSet or DaemonSet with `updateStrategy: OnDelete`, whose
// template change Kubernetes does not roll, restarter replaces the outdated pods itself, one at a
// time (docs/architecture.md, "Rolls from the cluster"). core::decideRoll decides; this file reads
// the cluster and acts.
//
// reconcile(object), a workload of the roller's kind, in three steps:
//   read (1, 2):
//   1. the workload from the cache (absent: forget it). Not OnDelete: nothing to do, no request;
//   2. fresh from the API, never from memory or a cache: the workload's pods (by its selector,
//      controlled by its uid; full objects, for their Ready condition) and, for a DaemonSet, its
//      ControllerRevisions (the newest is the update revision). So a restarted controller or a
//      new leader resumes where the cluster stands and never evicts a pod twice: an evicted pod
//      is terminating, missing, or replaced on the update revision;
//   decide (3), pure:
//   3. core::decideRoll, and from it the next step (nextRollStep); the gauge of outdated pods is
//      set for the workload;
//   act (4):
//   4. evict: through the Evictor every OnDelete roller shares (uid precondition, PDB refusals retried with backoff,
//      one EvictionBlocked Warning per pod per interval), then a Normal Event `Evicted` on the pod
//      naming the revision change and a log line. In dry-run: a Normal Event `WouldEvict` and a
//      log line once per pod and revision, no eviction;
//      paused: one Warning Event `RollPaused` on the workload naming the pod, once per pod and
//      update revision; nothing is evicted;
//      waiting: look again at the decision's recheck time, and at most after kRollPoll (the
//      workload's status updates, which queue it, are the usual trigger; the poll covers a
//      status that does not change, e.g. a DaemonSet pod becoming Ready for minReadySeconds).
//
// Thread-safety: as WorkloadReconciler (one lock guards the announcement and gauge records).

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>

#include "restarter/cache/store.hpp"
#include "restarter/controller/announcements.hpp"
#include "restarter/controller/eviction.hpp"
#include "restarter/controller/reconcile.hpp"
#include "restarter/controller/workload.hpp"
#include "restarter/core/explain.hpp"
#include "restarter/core/roll.hpp"

namespace restarter::controller {

// serve-controller --ondelete-ready-timeout's default (core/roll.hpp).
inline constexpr std::chrono::seconds kDefaultOnDeleteReadyTimeout = core::kDefaultReadyTimeout;
// The longest wait between two looks at a rolling workload.
inline constexpr milliseconds kRollPoll{10'000};

// What the roller does next with a workload, from core::decideRoll's decision (the decide step).
struct RollStep {
  enum class Kind {
    AwaitChange,     // not rolling (done, stale, manual, ...): nothing until the workload changes
    Pause,           // Paused: announce it (RollPaused), look again after `after`
    Wait,            // Rolling, nothing to evict yet: look again after `after`
    Evict,           // evict decision.evict
    AnnounceDryRun,  // dry run: announce the eviction of every decision.outdated pod in roll order, then
                     // nothing until the workload changes
  };
  Kind kind = Kind::AwaitChange;
  core::RollDecision decision;
  milliseconds after{0};  // Pause, Wait
};

// The next step: Paused: Pause after kRollPoll; not Rolling: AwaitChange; Rolling with no pod to
// evict: Wait until decision.recheckAt (at least 1 ms) and at most kRollPoll; else Evict, or in a
// dry run AnnounceDryRun (nothing is evicted, so the roll would never get past its first pod).
RollStep nextRollStep(core::RollDecision decision, core::TimePoint now, bool dryRun);

// The workloads of the roller's kind in a namespace (nullptr: not watched).
using WorkloadStoreFor = std::function<const cache::PackedStore*(std::string_view namespace_)>;

class OnDeleteRoller final : public Reconciler {
 public:
  // `kind`: the StatefulSet or DaemonSet WorkloadResource (queue keys, metrics, Events).
  OnDeleteRoller(WorkloadResource kind, WorkloadStoreFor workloads, ReconcileContext& context, Evictor& evictor,
                 std::chrono::seconds readyTimeout);

  core::Result<Action> reconcile(const ObjectName& object, std::stop_token stop = {}) override;

  // "ondelete-" and the kind's name ("ondelete-statefulset"): the roll's label in metrics and logs.
  const std::string& name() const override { return name_; }

 private:
  struct Observed;  // what the read step found (ondelete.cpp)

  // The read step (1, 2): nullopt where the workload is not restarter's to roll (absent, or not
  // OnDelete).
  core::Result<std::optional<Observed>> read(const ObjectName& object);
  // The DaemonSet's revisions carry its pods' labels, so its selector finds them.
  core::Result<std::string> daemonSetRevision(const std::string& ns, const std::string& selector,
                                              const std::string& uid);
  // The act step (4).
  core::Result<Action> act(const Observed& observed, const RollStep& step, std::stop_token stop);
  void announcePause(const Observed& observed, const core::RollDecision& decision);
  void announceDryRun(const Observed& observed, const core::RollDecision& decision);
  core::Result<Action> evict(const Observed& observed, const std::string& podName, std::stop_token stop);
  void setOutdated(const std::string& key, std::size_t count);

  WorkloadResource kind_;
  std::string name_;
  WorkloadStoreFor workloads_;
  ReconcileContext& context_;
  Evictor& evictor_;
  std::chrono::seconds readyTimeout_;
  std::mutex mutex_;
  std::map<std::string, std::size_t> outdated_;  // key -> outdated pods (the gauge is their sum)
  // RollPaused (by workload key) and WouldEvict (by pod uid) already recorded.
  Announcements announced_;
};

}  // namespace restarter::controller
