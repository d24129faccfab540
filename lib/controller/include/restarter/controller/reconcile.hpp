#pragma once
// What a reconcile returns, the one error policy, and the shared context of the reconcilers.
//
// A reconciler is a `Reconciler`: `reconcile(object) -> Result<Action>` (controller-runtime's
// Reconciler). Each work-queue key names one (queue_key.hpp), and the controller's worker calls it
// through this interface, nothing else (docs/architecture.md, "Watches and dispatch"). It reads the
// current state from the caches, never branches on the event that queued the key, and is
// idempotent. Success says "wait for the next change" or "look again after d"; an error goes to
// `retryPolicy`, the only place that decides whether and when an error is retried.

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>

#include "restarter/controller/metrics.hpp"
#include "restarter/controller/queue_key.hpp"
#include "restarter/controller/rate_limiter.hpp"
#include "restarter/controller/slim.hpp"
#include "restarter/core/reloader.hpp"
#include "restarter/core/result.hpp"
#include "restarter/core/rollout_window.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/obs/log.hpp"

namespace restarter::controller {

using std::chrono::milliseconds;

class RolloutSlots;  // rollout_slots.hpp

struct Action {
  std::optional<milliseconds> requeueAfter;  // nullopt: nothing to do until the next change

  static Action awaitChange() { return Action{}; }
  static Action requeue(milliseconds after) { return Action{after}; }
};

// One reconciler. The controller owns every reconciler for its whole life (queue keys point at
// them); reconcile() may run on several workers at once for different objects, never for the
// same object twice at once (the queue hands a key to one worker at a time).
class Reconciler {
 public:
  virtual ~Reconciler() = default;

  // Its label in metrics and logs ("statefulset", "ondelete-statefulset", "pod-expiry"); fixed
  // for its life.
  virtual const std::string& name() const = 0;
  // `stop` interrupts a wait for the write limiter (the write is then not made and the key is
  // retried).
  virtual core::Result<Action> reconcile(const ObjectName& object, std::stop_token stop = {}) = 0;
};

struct RetryDecision {
  bool retry = true;
  milliseconds atLeast{0};  // the server's Retry-After, if it asked for one
};

// InvalidInput (a workload whose template cannot be read, a value the server refuses): not
// retried, since the same input gives the same error; the next change of the object queues it
// again. Everything else (unreachable apiserver, 5xx, conflicts, throttling, RBAC being fixed):
// retried with the queue's exponential backoff, never sooner than a Retry-After.
RetryDecision retryPolicy(const core::Error& error);

// Shared by the reconcilers; every reference must outlive them.
struct ReconcileContext {
  kube::Client& client;
  obs::Logger& logger;
  Metrics& metrics;
  RateLimiter& writeLimiter;
  base::Clock& clock;
  bool dryRun = false;
  std::string reportingController = "restarter.stackable.tech/controller";
  std::string reportingInstance;  // this replica's identity
  // The upper bound of a rollout hold: a rollout still in progress holds the next one at most
  // this long (core::decideRollout); 0: no holds.
  milliseconds minRolloutInterval{0};
  // Whether Reloader's annotations opt workloads in and select their references (core/reloader.hpp).
  core::SelectionOptions selection{};
  // --roll-on-opt-in: a workload restarter has no record of gets its template annotations at once
  // (a rollout) instead of a baseline record (core::DesiredOptions).
  bool rollOnOptIn = false;
  // The id of the key the caches' content digests are keyed with (core::DigestKey::id; set by
  // Controller::run before any worker starts, read-only after): the reconciler rewrites a record
  // holding entries not keyed with it (docs/architecture.md, "Keyed digests").
  std::string digestKeyId{};
  // Which digest the caches keep besides it (otherDigestKind: h2 under the previous key during a
  // rotation; empty key id: h1 under digestKeyId). Set and read as digestKeyId.
  OtherDigestKind otherDigest{};
  // --rollout-window: the windows of a workload without kRolloutWindowAnnotation (core/
  // rollout_window.hpp; empty schedule: always open), and its text for logs and Events.
  core::RolloutSchedule rolloutWindow{};
  std::string rolloutWindowSpec = "always";
  // --max-concurrent-rollouts (rollout_slots.hpp): the fleet's rollout slots; nullptr or unlimited:
  // no queue.
  RolloutSlots* rolloutSlots = nullptr;
};

}  // namespace restarter::controller
