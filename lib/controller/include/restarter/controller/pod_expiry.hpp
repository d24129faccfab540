#pragma once
// The pod expiry restarter: a labeled pod annotated `restarter.stackable.tech/expires-at.<tag>` is
// evicted through the Eviction API (PodDisruptionBudgets apply) at the earliest such time
// (core::decideExpiry decides; this file only acts).
//
// reconcile(key):
//   - pod absent or already terminating: nothing to do;
//   - no valid expiry: nothing to do; an unparseable value is logged once (per pod, key and value)
//     and skipped;
//   - expiry in the future: look again then;
//   - expiry passed: evict (with the pod's uid as precondition, so a new pod of the same name is
//     never evicted by mistake), log it and record an Event on the pod (Normal, reason Expired,
//     naming the annotation and its time), so `kubectl describe pod` and `kubectl get events`
//     say why the pod went. A PodDisruptionBudget refusal (429) is logged at info level and
//     retried after max(5 s, Retry-After) (commons-operator's delay); the first refusal of a pod
//     also records a Warning Event (reason EvictionBlocked), and then at most one per
//     kEvictionBlockedEventInterval while it keeps being refused: a budget that blocks for an
//     hour is worth a few Events, not 720. In dry-run: logged once and recorded once as an Event
//     with reason WouldEvict.
//   An Event that cannot be written is logged, never retried (the eviction itself is done).
//
// Thread-safety: as WorkloadReconciler.

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>

#include "restarter/cache/store.hpp"
#include "restarter/controller/reconcile.hpp"

namespace restarter::controller {

using PodsFor = std::function<const cache::Store*(std::string_view namespace_)>;

// The delay before asking again after a PodDisruptionBudget refused an eviction.
inline constexpr milliseconds kEvictionRefusedRetry{5000};
// The least time between two EvictionBlocked Events for one pod.
inline constexpr milliseconds kEvictionBlockedEventInterval{10 * 60 * 1000};

class PodExpiryReconciler {
 public:
  PodExpiryReconciler(PodsFor pods, ReconcileContext& context);

  core::Result<Action> reconcile(const std::string& key, std::stop_token stop = {});

 private:
  bool firstTime(const std::string& what);
  bool blockedEventDue(const std::string& uid);
  void recordEvent(const nlohmann::json& pod, const std::string& type, const std::string& reason,
                   const std::string& note);

  PodsFor pods_;
  ReconcileContext& context_;
  std::mutex mutex_;
  std::set<std::string> reported_;  // problems and dry-run evictions already logged
  std::map<std::string, TimePoint> blockedEvents_;  // pod uid -> last EvictionBlocked Event
};

}  // namespace restarter::controller
