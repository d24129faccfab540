#pragma once
// The fleet-wide rollout slots (serve-controller --max-concurrent-rollouts; docs/behaviour.md,
// "Fleet-wide rollout concurrency"): which of restarter's rollouts hold a slot now, which wait in
// the queue, and the wake-up of the queue's head when a slot frees. The decisions are
// core/rollout_queue.hpp's (pure); this class keeps the state between reconciles and wakes.
//
// State: `held_`, the queue keys whose rollout holds a slot, each until its upper bound (the last
// rollout + --min-rollout-interval); `queued_`, the keys waiting, with their priority and since.
// Both are rebuilt by a new leader from the caches (rebuild, before any worker starts): a
// workload's rollout in progress by its status holds a slot, a workload with
// kQueuedSinceAnnotation is queued at that time. After that the reconcilers keep them current:
//   - observe(key, until): at every reconcile of a managed workload, the slot its rollout holds
//     judged from its status (nullopt: none; finished or past the bound), which frees the slot;
//   - request(...): a workload whose change may roll by its own hold asks for a slot; admitted,
//     the slot is taken at once (held until the bound, or until observe sees the rollout
//     finished) and the key leaves the queue; else it is queued (or stays);
//   - leave(key): the workload no longer waits (no change left, deleted, no longer managed).
// A slot also frees when its bound passes; every call (and tick(), which the controller's
// 1-second gauge ticker calls) drops held slots past their bound.
// Whenever a slot frees, the keys now at the head of the queue with a free slot each are woken
// (the Wake callback, the work queue's add): the head rolls as soon as the slot frees, not at the
// next periodic look (the reconciler's recheck, core::kRolloutProgressRecheck, only bounds a
// missed wake-up).
//
// Thread-safety: one lock, mutex_, guards held_ and queued_; every public member takes it.
// The Wake callback is called after the lock is released (it takes the work queue's lock).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "restarter/controller/queue_key.hpp"
#include "restarter/core/rollout_queue.hpp"
#include "restarter/core/time.hpp"

namespace restarter::controller {

class RolloutSlots {
 public:
  using Wake = std::function<void(const QueueKey&)>;

  // maxConcurrent 0: no limit (every request admitted, nothing kept).
  RolloutSlots(std::size_t maxConcurrent, Wake wake);

  std::size_t maxConcurrent() const { return max_; }
  bool limited() const { return max_ > 0; }

  struct Queued {
    QueueKey key;
    std::int64_t priority = 0;
    core::TimePoint since{};
  };
  // A new leader's state from its caches: the keys whose rollouts hold slots (each until its bound)
  // and the queued ones. Replaces what there was; wakes the heads if slots are free.
  void rebuild(const std::vector<std::pair<QueueKey, core::TimePoint>>& held, const std::vector<Queued>& queued,
               core::TimePoint now);

  // The slot `key`'s rollout holds by its status, until `until`; nullopt: none (frees one it held).
  void observe(const QueueKey& key, std::optional<core::TimePoint> until, core::TimePoint now);

  struct Admission {
    bool admitted = true;
    std::size_t ahead = 0;       // queued rollouts ahead (when not admitted)
    std::size_t inProgress = 0;  // slots held, after the decision
    bool newlyQueued = false;    // the key was not queued before this request
  };
  // `key` may roll by its own hold: a slot, held until `until` on admission, or its place in the
  // queue. `since`: when it was first queued (its queued-since annotation), or now.
  Admission request(const QueueKey& key, std::int64_t priority, core::TimePoint since, core::TimePoint until,
                    core::TimePoint now);

  // `key` no longer waits for a slot (its slot, if any, stays held until observe frees it).
  void leave(const QueueKey& key, core::TimePoint now);
  // `key`'s workload is gone: neither held nor queued.
  void forget(const QueueKey& key, core::TimePoint now);

  struct Counts {
    std::size_t inProgress = 0;
    std::size_t queued = 0;
  };
  // Drops slots past their bound (waking the heads) and counts; for the gauges, every second.
  Counts tick(core::TimePoint now);

 private:
  // Under mutex_: drops slots past their bound.
  void expireLocked(core::TimePoint now);
  // Under mutex_: the keys to wake, the heads of the queue with a free slot each.
  std::vector<QueueKey> headsLocked() const;
  void wakeAll(const std::vector<QueueKey>& keys) const;

  const std::size_t max_;
  const Wake wake_;
  mutable std::mutex mutex_;
  std::unordered_map<QueueKey, core::TimePoint> held_;  // key -> until
  std::unordered_map<QueueKey, Queued> queued_;
};

}  // namespace restarter::controller
