#include "restarter/controller/reconciler_queues.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <latch>
#include <mutex>

#include <catch2/catch.hpp>

#include "restarter/testing/fake_clock.hpp"
#include "support.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace reconciler_queues_test {

using namespace restarter::controller;
using restarter::controller::testing::NamedReconciler;
using restarter::testing::FakeClock;
using namespace std::chrono_literals;

namespace {

restarter::cache::BackoffPolicy policy() { return {100ms, 1000ms, 0.0}; }

// Blocks until `stop` is requested (the worker's stop token): a reconcile that waits for nothing
// but the shutdown.
void waitForStop(std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock lock(mutex);
  wake.wait(lock, stop, [] { return false; });
}

// Two reconcilers, each with its queue and `firstWorkers` / `secondWorkers` workers.
struct TwoReconcilers {
  TwoReconcilers(int firstWorkers, int secondWorkers) {
    queues.add(first, firstWorkers);
    queues.add(second, secondWorkers);
  }

  FakeClock clock;
  NamedReconciler first{"first"};
  NamedReconciler second{"second"};
  ReconcilerQueues queues{clock, policy()};
};

}  // namespace

TEST_CASE("a reconciler blocked in a reconcile does not delay another reconciler's key",
          "[controller][queues]") {
  TwoReconcilers two(1, 1);
  NamedReconciler& slow = two.first;
  NamedReconciler& fast = two.second;
  ReconcilerQueues& queues = two.queues;

  std::latch slowStarted(1);
  std::latch release(1);
  std::promise<void> fastDone;
  queues.start([&](WorkQueue&, const WorkQueue::Taken& taken, std::stop_token) {
    if (taken.key.reconciler == &slow) {
      slowStarted.count_down();
      release.wait();
    } else {
      fastDone.set_value();
    }
  });
  queues.enqueue(QueueKey{&slow, {"ns", "a"}}, QueueReason::ObjectChanged);
  queues.enqueue(QueueKey{&slow, {"ns", "b"}}, QueueReason::ObjectChanged);
  slowStarted.wait();  // the slow reconciler's only worker is held

  queues.enqueue(QueueKey{&fast, {"ns", "a"}}, QueueReason::ObjectChanged);
  // A bound, not a pause: with one queue for both the fast key would wait behind "ns/b" forever.
  const bool reconciled = fastDone.get_future().wait_for(30s) == std::future_status::ready;
  CHECK(queues.queueOf(slow).depth() == 2);  // "ns/a" in progress, "ns/b" still waiting
  release.count_down();
  queues.stop();
  CHECK(reconciled);
}

TEST_CASE("stop shuts every queue down and joins every worker after its key in progress",
          "[controller][queues]") {
  TwoReconcilers two(2, 1);
  CHECK(two.queues.workers() == 3);

  // One key per worker, each held until stop; each worker writes its own slot, read after stop()
  // without a lock: ThreadSanitizer reports a race unless stop() joined the writer.
  std::array<int, 3> finished{};
  std::atomic<int> next{0};
  std::latch allStarted(3);
  two.queues.start([&](WorkQueue&, const WorkQueue::Taken&, std::stop_token stop) {
    const int slot = next.fetch_add(1);
    allStarted.count_down();
    waitForStop(stop);
    finished[static_cast<std::size_t>(slot)] = 1;
  });
  two.queues.enqueue(QueueKey{&two.first, {"ns", "a"}}, QueueReason::ObjectChanged);
  two.queues.enqueue(QueueKey{&two.first, {"ns", "b"}}, QueueReason::ObjectChanged);
  two.queues.enqueue(QueueKey{&two.second, {"ns", "a"}}, QueueReason::ObjectChanged);
  allStarted.wait();

  two.queues.stop();
  CHECK(finished == std::array<int, 3>{1, 1, 1});
  for (NamedReconciler* reconciler : {&two.first, &two.second}) {
    WorkQueue& queue = two.queues.queueOf(*reconciler);
    queue.add(QueueKey{reconciler, {"ns", "late"}}, QueueReason::ObjectChanged);
    CHECK(queue.depth() == 0);   // shut down: adds are dropped
    CHECK_FALSE(queue.get({}));  // and a get returns at once
  }
  CHECK(two.queues.depth() == 0);
}

TEST_CASE("a key waits in its reconciler's queue until the workers start", "[controller][queues]") {
  FakeClock clock;
  NamedReconciler pods("pod-expiry");
  ReconcilerQueues queues(clock, policy());
  queues.add(pods, 0);  // at least one worker
  CHECK(queues.workers() == 1);
  queues.enqueue(QueueKey{&pods, {"ns", "p"}}, QueueReason::RelatedChanged, 0ms);
  CHECK(queues.depth() == 1);

  std::promise<QueueReasons> reasons;
  queues.start(
      [&](WorkQueue&, const WorkQueue::Taken& taken, std::stop_token) { reasons.set_value(taken.reasons); });
  auto got = reasons.get_future();
  REQUIRE(got.wait_for(30s) == std::future_status::ready);
  CHECK(got.get() == QueueReasons(QueueReason::RelatedChanged));
  queues.stop();
}

}  // namespace reconciler_queues_test
