#pragma once
// The controller's work queue (its write limiter: rate_limiter.hpp).
//
// WorkQueue (client-go's workqueue, with a debounce): keys (QueueKey: reconciler and object) wait
// until they are due, then are handed to one worker at a time.
//   - Deduplication: a key is queued at most once. Adding a key that is already waiting keeps the
//     earlier due time, so a burst of adds within the window collapses into one reconcile.
//   - Debounce: `add(key, delay)` makes a new key due `delay` after the first add of the burst
//     (a fixed window from the first change, not a sliding one, so a ConfigMap that never stops
//     changing still gets reconciled once per window instead of never).
//   - One worker per key: a key being processed is not handed out again; adding it meanwhile marks
//     it dirty, and done() queues it again (with the delay asked for).
//   - Errors: addRateLimited(key) re-queues after an exponential backoff with jitter
//     (cache::backoffDelay) that grows with the key's consecutive failures; forget(key) resets it.
//   - Reasons: every add says why (queue_reason.hpp); a key carries the union of the reasons it
//     was added for until a worker takes it, and get/tryGet hand them over with the key. Reasons
//     added while the key is processed go with its next turn.
// Due times are monotonic (base::Clock::monotonicNow, docs/architecture.md, "Injected time"): a
// step of the wall clock neither fires a debounce early nor holds a key back. The non-blocking
// `tryGet(now)` and `nextDue()` let tests drive the queue with a fake clock, `get(stop)` is the
// blocking form for workers.
//
// Thread-safety: every member function may be called from any thread.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <stop_token>
#include <unordered_map>
#include <unordered_set>

#include "restarter/base/clock.hpp"
#include "restarter/base/random.hpp"
#include "restarter/cache/reflector.hpp"
#include "restarter/controller/queue_key.hpp"
#include "restarter/controller/queue_reason.hpp"

namespace restarter::controller {

using std::chrono::milliseconds;

class WorkQueue {
 public:
  // `clock` and `random` must outlive the queue; `random` jitters the backoff (thread-safe by its
  // contract, so the workers may share it without the queue's lock).
  WorkQueue(base::Clock& clock, cache::BackoffPolicy backoff, base::Random& random = base::systemRandom());

  // Queues `key` for `reason`, due after `delay` (0: at once). See the class comment for the merge
  // rules.
  void add(const QueueKey& key, QueueReason reason, milliseconds delay = milliseconds(0));
  // Queues `key` after its next backoff delay (at least `atLeast`), for QueueReason::ErrorRetry;
  // counts a failure. Returns the delay chosen.
  milliseconds addRateLimited(const QueueKey& key, milliseconds atLeast = milliseconds(0));
  // Clears the key's failure count (after a success).
  void forget(const QueueKey& key);
  int failures(const QueueKey& key) const;

  // A key a worker took and why it was queued (every reason it was added for since its last turn).
  struct Taken {
    QueueKey key;
    QueueReasons reasons;
  };
  // A due key, now marked as processing, or nothing. Non-blocking.
  std::optional<Taken> tryGet(base::Clock::MonotonicTime now);
  // Blocks until a key is due (returned, marked processing), or `stop` / shutDown() (nullopt).
  std::optional<Taken> get(std::stop_token stop);
  // The worker finished `key`. If it was added meanwhile, it is queued again.
  void done(const QueueKey& key);

  // When the earliest waiting key is due; nullopt when none waits.
  std::optional<base::Clock::MonotonicTime> nextDue() const;
  // Keys waiting or being processed (distinct).
  std::size_t depth() const;
  // Wakes every get(); later get() calls return nullopt at once.
  void shutDown();

 private:
  // When a key is due and why it was queued.
  struct Turn {
    base::Clock::MonotonicTime due;
    QueueReasons reasons;
  };
  void queueLocked(const QueueKey& key, Turn turn);
  Taken takeFirstLocked();

  base::Clock& clock_;
  cache::BackoffPolicy backoff_;
  base::Random& random_;
  mutable std::mutex mutex_;
  std::condition_variable_any cv_;
  std::unordered_map<QueueKey, Turn> waiting_;                 // key -> its turn
  std::multimap<base::Clock::MonotonicTime, QueueKey> byDue_;  // due -> key (mirrors waiting_)
  std::unordered_set<QueueKey> processing_;                    // handed to a worker, not done yet
  std::unordered_map<QueueKey, Turn> dirty_;                   // added while processing -> next turn
  std::unordered_map<QueueKey, int> failures_;
  std::uint64_t generation_ = 0;  // bumped on every change that may wake get()
  bool shutDown_ = false;
};

}  // namespace restarter::controller
