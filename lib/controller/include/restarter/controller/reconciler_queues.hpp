#pragma once
// Each reconciler's own work queue and workers (docs/architecture.md, "Watches and dispatch"), as
// controller-runtime gives each controller its own rate-limited queue and MaxConcurrentReconciles
// workers: a reconciler that is slow (a wait for the write limiter, an eviction refused by a
// budget, a hung request) occupies only its own workers, and every other reconciler's keys go on.
//
// Life: add() each reconciler once, before start() and before any thread enqueues; from then on
// any thread may enqueue (the keys wait in their queue until start()). start() starts a fixed
// number of threads per reconciler (its share, add's `workers`); stop() shuts every queue down,
// then asks every worker to stop and joins it (a key in progress is finished first). The
// destructor stops.
//
// Thread-safety: the set of queues is fixed by the adds and read-only afterwards; each queue locks
// itself (work_queue.hpp). start() and stop() are called by one thread (the controller's run()).

#include <cstddef>
#include <functional>
#include <memory>
#include <stop_token>
#include <thread>
#include <unordered_map>
#include <vector>

#include "restarter/base/clock.hpp"
#include "restarter/cache/reflector.hpp"
#include "restarter/controller/queue_key.hpp"
#include "restarter/controller/queue_reason.hpp"
#include "restarter/controller/work_queue.hpp"

namespace restarter::controller {

class ReconcilerQueues {
 public:
  // What a worker does with a key it took from `queue` (its reconciler's queue); the worker calls
  // the queue's done() after it. `stop`: stop() was called.
  using Process = std::function<void(WorkQueue& queue, const WorkQueue::Taken& taken, std::stop_token stop)>;

  // Every queue backs off errors with `backoff` (work_queue.hpp); `clock` must outlive this.
  ReconcilerQueues(base::Clock& clock, cache::BackoffPolicy backoff);
  ~ReconcilerQueues();
  ReconcilerQueues(const ReconcilerQueues&) = delete;
  ReconcilerQueues& operator=(const ReconcilerQueues&) = delete;

  // Gives `reconciler` (which must outlive this) its own queue, served by `workers` threads (at
  // least 1). Once per reconciler, before start() and any enqueue().
  void add(const Reconciler& reconciler, int workers);
  // The queue of an added reconciler (std::out_of_range for another).
  WorkQueue& queueOf(const Reconciler& reconciler);
  // Queues `key` in its reconciler's queue (WorkQueue::add).
  void enqueue(const QueueKey& key, QueueReason reason, milliseconds delay = milliseconds(0));

  // Starts every reconciler's workers; each takes its queue's keys one at a time, calls `process`
  // and done(), until stop(). Once.
  void start(Process process);
  // Shuts every queue down (later adds are dropped), asks every worker to stop and joins it.
  // Idempotent; a no-op before start() but for the shut-down.
  void stop();

  // The keys waiting or being processed, in every queue.
  std::size_t depth() const;
  // The workers start() starts: the sum of the shares.
  std::size_t workers() const;

 private:
  struct Lane {
    Lane(int workersIn, base::Clock& clock, cache::BackoffPolicy backoff)
        : workers(workersIn), queue(clock, backoff) {}
    int workers;
    WorkQueue queue;
  };

  base::Clock& clock_;
  cache::BackoffPolicy backoff_;
  std::unordered_map<const Reconciler*, std::unique_ptr<Lane>> lanes_;
  std::stop_source stop_;
  std::vector<std::jthread> threads_;
};

}  // namespace restarter::controller
