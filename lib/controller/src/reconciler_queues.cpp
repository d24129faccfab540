#include "restarter/controller/reconciler_queues.hpp"

#include <algorithm>
#include <utility>

namespace restarter::controller {

ReconcilerQueues::ReconcilerQueues(base::Clock& clock, cache::BackoffPolicy backoff)
    : clock_(clock), backoff_(backoff) {}

ReconcilerQueues::~ReconcilerQueues() { stop(); }

void ReconcilerQueues::add(const Reconciler& reconciler, int workers) {
  lanes_.emplace(&reconciler, std::make_unique<Lane>(std::max(1, workers), clock_, backoff_));
}

WorkQueue& ReconcilerQueues::queueOf(const Reconciler& reconciler) { return lanes_.at(&reconciler)->queue; }

void ReconcilerQueues::enqueue(const QueueKey& key, QueueReason reason, milliseconds delay) {
  lanes_.at(key.reconciler)->queue.add(key, reason, delay);
}

void ReconcilerQueues::start(Process process) {
  for (auto& [reconciler, lane] : lanes_) {
    WorkQueue& queue = lane->queue;
    for (int i = 0; i < lane->workers; ++i) {
      threads_.emplace_back([&queue, process, token = stop_.get_token()] {
        while (auto taken = queue.get(token)) {
          process(queue, *taken, token);
          queue.done(taken->key);
        }
      });
    }
  }
}

void ReconcilerQueues::stop() {
  for (auto& [reconciler, lane] : lanes_) lane->queue.shutDown();
  stop_.request_stop();
  for (std::jthread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
}

std::size_t ReconcilerQueues::depth() const {
  std::size_t depth = 0;
  for (const auto& [reconciler, lane] : lanes_) depth += lane->queue.depth();
  return depth;
}

std::size_t ReconcilerQueues::workers() const {
  std::size_t workers = 0;
  for (const auto& [reconciler, lane] : lanes_) workers += static_cast<std::size_t>(lane->workers);
  return workers;
}

}  // namespace restarter::controller
