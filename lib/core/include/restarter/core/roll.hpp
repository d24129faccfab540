#pragma once
// The pod-by-pod roll of OnDelete StatefulSets and DaemonSets: which pods run an outdated
// revision, which one to evict next, or why to wait (docs/architecture.md, "Rolls from the
// cluster"). Pure: the caller passes the workload, its pods and "now", all read fresh from the
// cluster; nothing here remembers a previous decision, so a restarted controller decides exactly
// as the old one would have and never evicts twice.
//
// The rules, in order (decideRoll):
//   - RollingUpdate: Kubernetes rolls, restarter evicts nothing. Pods kept below a StatefulSet's
//     `partition` are the user's choice: state Partitioned, listed in `kept`.
//   - The workload's status does not yet describe its current template (observedGeneration behind
//     generation, or no update revision): Stale, nothing evicted until the workload controller
//     catches up (its status update queues the workload again).
//   - Opt-out (`restarter.stackable.tech/ondelete: manual`): Manual, nothing evicted.
//   - No pod on another revision than the update revision: Done.
//   - Otherwise Rolling, and at most one pod is made unavailable at a time:
//       1. a pod terminating, or fewer (more) pods than desired: a replacement is on its way (or a
//          scale is in progress); wait;
//       2. a pod on the update revision not Ready: wait for it, at most `readyTimeout` from when
//          it became not Ready (its Ready condition's transition, else its creation); beyond it
//          the roll is Paused on that pod until it becomes Ready or a new revision makes it
//          outdated itself;
//       3. a pod on the update revision Ready for less than minReadySeconds: wait until it is;
//       4. an outdated pod that is not available: evict it first (it is down already, so
//          replacing it makes nothing more unavailable);
//       5. every pod available: evict the first outdated pod in roll order.
//     Roll order: StatefulSets from the highest ordinal down (as the StatefulSet controller's own
//     rolling update), DaemonSets one node at a time in node-name order.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "restarter/core/explain.hpp"
#include "restarter/core/time.hpp"

namespace restarter::core {

enum class UpdateStrategy { RollingUpdate, OnDelete };

// A pod of the workload as the roll sees it (read by rollPodFromJson, roll_input.hpp).
struct RollPod {
  std::string name;
  std::string revision;      // its controller-revision-hash label
  int ordinal = -1;          // StatefulSet: the name's numeric suffix; -1 when none
  std::string node;          // spec.nodeName
  bool terminating = false;  // metadata.deletionTimestamp set
  bool ready = false;        // condition Ready is True
  // ready: since when it is Ready; not ready: since when it is not (the Ready condition's
  // lastTransitionTime, else the pod's creationTimestamp). nullopt when neither is known.
  std::optional<TimePoint> since;
};

// The workload as the roll sees it (read by rollWorkloadFromJson, roll_input.hpp).
struct RollWorkload {
  WorkloadKind kind = WorkloadKind::StatefulSet;  // StatefulSet or DaemonSet
  UpdateStrategy strategy = UpdateStrategy::RollingUpdate;
  int partition = 0;           // RollingUpdate StatefulSets
  bool manual = false;         // the opt-out annotation
  bool statusCurrent = false;  // status.observedGeneration >= metadata.generation
  std::string updateRevision;  // the revision label value pods should carry ("" unknown)
  int desired = 0;             // StatefulSet spec.replicas; DaemonSet status.desiredNumberScheduled
  std::chrono::seconds minReadySeconds{0};
};

struct RollDecision {
  enum class State {
    KubernetesRolls,  // RollingUpdate: not restarter's to roll
    Partitioned,      // RollingUpdate with pods kept on an old revision below the partition
    Stale,            // the status lags the template: wait
    Manual,           // opted out
    Done,             // every pod on the update revision
    Rolling,          // evicting (`evict`) or waiting (`reason`)
    Paused,           // a replacement did not become Ready within the timeout (`blockingPod`)
  };
  State state = State::KubernetesRolls;
  std::optional<std::string> evict;    // the pod to evict now (Rolling only)
  std::string reason;                  // why waiting, paused or not rolling; "" when evicting
  std::string blockingPod;             // the pod waited or paused on, if one
  std::optional<TimePoint> recheckAt;  // when time alone may change the decision
  std::vector<std::string> outdated;   // pods not on the update revision and not terminating, in roll order
  std::vector<std::string> kept;       // Partitioned: outdated pods below the partition
};

const char* rollStateName(RollDecision::State state) noexcept;  // "rolling", "paused", ...

// How long a replacement may take to become Ready before the roll pauses, unless configured
// (serve-controller --ondelete-ready-timeout, and explain-restart/status judging alike). Generous:
// a database pod replaying its log may take minutes.
inline constexpr std::chrono::seconds kDefaultReadyTimeout{10 * 60};

RollDecision decideRoll(const RollWorkload& workload, std::vector<RollPod> pods, TimePoint now,
                        std::chrono::seconds readyTimeout);

}  // namespace restarter::core
