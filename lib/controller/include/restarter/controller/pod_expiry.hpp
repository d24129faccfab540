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
//     never evicted by mistake). A PodDisruptionBudget refusal (429) is logged at info level and
//     retried after max(5 s, Retry-After) (commons-operator's delay). In dry-run: logged once.
//
// Thread-safety: as WorkloadReconciler.

#include <functional>
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

class PodExpiryReconciler {
 public:
  PodExpiryReconciler(PodsFor pods, ReconcileContext& context);

  core::Result<Action> reconcile(const std::string& key, std::stop_token stop = {});

 private:
  bool firstTime(const std::string& what);

  PodsFor pods_;
  ReconcileContext& context_;
  std::mutex mutex_;
  std::set<std::string> reported_;  // problems and dry-run evictions already logged
};

}  // namespace restarter::controller
