// The fleet-wide rollout slots (rollout_slots.hpp) and the workload reconciler's queue gate
// (--max-concurrent-rollouts; docs/behaviour.md, "Fleet-wide rollout concurrency").
#include "restarter/controller/rollout_slots.hpp"

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "restarter/base/rfc3339.hpp"
#include "restarter/controller/workload.hpp"
#include "restarter/testing/builders.hpp"
#include "support.hpp"

using namespace restarter::controller;
using nlohmann::json;
using restarter::controller::testing::NamedReconciler;
using restarter::core::TimePoint;
using namespace std::chrono_literals;

namespace {

TimePoint slotsAt(std::chrono::microseconds offset) {
  return TimePoint(std::chrono::seconds(1'800'000'000)) + offset;
}

struct SlotsFixture {
  explicit SlotsFixture(std::size_t max)
      : slots(max, [this](const QueueKey& key) { woken.push_back(key.object.name); }) {}
  QueueKey key(const std::string& name) { return QueueKey{&reconciler, ObjectName{"ns", name}}; }
  NamedReconciler reconciler{"deployment"};
  std::vector<std::string> woken;
  RolloutSlots slots;
};

}  // namespace

TEST_CASE("rollout slots: without a limit every rollout is admitted and nothing is kept",
          "[controller][queue]") {
  SlotsFixture f(0);
  for (int i = 0; i < 10; ++i) {
    CHECK(f.slots.request(f.key("w" + std::to_string(i)), 0, slotsAt(0s), slotsAt(5min), slotsAt(0s)).admitted);
  }
  CHECK(f.slots.tick(slotsAt(0s)).inProgress == 0);
  CHECK(f.woken.empty());
}

TEST_CASE("rollout slots: at most N admitted and the rest queued in order with their place",
          "[controller][queue]") {
  SlotsFixture f(2);
  CHECK(f.slots.request(f.key("a"), 0, slotsAt(0s), slotsAt(5min), slotsAt(0s)).admitted);
  CHECK(f.slots.request(f.key("b"), 0, slotsAt(1s), slotsAt(5min), slotsAt(1s)).admitted);
  const auto c = f.slots.request(f.key("c"), 0, slotsAt(2s), slotsAt(5min), slotsAt(2s));
  CHECK_FALSE(c.admitted);
  CHECK(c.ahead == 0);
  CHECK(c.newlyQueued);
  const auto d = f.slots.request(f.key("d"), 0, slotsAt(3s), slotsAt(5min), slotsAt(3s));
  CHECK(d.ahead == 1);
  // Higher priority goes ahead of both.
  const auto p = f.slots.request(f.key("p"), 10, slotsAt(4s), slotsAt(5min), slotsAt(4s));
  CHECK(p.ahead == 0);
  // c asks again: it keeps its first time, and p is now ahead of it.
  const auto again = f.slots.request(f.key("c"), 0, slotsAt(9s), slotsAt(5min), slotsAt(9s));
  CHECK_FALSE(again.newlyQueued);
  CHECK(again.ahead == 1);
  const auto counts = f.slots.tick(slotsAt(10s));
  CHECK(counts.inProgress == 2);
  CHECK(counts.queued == 3);
  CHECK(f.woken.empty());
}

TEST_CASE("rollout slots: a finished rollout wakes the head of the queue at once", "[controller][queue]") {
  SlotsFixture f(1);
  REQUIRE(f.slots.request(f.key("a"), 0, slotsAt(0s), slotsAt(5min), slotsAt(0s)).admitted);
  REQUIRE_FALSE(f.slots.request(f.key("b"), 0, slotsAt(1s), slotsAt(5min), slotsAt(1s)).admitted);
  REQUIRE_FALSE(f.slots.request(f.key("c"), 5, slotsAt(2s), slotsAt(5min), slotsAt(2s)).admitted);
  // Still in progress: nothing freed, nobody woken.
  f.slots.observe(f.key("a"), slotsAt(5min), slotsAt(3s));
  CHECK(f.woken.empty());
  // Finished: c (priority 5) is woken, not b.
  f.slots.observe(f.key("a"), std::nullopt, slotsAt(4s));
  CHECK(f.woken == std::vector<std::string>{"c"});
  // b asking before c took the slot is still refused: c is ahead.
  const auto b = f.slots.request(f.key("b"), 0, slotsAt(1s), slotsAt(5min), slotsAt(5s));
  CHECK_FALSE(b.admitted);
  CHECK(b.ahead == 1);
  CHECK(f.slots.request(f.key("c"), 5, slotsAt(2s), slotsAt(5min), slotsAt(5s)).admitted);
}

TEST_CASE("rollout slots: a rollout that never finishes frees its slot at the upper bound",
          "[controller][queue]") {
  SlotsFixture f(1);
  REQUIRE(f.slots.request(f.key("a"), 0, slotsAt(0s), slotsAt(20s), slotsAt(0s)).admitted);
  REQUIRE_FALSE(f.slots.request(f.key("b"), 0, slotsAt(1s), slotsAt(21s), slotsAt(1s)).admitted);
  CHECK(f.slots.tick(slotsAt(19s)).inProgress == 1);
  CHECK(f.woken.empty());
  const auto counts = f.slots.tick(slotsAt(20s));
  CHECK(counts.inProgress == 0);
  CHECK(counts.queued == 1);
  CHECK(f.woken == std::vector<std::string>{"b"});
}

TEST_CASE("rollout slots: a deleted workload frees its slot and one that left the queue is not woken",
          "[controller][queue]") {
  SlotsFixture f(1);
  REQUIRE(f.slots.request(f.key("a"), 0, slotsAt(0s), slotsAt(5min), slotsAt(0s)).admitted);
  REQUIRE_FALSE(f.slots.request(f.key("b"), 0, slotsAt(1s), slotsAt(5min), slotsAt(1s)).admitted);
  REQUIRE_FALSE(f.slots.request(f.key("c"), 0, slotsAt(2s), slotsAt(5min), slotsAt(2s)).admitted);
  f.slots.leave(f.key("b"), slotsAt(3s));
  f.slots.forget(f.key("a"), slotsAt(4s));
  CHECK(f.woken == std::vector<std::string>{"c"});
}

TEST_CASE("rollout slots: a new leader's state is rebuilt from the workloads", "[controller][queue]") {
  SlotsFixture f(2);
  // One rollout in progress, three queued by the previous leader (one already past its bound is
  // not held).
  f.slots.rebuild(
      {{f.key("running"), slotsAt(5min)}, {f.key("stale"), slotsAt(0s)}},
      {{f.key("old"), 0, slotsAt(-60s)}, {f.key("new"), 0, slotsAt(-10s)}, {f.key("vip"), 3, slotsAt(-1s)}},
      slotsAt(1s));
  // One slot free: the head (vip) is woken at once.
  CHECK(f.woken == std::vector<std::string>{"vip"});
  const auto counts = f.slots.tick(slotsAt(1s));
  CHECK(counts.inProgress == 1);
  CHECK(counts.queued == 3);
  CHECK(f.slots.request(f.key("old"), 0, slotsAt(-60s), slotsAt(6min), slotsAt(2s)).ahead == 1);
}

TEST_CASE("rollout slots: concurrent requests never admit more than N", "[controller][queue]") {
  SlotsFixture f(5);
  std::atomic<int> admitted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&f, &admitted, t] {
      for (int i = 0; i < 25; ++i) {
        const QueueKey key{&f.reconciler, ObjectName{"ns", "w" + std::to_string(t) + "-" + std::to_string(i)}};
        if (f.slots.request(key, 0, slotsAt(0s), slotsAt(5min), slotsAt(0s)).admitted) ++admitted;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(admitted.load() == 5);
  CHECK(f.slots.tick(slotsAt(0s)).queued == 95);
}

namespace {

const char* kQueueCm = "configmap.restarter.stackable.tech/app-config";
const char* kQueuedSince = "restarter.stackable.tech/queued-since";

json queueWorkload(const std::string& name, json metadataAnnotations = json::object()) {
  json object = restarter::testing::statefulSet();
  object["metadata"]["name"] = name;
  object["metadata"]["uid"] = name + "-uid";
  object["metadata"]["annotations"] = std::move(metadataAnnotations);
  object["spec"] = {{"template",
                     {{"metadata", {{"annotations", {{kQueueCm, "cm-uid/1"}}}}},
                      {"spec",
                       {{"volumes", {{{"name", "config"}, {"configMap", {{"name", "app-config"}}}}}},
                        {"containers", {{{"name", "app"}, {"image", "x"}}}}}}}}};
  return object;
}

struct QueueFixture {
  explicit QueueFixture(std::size_t max)
      : harness(false), slots(max, [this](const QueueKey& key) { woken.push_back(key.object.name); }) {
    harness.context->minRolloutInterval = 5min;
    harness.context->rolloutSlots = &slots;
    // Events are named after the fake clock's time: two in one reconcile need it to move.
    harness.api->setInterceptor(
        [this](const restarter::kube::Request& request) -> std::optional<restarter::kube::Response> {
          if (request.method == "POST" && request.path.find("/events") != std::string::npos)
            harness.clock.advance(1ms);
          return std::nullopt;
        });
    workloads.addIndex(kConfigMapIndex, packedReferenceIndex(restarter::core::RefKind::ConfigMap));
    configMaps.replace(
        {json{{"apiVersion", "meta.k8s.io/v1"},
              {"kind", "PartialObjectMetadata"},
              {"metadata",
               {{"name", "app-config"}, {"namespace", "ns"}, {"uid", "cm-uid"}, {"resourceVersion", "2"}}}}},
        "20");
    secrets.replace({}, "20");
    reconciler = std::make_unique<WorkloadReconciler>(
        workloadResources().front(),
        [this](std::string_view) {
          return std::optional<WorkloadCaches>(WorkloadCaches{&workloads, &configMaps, &secrets});
        },
        *harness.context);
  }
  void seed(const std::vector<json>& objects, const std::string& rv) {
    for (const json& object : objects) harness.api->seed(restarter::kube::resources::statefulSets(), object);
    workloads.replace(objects, rv);
  }
  json stored(const std::string& name) {
    return restarter::controller::testing::storedStatefulSet(harness, name);
  }
  std::vector<std::string> reasons() const {
    std::vector<std::string> out;
    for (const json& event : harness.api->events()) out.push_back(event["reason"]);
    return out;
  }
  std::vector<json> appliesTo(const std::string& name) const {
    std::vector<json> bodies;
    for (const auto& request : harness.api->requests()) {
      if (request.method == "PATCH" && request.path.find("/statefulsets/" + name) != std::string::npos)
        bodies.push_back(json::parse(request.body));
    }
    return bodies;
  }
  restarter::controller::testing::Harness harness;
  std::vector<std::string> woken;
  RolloutSlots slots;
  restarter::cache::PackedStore workloads;
  restarter::cache::MetaStore configMaps;
  restarter::cache::MetaStore secrets;
  std::unique_ptr<WorkloadReconciler> reconciler;
};

TimePoint nowOfQueue(const QueueFixture& f) {
  return std::chrono::floor<std::chrono::microseconds>(f.harness.clock.wallNow());
}

}  // namespace

TEST_CASE(
    "a rollout beyond --max-concurrent-rollouts is queued, recorded on the workload and rolled when the "
    "slot frees",
    "[controller][workload][queue]") {
  QueueFixture f(1);
  const TimePoint start = std::chrono::floor<std::chrono::microseconds>(f.harness.clock.wallNow());
  f.seed({queueWorkload("a"), queueWorkload("b", {{"restarter.stackable.tech/rollout-priority", "high"}})},
         "10");

  auto a = f.reconciler->reconcile({"ns", "a"});
  REQUIRE(a.ok());
  CHECK_FALSE(a->requeueAfter);
  CHECK(f.stored("a")["spec"]["template"]["metadata"]["annotations"][kQueueCm] == "cm-uid/2");

  auto b = f.reconciler->reconcile({"ns", "b"});
  REQUIRE(b.ok());
  CHECK(b->requeueAfter == std::optional<std::chrono::milliseconds>(restarter::core::kRolloutProgressRecheck));
  // b's template is untouched; only its queued-since is written, by a metadata-only apply that
  // sends its template keys and records again as they are.
  const json storedB = f.stored("b");
  CHECK(storedB["spec"]["template"]["metadata"]["annotations"][kQueueCm] == "cm-uid/1");
  CHECK(storedB["metadata"]["generation"] == 1);
  CHECK(storedB["metadata"]["annotations"][kQueuedSince] ==
        restarter::base::formatRfc3339(start + 1ms));  // after a's Event
  const auto applies = f.appliesTo("b");
  REQUIRE(applies.size() == 1);
  CHECK(applies[0]["spec"]["template"]["metadata"]["annotations"] == json{{kQueueCm, "cm-uid/1"}});
  CHECK(f.reasons() == std::vector<std::string>{"Restarted", "InvalidRolloutPriority", "RolloutQueued"});
  CHECK_THAT(
      f.harness.api->events()[2]["note"].get<std::string>(),
      Catch::Contains("Rollout queued: next; at most 1 rollouts in progress") && Catch::Contains("priority 0"));
  CHECK(f.harness.metrics.rolloutsQueued.with({"statefulset"}).value() == 1);

  // Looked at again while a's rollout runs: nothing written, nothing announced again.
  f.harness.clock.advance(30s);
  auto again = f.reconciler->reconcile({"ns", "b"});
  REQUIRE(again.ok());
  CHECK(f.appliesTo("b").size() == 1);
  CHECK(f.harness.api->events().size() == 3);
  CHECK(f.woken.empty());

  // a's rollout finishes (the cache shows the write and a finished status): b is woken.
  json finishedA = f.stored("a");
  finishedA["status"] = {{"observedGeneration", finishedA["metadata"]["generation"]},
                         {"replicas", 1},
                         {"updatedReplicas", 1},
                         {"readyReplicas", 1}};
  f.workloads.replace({finishedA, f.stored("b")}, "30");
  REQUIRE(f.reconciler->reconcile({"ns", "a"}).ok());
  CHECK(f.woken == std::vector<std::string>{"b"});

  auto rolled = f.reconciler->reconcile({"ns", "b"});
  REQUIRE(rolled.ok());
  CHECK_FALSE(rolled->requeueAfter);
  CHECK(f.stored("b")["spec"]["template"]["metadata"]["annotations"][kQueueCm] == "cm-uid/2");
  // The rollout's apply does not send queued-since: the server removes the field the manager owned.
  const auto afterRoll = f.appliesTo("b");
  REQUIRE(afterRoll.size() == 2);
  CHECK_FALSE(afterRoll[1]["metadata"]["annotations"].contains(kQueuedSince));
  CHECK(f.reasons().back() == "Restarted");
}

TEST_CASE("a queued workload whose change is undone drops its queued-since", "[controller][workload][queue]") {
  QueueFixture f(1);
  json queued = queueWorkload("b", {{kQueuedSince, "2027-01-01T00:00:00Z"}});
  queued["spec"]["template"]["metadata"]["annotations"][kQueueCm] = "cm-uid/2";  // nothing to change
  f.seed({queued}, "10");
  auto action = f.reconciler->reconcile({"ns", "b"});
  REQUIRE(action.ok());
  const auto applies = f.appliesTo("b");
  REQUIRE(applies.size() == 1);
  CHECK_FALSE(applies[0]["metadata"]["annotations"].contains(kQueuedSince));
  CHECK(applies[0]["spec"]["template"]["metadata"]["annotations"] == json{{kQueueCm, "cm-uid/2"}});
  CHECK(f.harness.api->events().empty());
}

TEST_CASE("a workload queued by a previous leader keeps its place from its queued-since",
          "[controller][workload][queue]") {
  QueueFixture f(1);
  const TimePoint now = std::chrono::floor<std::chrono::microseconds>(f.harness.clock.wallNow());
  // A rollout of another workload holds the one slot (rebuilt from the caches by the new leader).
  NamedReconciler other("deployment");
  f.slots.rebuild({{QueueKey{&other, ObjectName{"ns", "running"}}, now + 4min}}, {}, now);
  f.seed({queueWorkload("late", {{kQueuedSince, restarter::base::formatRfc3339(now - 1s)}}),
          queueWorkload("early", {{kQueuedSince, restarter::base::formatRfc3339(now - 60s)}})},
         "10");
  REQUIRE(f.reconciler->reconcile({"ns", "late"}).ok());
  REQUIRE(f.reconciler->reconcile({"ns", "early"}).ok());
  // Nothing rewritten: both already carry their time.
  CHECK(f.appliesTo("late").empty());
  CHECK(f.appliesTo("early").empty());
  const auto events = f.harness.api->events();
  REQUIRE(events.size() == 2);
  CHECK_THAT(events[0]["note"].get<std::string>(), Catch::Contains("queued: next"));
  CHECK_THAT(events[1]["note"].get<std::string>(), Catch::Contains("queued: next"));
  // The slot frees at its bound: the earlier one is woken, not the later.
  f.slots.tick(now + 4min);
  CHECK(f.woken == std::vector<std::string>{"early"});
}

TEST_CASE("a queued workload held by an earlier gate leaves the queue and lets the next one roll",
          "[controller][workload][queue]") {
  QueueFixture f(1);
  const TimePoint now = std::chrono::floor<std::chrono::microseconds>(f.harness.clock.wallNow());
  NamedReconciler other("deployment");
  const QueueKey running{&other, ObjectName{"ns", "running"}};
  f.slots.rebuild({{running, now + 4min}}, {}, now);
  f.seed({queueWorkload("first"), queueWorkload("second")}, "10");
  REQUIRE(f.reconciler->reconcile({"ns", "first"}).ok());
  f.harness.clock.advance(1s);
  REQUIRE(f.reconciler->reconcile({"ns", "second"}).ok());
  CHECK(f.slots.tick(nowOfQueue(f)).queued == 2);
  // first is now held by a gate before the slot (here its own hold: someone rolled it a moment
  // ago): it leaves the queue instead of standing ahead of second without taking a slot.
  json held = f.stored("first");
  held["metadata"]["annotations"]["restarter.stackable.tech/last-rollout"] =
      restarter::base::formatRfc3339(nowOfQueue(f));
  // Finished already (so it holds no slot), but within the floor after that rollout.
  held["status"] = {{"observedGeneration", held["metadata"]["generation"]},
                    {"replicas", 1},
                    {"updatedReplicas", 1},
                    {"readyReplicas", 1}};
  f.workloads.replace({held, f.stored("second")}, "20");
  auto heldAction = f.reconciler->reconcile({"ns", "first"});
  REQUIRE(heldAction.ok());
  CHECK(heldAction->requeueAfter);
  CHECK(f.reasons().back() == "RolloutHeld");
  CHECK(f.slots.tick(nowOfQueue(f)).queued == 1);
  // The slot frees: second is the head now, woken and admitted.
  f.slots.observe(running, std::nullopt, nowOfQueue(f));
  CHECK(f.woken == std::vector<std::string>{"second"});
  auto rolled = f.reconciler->reconcile({"ns", "second"});
  REQUIRE(rolled.ok());
  CHECK(f.stored("second")["spec"]["template"]["metadata"]["annotations"][kQueueCm] == "cm-uid/2");
}
