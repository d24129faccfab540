#include "restarter/core/rollout_queue.hpp"

#include <cstdint>

#include <catch2/catch.hpp>

using namespace restarter::core;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

TimePoint queueAt(std::chrono::microseconds offset) {
  return TimePoint(std::chrono::seconds(1'800'000'000)) + offset;
}

json withAnnotations(json annotations) {
  return {{"metadata", {{"name", "web"}, {"annotations", std::move(annotations)}}}};
}

const RolloutProgress kQueueInProgress{false, "2 of 3 pods updated"};
const RolloutProgress kQueueFinished{};

}  // namespace

TEST_CASE("rollout queue: the priority annotation is read or rejected with a reason", "[rollout-queue]") {
  struct Row {
    json value;
    std::int64_t priority;
    bool valid;
  };
  const std::vector<Row> rows = {
      {"0", 0, true},
      {"10", 10, true},
      {"+7", 7, true},
      {"-3", -3, true},
      {"1000000000", 1'000'000'000, true},
      {"-1000000000", -1'000'000'000, true},
      {"1000000001", 0, false},
      {"99999999999", 0, false},
      {"999999999999999999999999", 0, false},
      {"", 0, false},
      {"-", 0, false},
      {"1.5", 0, false},
      {" 1", 0, false},
      {"high", 0, false},
      {5, 0, false},
      {nullptr, 0, false},
  };
  for (const Row& row : rows) {
    INFO(row.value.dump());
    const RolloutPriority priority =
        rolloutPriorityOf(withAnnotations({{"restarter.stackable.tech/rollout-priority", row.value}}));
    CHECK(priority.value == row.priority);
    CHECK(priority.problem.empty() == row.valid);
  }
  CHECK(rolloutPriorityOf(withAnnotations(json::object())).value == 0);
  CHECK(rolloutPriorityOf(withAnnotations(json::object())).problem.empty());
  CHECK(rolloutPriorityOf(json::array()).problem.empty());
}

TEST_CASE("rollout queue: queued-since is read as RFC 3339 or ignored", "[rollout-queue]") {
  CHECK(queuedSinceOf(withAnnotations({{"restarter.stackable.tech/queued-since", "2027-01-15T08:00:00Z"}}))
            .has_value());
  CHECK_FALSE(
      queuedSinceOf(withAnnotations({{"restarter.stackable.tech/queued-since", "yesterday"}})).has_value());
  CHECK_FALSE(queuedSinceOf(withAnnotations({{"restarter.stackable.tech/queued-since", 3}})).has_value());
  CHECK_FALSE(queuedSinceOf(withAnnotations(json::object())).has_value());
  CHECK_FALSE(queuedSinceOf(json("text")).has_value());
}

TEST_CASE("rollout queue: a rollout holds a slot while unfinished and younger than the interval",
          "[rollout-queue]") {
  struct Row {
    const char* what;
    std::optional<TimePoint> lastRollout;
    TimePoint now;
    std::chrono::milliseconds interval;
    RolloutProgress progress;
    std::optional<TimePoint> until;
  };
  const std::vector<Row> rows = {
      {"in progress", queueAt(0s), queueAt(30s), 5min, kQueueInProgress, queueAt(5min)},
      {"just rolled, status not yet observed", queueAt(0s), queueAt(0s), 5min, kQueueInProgress, queueAt(5min)},
      {"finished", queueAt(0s), queueAt(30s), 5min, kQueueFinished, std::nullopt},
      {"upper bound passed", queueAt(0s), queueAt(5min), 5min, kQueueInProgress, std::nullopt},
      {"no record", std::nullopt, queueAt(0s), 5min, kQueueInProgress, std::nullopt},
      {"no interval", queueAt(0s), queueAt(1s), 0ms, kQueueInProgress, std::nullopt},
      {"stamp far in the future", queueAt(6min), queueAt(0s), 5min, kQueueInProgress, std::nullopt},
      {"stamp a little in the future (skew)", queueAt(2s), queueAt(0s), 5min, kQueueInProgress,
       queueAt(5min + 2s)},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    CHECK(rolloutSlotUntil(row.lastRollout, row.now, row.interval, row.progress) == row.until);
  }
}

TEST_CASE("rollout queue: order is priority then the oldest then the id", "[rollout-queue]") {
  struct Row {
    QueuedRollout a;
    QueuedRollout b;
    bool aFirst;
  };
  const std::vector<Row> rows = {
      {{"x", 5, queueAt(10s)}, {"y", 0, queueAt(0s)}, true},
      {{"x", -1, queueAt(0s)}, {"y", 0, queueAt(10s)}, false},
      {{"x", 0, queueAt(0s)}, {"y", 0, queueAt(1s)}, true},
      {{"x", 0, queueAt(2s)}, {"y", 0, queueAt(1s)}, false},
      {{"a", 0, queueAt(1s)}, {"b", 0, queueAt(1s)}, true},
      {{"b", 0, queueAt(1s)}, {"a", 0, queueAt(1s)}, false},
      {{"a", 0, queueAt(1s)}, {"a", 0, queueAt(1s)}, false},
  };
  for (const Row& row : rows) {
    INFO(row.a.id << " vs " << row.b.id);
    CHECK(queuedBefore(row.a, row.b) == row.aFirst);
  }
}

TEST_CASE("rollout queue: admission gives the free slots to the head of the queue", "[rollout-queue]") {
  const std::vector<QueuedRollout> queue = {{"low-old", 0, queueAt(0s)},
                                            {"high-new", 10, queueAt(50s)},
                                            {"low-new", 0, queueAt(40s)},
                                            {"negative", -5, queueAt(0s)}};
  struct Row {
    const char* what;
    std::size_t max;
    std::size_t inProgress;
    QueuedRollout candidate;
    bool admit;
    std::size_t ahead;
  };
  const std::vector<Row> rows = {
      {"no limit", 0, 100, {"negative", -5, queueAt(0s)}, true, 0},
      {"head with a free slot", 5, 4, {"high-new", 10, queueAt(50s)}, true, 0},
      {"second with one free slot", 5, 4, {"low-old", 0, queueAt(0s)}, false, 1},
      {"second with two free slots", 5, 3, {"low-old", 0, queueAt(0s)}, true, 1},
      {"head with no free slot", 5, 5, {"high-new", 10, queueAt(50s)}, false, 0},
      {"more in progress than allowed", 5, 7, {"high-new", 10, queueAt(50s)}, false, 0},
      {"last", 2, 0, {"negative", -5, queueAt(0s)}, false, 3},
      {"a newcomer not in the queue yet", 1, 0, {"newcomer", 0, queueAt(20s)}, false, 2},
      {"a newcomer of high priority", 1, 0, {"newcomer", 11, queueAt(99s)}, true, 0},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    const SlotAdmission admission = admitRollout(row.max, row.inProgress, queue, row.candidate);
    CHECK(admission.admit == row.admit);
    CHECK(admission.ahead == row.ahead);
  }
}

TEST_CASE("rollout queue: the heads woken are the first free slots' worth in order", "[rollout-queue]") {
  const std::vector<QueuedRollout> queue = {
      {"c", 0, queueAt(2s)}, {"a", 0, queueAt(0s)}, {"p", 3, queueAt(9s)}, {"b", 0, queueAt(1s)}};
  CHECK(queueHeads(3, 1, queue) == std::vector<std::string>{"p", "a"});
  CHECK(queueHeads(10, 0, queue) == std::vector<std::string>{"p", "a", "b", "c"});
  CHECK(queueHeads(3, 3, queue).empty());
  CHECK(queueHeads(3, 4, queue).empty());
  CHECK(queueHeads(0, 0, queue).empty());
  CHECK(queueHeads(3, 0, {}).empty());
}

TEST_CASE("rollout queue: the queued text counts the rollouts ahead", "[rollout-queue]") {
  CHECK(describeQueued(37) == "queued: 37 rollouts ahead");
  CHECK(describeQueued(1) == "queued: 1 rollout ahead");
  CHECK(describeQueued(0) == "queued: next");
}

TEST_CASE("rollout queue: the RolloutQueued note names the place and the limit and the changes",
          "[rollout-queue]") {
  CHECK(rolloutQueuedNote(3, 5, 10, "prod", "configmap/a: u/1 -> u/2 (updated)") ==
        "Rollout queued: 3 rollouts ahead; at most 5 rollouts in progress at once (--max-concurrent-rollouts), "
        "priority 10; changes so far in namespace prod: configmap/a: u/1 -> u/2 (updated)");
}
