#pragma once
// The pod expiry restarter: a labeled pod annotated `restarter.stackable.tech/expires-at.<tag>` is
// evicted through the Eviction API (PodDisruptionBudgets apply) at the earliest such time
// (core::decideExpiry decides; this file only acts).
//
// reconcile(object), a pod:
//   - pod absent or already terminating: nothing to do;
//   - no valid expiry: nothing to do; an unparseable value is logged once (per pod, key and value)
//     and skipped;
//   - expiry in the future: look again then;
//   - expiry passed: evict (with the pod's uid as precondition, so a new pod of the same name is
//     never evicted by mistake), log it and record an Event on the pod (Normal, reason Expired,
//     naming the annotation and its time), so `kubectl describe pod` and `kubectl get events`
//     say why the pod went. The eviction, and a PodDisruptionBudget refusal (429: retried after
//     max(5 s, Retry-After), commons-operator's delay, with at most one Warning EvictionBlocked
//     per pod per kEvictionBlockedEventInterval), are eviction.hpp's Evictor: pod expiry
//     owns one, the OnDelete rollers share another. In dry-run: logged once and recorded once
//     as an Event with reason WouldEvict.
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
#include "restarter/controller/announcements.hpp"
#include "restarter/controller/eviction.hpp"
#include "restarter/controller/reconcile.hpp"

namespace restarter::controller {

using PodsFor = std::function<const cache::Store*(std::string_view namespace_)>;

class PodExpiryReconciler final : public Reconciler {
 public:
  PodExpiryReconciler(PodsFor pods, ReconcileContext& context);

  core::Result<Action> reconcile(const ObjectName& object, std::stop_token stop = {}) override;

  // "pod-expiry": its label in metrics and logs.
  const std::string& name() const override { return name_; }

 private:
  void recordPodEvent(const nlohmann::json& pod, const std::string& type, const std::string& reason,
                      const std::string& note);

  std::string name_ = "pod-expiry";
  PodsFor pods_;
  ReconcileContext& context_;
  Announcements reported_;  // by pod uid: problems and dry-run evictions already logged
  Evictor evictor_;
};

}  // namespace restarter::controller
