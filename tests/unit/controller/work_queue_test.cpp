#include "restarter/controller/work_queue.hpp"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "restarter/testing/fake_clock.hpp"
#include "restarter/testing/fake_random.hpp"
#include "support.hpp"

using namespace restarter::controller;
using restarter::testing::FakeClock;
using restarter::testing::FakeRandom;
using namespace std::chrono_literals;

namespace {
restarter::cache::BackoffPolicy policy() { return {100ms, 1000ms, 0.0}; }
restarter::controller::testing::NamedReconciler statefulSets("statefulset");
restarter::controller::testing::NamedReconciler rolls("ondelete-statefulset");
// A StatefulSet's key in namespace "ns".
QueueKey key(const std::string& name) { return QueueKey{&statefulSets, {"ns", name}}; }
// The key a get or tryGet handed out; an empty key when none.
QueueKey taken(const std::optional<WorkQueue::Taken>& turn) { return turn ? turn->key : QueueKey{}; }
}  // namespace

TEST_CASE("a key added many times is handed out once", "[controller][queue]") {
  FakeClock clock;
  FakeRandom random;
  WorkQueue queue(clock, policy(), random);
  queue.add(key("a"), QueueReason::ObjectChanged);
  queue.add(key("a"), QueueReason::ObjectChanged);
  queue.add(key("b"), QueueReason::ObjectChanged);
  CHECK(queue.depth() == 2);
  auto first = queue.tryGet(clock.monotonicNow());
  auto second = queue.tryGet(clock.monotonicNow());
  REQUIRE(first);
  REQUIRE(second);
  CHECK(first->key != second->key);
  CHECK_FALSE(queue.tryGet(clock.monotonicNow()));
}

TEST_CASE("one object under two reconcilers is two keys", "[controller][queue]") {
  FakeClock clock;
  FakeRandom random;
  WorkQueue queue(clock, policy(), random);
  queue.add(QueueKey{&statefulSets, {"ns", "web"}}, QueueReason::ObjectChanged);
  queue.add(QueueKey{&rolls, {"ns", "web"}}, QueueReason::ObjectChanged);
  queue.add(QueueKey{&statefulSets, {"other", "web"}}, QueueReason::ObjectChanged);
  CHECK(queue.depth() == 3);
}

TEST_CASE("the debounce window starts at the first change and coalesces the burst", "[controller][queue]") {
  FakeClock clock;
  FakeRandom random;
  WorkQueue queue(clock, policy(), random);
  queue.add(key("sts"), QueueReason::ObjectChanged, 1000ms);
  clock.advance(400ms);
  queue.add(key("sts"), QueueReason::ObjectChanged, 1000ms);  // does not push the due time back
  clock.advance(500ms);
  CHECK_FALSE(queue.tryGet(clock.monotonicNow()));
  REQUIRE(queue.nextDue());
  CHECK(*queue.nextDue() - clock.monotonicNow() == 100ms);
  clock.advance(100ms);
  CHECK(taken(queue.tryGet(clock.monotonicNow())) == key("sts"));
  CHECK_FALSE(queue.tryGet(clock.monotonicNow() + 10s));
}

TEST_CASE("a key added while it is processed comes back after done", "[controller][queue]") {
  FakeClock clock;
  FakeRandom random;
  WorkQueue queue(clock, policy(), random);
  queue.add(key("a"), QueueReason::ObjectChanged);
  auto first = queue.tryGet(clock.monotonicNow());
  REQUIRE(first);
  queue.add(key("a"), QueueReason::ObjectChanged);
  CHECK_FALSE(queue.tryGet(clock.monotonicNow()));  // never to two workers at once
  queue.done(key("a"));
  CHECK(taken(queue.tryGet(clock.monotonicNow())) == key("a"));
  queue.done(key("a"));
  CHECK(queue.depth() == 0);
}

TEST_CASE("errors back off exponentially and forget resets", "[controller][queue]") {
  FakeClock clock;
  FakeRandom random;
  WorkQueue queue(clock, policy(), random);
  CHECK(queue.addRateLimited(key("a")) == 100ms);
  CHECK(queue.addRateLimited(key("a")) == 200ms);
  CHECK(queue.addRateLimited(key("a")) == 400ms);
  CHECK(queue.failures(key("a")) == 3);
  CHECK(queue.addRateLimited(key("b"), 5000ms) == 5000ms);  // Retry-After wins when longer
  queue.forget(key("a"));
  CHECK(queue.failures(key("a")) == 0);
  CHECK(queue.addRateLimited(key("a")) == 100ms);
}

TEST_CASE("backoff jitter draws from the lower half of the window", "[controller][queue]") {
  FakeClock clock;
  FakeRandom random;
  WorkQueue queue(clock, {100ms, 1000ms, 0.5}, random);
  CHECK(queue.addRateLimited(key("a")) == 50ms);
}

TEST_CASE("get blocks until a key is due and shutDown releases it", "[controller][queue]") {
  WorkQueue queue(restarter::base::systemClock(), policy());
  std::jthread producer([&] {
    std::this_thread::sleep_for(20ms);
    queue.add(key("late"), QueueReason::ObjectChanged, 10ms);
  });
  CHECK(taken(queue.get({})) == key("late"));
  queue.done(key("late"));
  std::jthread closer([&] {
    std::this_thread::sleep_for(20ms);
    queue.shutDown();
  });
  CHECK_FALSE(queue.get({}));
}

// Workers fail and requeue at the same time. With the default (shared) randomness this must be
// free of data races: ThreadSanitizer (tests/run.sh's TSan stage) reports one if the jitter's engine
// is used without its lock.
TEST_CASE("workers requeueing with backoff at once share the randomness safely", "[controller][queue]") {
  WorkQueue queue(restarter::base::systemClock(), {1ms, 10ms, 0.5});
  std::vector<milliseconds> longest(4, 0ms);  // one slot per worker; Catch2 asserts only here
  {
    std::vector<std::jthread> workers;
    for (int w = 0; w < 4; ++w) {
      workers.emplace_back([&queue, &longest, w] {
        for (int i = 0; i < 200; ++i) {
          const auto delay =
              queue.addRateLimited(key("key-" + std::to_string(w) + "-" + std::to_string(i % 8)));
          longest[static_cast<std::size_t>(w)] = std::max(longest[static_cast<std::size_t>(w)], delay);
        }
      });
    }
  }
  for (const auto delay : longest) {  // each key failed 25 times: the 10 ms cap, less up to half jitter
    CHECK(delay >= 5ms);
    CHECK(delay <= 10ms);
  }
  CHECK(queue.failures(key("key-0-0")) == 25);
}

TEST_CASE("a key carries every reason it was queued for until a worker takes it", "[controller][queue]") {
  FakeClock clock;
  FakeRandom random;
  WorkQueue queue(clock, policy(), random);
  queue.add(key("a"), QueueReason::ObjectChanged, 100ms);
  queue.add(key("a"), QueueReason::RelatedChanged, 500ms);
  clock.advance(100ms);
  auto first = queue.tryGet(clock.monotonicNow());
  REQUIRE(first);
  QueueReasons both = QueueReason::ObjectChanged;
  both |= QueueReason::RelatedChanged;
  CHECK(first->reasons == both);
  CHECK(queueReasonsText(first->reasons) == "object-changed,related-changed");

  // Added while held: the reasons go with the next turn, not this one.
  queue.add(key("a"), QueueReason::RequeueAfter);
  queue.done(key("a"));
  auto second = queue.tryGet(clock.monotonicNow());
  REQUIRE(second);
  CHECK(second->reasons == QueueReasons(QueueReason::RequeueAfter));
  queue.done(key("a"));

  queue.addRateLimited(key("a"));
  clock.advance(1s);
  auto retried = queue.tryGet(clock.monotonicNow());
  REQUIRE(retried);
  CHECK(retried->reasons == QueueReasons(QueueReason::ErrorRetry));
}

TEST_CASE("every queue reason has a name of its own", "[controller][queue]") {
  std::vector<std::string> names;
  for (QueueReason reason : kQueueReasons) names.emplace_back(queueReasonName(reason));
  CHECK(names == std::vector<std::string>{"object-changed", "related-changed", "requeue-after", "error-retry",
                                          "slot-freed"});
  QueueReasons all;
  for (QueueReason reason : kQueueReasons) all |= reason;
  CHECK(queueReasonsText(all) == "object-changed,related-changed,requeue-after,error-retry,slot-freed");
  CHECK(queueReasonsText(QueueReasons{}).empty());
}
