#include "restarter/core/roll.hpp"

#include <catch2/catch.hpp>

using namespace restarter::core;
using namespace std::chrono;
using State = RollDecision::State;

namespace {

const TimePoint kNow = sys_days{year{2030} / 1 / 1} + hours{12};
constexpr seconds kTimeout{600};

RollPod sts(int ordinal, const std::string& revision, bool ready = true, TimePoint since = kNow - hours{1}) {
  RollPod pod;
  pod.name = "web-" + std::to_string(ordinal);
  pod.ordinal = ordinal;
  pod.revision = revision;
  pod.ready = ready;
  pod.since = since;
  return pod;
}

RollPod ds(const std::string& node, const std::string& revision, bool ready = true) {
  RollPod pod;
  pod.name = "agent-" + node;
  pod.node = node;
  pod.revision = revision;
  pod.ready = ready;
  pod.since = kNow - hours{1};
  return pod;
}

RollWorkload onDelete(WorkloadKind kind = WorkloadKind::StatefulSet, int desired = 3) {
  RollWorkload w;
  w.kind = kind;
  w.strategy = UpdateStrategy::OnDelete;
  w.statusCurrent = true;
  w.updateRevision = "new";
  w.desired = desired;
  return w;
}

}  // namespace

TEST_CASE("a StatefulSet rolls from the highest ordinal down and one pod at a time", "[roll]") {
  const RollWorkload w = onDelete();
  SECTION("all old: the highest ordinal goes first, whatever the list order") {
    const auto d = decideRoll(w, {sts(0, "old"), sts(2, "old"), sts(1, "old")}, kNow, kTimeout);
    CHECK(d.state == State::Rolling);
    CHECK(d.evict == "web-2");
    CHECK(d.outdated == std::vector<std::string>{"web-2", "web-1", "web-0"});
  }
  SECTION("2 replaced and available: 1 next") {
    const auto d = decideRoll(w, {sts(0, "old"), sts(1, "old"), sts(2, "new")}, kNow, kTimeout);
    CHECK(d.evict == "web-1");
    CHECK(d.outdated == std::vector<std::string>{"web-1", "web-0"});
  }
  SECTION("2 and 1 replaced: 0 last") {
    CHECK(decideRoll(w, {sts(0, "old"), sts(1, "new"), sts(2, "new")}, kNow, kTimeout).evict == "web-0");
  }
  SECTION("ordinals of two digits order as numbers, not text") {
    RollWorkload eleven = onDelete(WorkloadKind::StatefulSet, 11);
    std::vector<RollPod> pods;
    for (int i = 0; i < 11; ++i) pods.push_back(sts(i, "old"));
    CHECK(decideRoll(eleven, pods, kNow, kTimeout).evict == "web-10");
  }
  SECTION("every pod on the update revision: done, nothing evicted") {
    const auto d = decideRoll(w, {sts(0, "new"), sts(1, "new"), sts(2, "new")}, kNow, kTimeout);
    CHECK(d.state == State::Done);
    CHECK_FALSE(d.evict);
    CHECK(d.outdated.empty());
  }
}

TEST_CASE("never a second pod unavailable: the roll waits for every replacement", "[roll]") {
  const RollWorkload w = onDelete();
  SECTION("the evicted pod is still terminating") {
    RollPod terminating = sts(2, "old");
    terminating.terminating = true;
    const auto d = decideRoll(w, {sts(0, "old"), sts(1, "old"), terminating}, kNow, kTimeout);
    CHECK(d.state == State::Rolling);
    CHECK_FALSE(d.evict);
    CHECK(d.blockingPod == "web-2");
    CHECK(d.outdated == std::vector<std::string>{"web-1", "web-0"});  // a terminating pod is going
  }
  SECTION("the evicted pod is gone and its replacement not created yet") {
    const auto d = decideRoll(w, {sts(0, "old"), sts(1, "old")}, kNow, kTimeout);
    CHECK(d.state == State::Rolling);
    CHECK_FALSE(d.evict);
    CHECK_FALSE(d.recheckAt);
  }
  SECTION("a scale-up in progress (more pods than desired after a scale-down) waits too") {
    const auto d = decideRoll(w, {sts(0, "old"), sts(1, "old"), sts(2, "old"), sts(3, "old")}, kNow, kTimeout);
    CHECK_FALSE(d.evict);
  }
  SECTION("the replacement exists and is not Ready yet: wait, look again at the timeout") {
    const auto d =
        decideRoll(w, {sts(0, "old"), sts(1, "old"), sts(2, "new", false, kNow - seconds{30})}, kNow, kTimeout);
    CHECK(d.state == State::Rolling);
    CHECK_FALSE(d.evict);
    CHECK(d.blockingPod == "web-2");
    CHECK(d.recheckAt == kNow - seconds{30} + kTimeout);
  }
  SECTION("the replacement Ready but not for minReadySeconds: wait until it is") {
    RollWorkload slow = w;
    slow.minReadySeconds = seconds{20};
    const auto pods =
        std::vector<RollPod>{sts(0, "old"), sts(1, "old"), sts(2, "new", true, kNow - seconds{5})};
    const auto d = decideRoll(slow, pods, kNow, kTimeout);
    CHECK_FALSE(d.evict);
    CHECK(d.recheckAt == kNow + seconds{15});
    CHECK(decideRoll(slow, pods, kNow + seconds{15}, kTimeout).evict == "web-1");
  }
  SECTION("an old pod that is Ready but not for minReadySeconds is unavailable: it goes first") {
    RollWorkload slow = w;
    slow.minReadySeconds = seconds{20};
    const auto d = decideRoll(slow, {sts(0, "old", true, kNow - seconds{1}), sts(1, "old"), sts(2, "old")},
                              kNow, kTimeout);
    CHECK(d.evict == "web-0");
  }
  SECTION("an old pod that is not Ready is replaced first: it is down already") {
    const auto d = decideRoll(w, {sts(0, "old"), sts(1, "old", false), sts(2, "old")}, kNow, kTimeout);
    CHECK(d.evict == "web-1");
  }
  SECTION("a Ready pod whose transition time is unknown counts as available") {
    RollPod unknown = sts(2, "new");
    unknown.since.reset();
    RollWorkload slow = w;
    slow.minReadySeconds = seconds{20};
    CHECK(decideRoll(slow, {sts(0, "old"), sts(1, "old"), unknown}, kNow, kTimeout).evict == "web-1");
  }
}

TEST_CASE("a replacement not Ready within the timeout pauses the roll", "[roll]") {
  const RollWorkload w = onDelete();
  const auto stuck = sts(2, "new", false, kNow - kTimeout);
  SECTION("at the timeout: paused on that pod, nothing evicted") {
    const auto d = decideRoll(w, {sts(0, "old"), sts(1, "old"), stuck}, kNow, kTimeout);
    CHECK(d.state == State::Paused);
    CHECK_FALSE(d.evict);
    CHECK(d.blockingPod == "web-2");
    CHECK_THAT(d.reason, Catch::Contains("web-2") && Catch::Contains("10m"));
    CHECK_FALSE(d.recheckAt);
  }
  SECTION("just before it: still waiting") {
    CHECK(decideRoll(w, {sts(0, "old"), sts(1, "old"), stuck}, kNow - seconds{1}, kTimeout).state ==
          State::Rolling);
  }
  SECTION("once it is Ready the roll goes on") {
    CHECK(decideRoll(w, {sts(0, "old"), sts(1, "old"), sts(2, "new")}, kNow, kTimeout).evict == "web-1");
  }
  SECTION("a new revision makes the stuck pod outdated: it is replaced first") {
    RollWorkload newer = w;
    newer.updateRevision = "newer";
    const auto d = decideRoll(newer, {sts(0, "old"), sts(1, "old"), stuck}, kNow, kTimeout);
    CHECK(d.state == State::Rolling);
    CHECK(d.evict == "web-2");
  }
  SECTION("a pod whose not-Ready time is unknown waits and never pauses") {
    RollPod unknown = stuck;
    unknown.since.reset();
    const auto d = decideRoll(w, {sts(0, "old"), sts(1, "old"), unknown}, kNow + hours{24}, kTimeout);
    CHECK(d.state == State::Rolling);
    CHECK_FALSE(d.evict);
    CHECK_FALSE(d.recheckAt);
  }
}

TEST_CASE("a DaemonSet rolls one node at a time in node order", "[roll]") {
  const RollWorkload w = onDelete(WorkloadKind::DaemonSet, 2);
  SECTION("the first node first") {
    const auto d = decideRoll(w, {ds("node-b", "old"), ds("node-a", "old")}, kNow, kTimeout);
    CHECK(d.evict == "agent-node-a");
    CHECK(d.outdated == std::vector<std::string>{"agent-node-a", "agent-node-b"});
  }
  SECTION("the replacement on node-a not Ready: wait") {
    const auto d = decideRoll(w, {ds("node-b", "old"), ds("node-a", "new", false)}, kNow, kTimeout);
    CHECK_FALSE(d.evict);
    CHECK(d.blockingPod == "agent-node-a");
  }
  SECTION("node-a replaced: node-b") {
    CHECK(decideRoll(w, {ds("node-b", "old"), ds("node-a", "new")}, kNow, kTimeout).evict == "agent-node-b");
  }
  SECTION("a pod missing on a node: wait for the DaemonSet controller") {
    CHECK_FALSE(decideRoll(w, {ds("node-b", "old")}, kNow, kTimeout).evict);
  }
}

TEST_CASE("what restarter does not roll", "[roll]") {
  SECTION("opt-out: manual lists the outdated pods and evicts nothing") {
    RollWorkload w = onDelete();
    w.manual = true;
    const auto d = decideRoll(w, {sts(0, "old"), sts(1, "new"), sts(2, "old")}, kNow, kTimeout);
    CHECK(d.state == State::Manual);
    CHECK_FALSE(d.evict);
    CHECK(d.outdated == std::vector<std::string>{"web-2", "web-0"});
  }
  SECTION("RollingUpdate: Kubernetes rolls") {
    RollWorkload w = onDelete();
    w.strategy = UpdateStrategy::RollingUpdate;
    const auto d = decideRoll(w, {sts(0, "old"), sts(1, "old"), sts(2, "old")}, kNow, kTimeout);
    CHECK(d.state == State::KubernetesRolls);
    CHECK_FALSE(d.evict);
  }
  SECTION("a partition keeps the pods below it, and restarter evicts nothing") {
    RollWorkload w = onDelete();
    w.strategy = UpdateStrategy::RollingUpdate;
    w.partition = 2;
    const auto d = decideRoll(w, {sts(0, "old"), sts(1, "old"), sts(2, "new")}, kNow, kTimeout);
    CHECK(d.state == State::Partitioned);
    CHECK_FALSE(d.evict);
    CHECK(d.kept == std::vector<std::string>{"web-1", "web-0"});
    CHECK_THAT(d.reason, Catch::Contains("partition 2"));
  }
  SECTION("a partition with every pod above it updated is not partitioned") {
    RollWorkload w = onDelete();
    w.strategy = UpdateStrategy::RollingUpdate;
    w.partition = 1;
    CHECK(decideRoll(w, {sts(0, "new"), sts(1, "new")}, kNow, kTimeout).state == State::KubernetesRolls);
  }
  SECTION("a status behind the template: wait, evict nothing") {
    RollWorkload w = onDelete();
    w.statusCurrent = false;
    const auto d = decideRoll(w, {sts(0, "old"), sts(1, "old"), sts(2, "old")}, kNow, kTimeout);
    CHECK(d.state == State::Stale);
    CHECK_FALSE(d.evict);
    CHECK(d.outdated.empty());
  }
  SECTION("no update revision known (a DaemonSet without revisions): wait") {
    RollWorkload w = onDelete(WorkloadKind::DaemonSet, 1);
    w.updateRevision.clear();
    CHECK(decideRoll(w, {ds("a", "old")}, kNow, kTimeout).state == State::Stale);
  }
}

TEST_CASE("the decision depends only on the cluster state: a restart resumes without a second eviction",
          "[roll]") {
  // The same pods give the same decision however often asked: after the first eviction the pod is
  // terminating, then missing, then replaced; at no point is another pod chosen early.
  const RollWorkload w = onDelete();
  RollPod evicted = sts(2, "old");
  evicted.terminating = true;
  const std::vector<std::vector<RollPod>> timeline = {
      {sts(0, "old"), sts(1, "old"), evicted},
      {sts(0, "old"), sts(1, "old")},
      {sts(0, "old"), sts(1, "old"), sts(2, "new", false, kNow)},
  };
  for (const auto& pods : timeline) {
    for (int asked = 0; asked < 3; ++asked) CHECK_FALSE(decideRoll(w, pods, kNow, kTimeout).evict);
  }
  CHECK(decideRoll(w, {sts(0, "old"), sts(1, "old"), sts(2, "new")}, kNow, kTimeout).evict == "web-1");
}

TEST_CASE("roll states have stable names", "[roll]") {
  CHECK(std::string(rollStateName(State::Rolling)) == "rolling");
  CHECK(std::string(rollStateName(State::Paused)) == "paused");
  CHECK(std::string(rollStateName(State::Done)) == "done");
  CHECK(std::string(rollStateName(State::Manual)) == "manual");
  CHECK(std::string(rollStateName(State::Partitioned)) == "partitioned");
}
