#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "restarter/controller/ondelete.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace ondelete_step_test {

using namespace restarter::controller;
using namespace std::chrono_literals;
using restarter::core::RollDecision;
using restarter::core::TimePoint;
using State = RollDecision::State;
using Kind = RollStep::Kind;

namespace {

const TimePoint kNow{std::chrono::seconds(1'800'000'000)};

// A decision in few words: its state, the pod to evict and when time alone may change it.
struct Decision {
  State state = State::Rolling;
  std::optional<std::string> evict{};
  std::optional<TimePoint> recheckAt{};
};

struct Row {
  const char* what;
  Decision decision;
  bool dryRun;
  Kind kind;
  milliseconds after;
};

}  // namespace

TEST_CASE("each roll decision leads to the step its contract names", "[controller][ondelete]") {
  const std::vector<Row> rows = {
      {"Kubernetes rolls: nothing until the workload changes",
       {State::KubernetesRolls},
       false,
       Kind::AwaitChange,
       0ms},
      {"partitioned: nothing", {State::Partitioned}, false, Kind::AwaitChange, 0ms},
      {"stale status: nothing (its status update queues it)", {State::Stale}, false, Kind::AwaitChange, 0ms},
      {"opted out: nothing", {State::Manual}, false, Kind::AwaitChange, 0ms},
      {"done: nothing", {State::Done}, false, Kind::AwaitChange, 0ms},
      {"paused: announced and looked at again after the poll", {State::Paused}, false, Kind::Pause, kRollPoll},
      {"paused in a dry run alike", {State::Paused}, true, Kind::Pause, kRollPoll},
      {"waiting without a recheck time: the poll", {State::Rolling}, false, Kind::Wait, kRollPoll},
      {"waiting until a recheck time: that long",
       {State::Rolling, std::nullopt, kNow + 2500ms},
       false,
       Kind::Wait,
       2500ms},
      {"waiting until a recheck time part of a millisecond away: rounded up",
       {State::Rolling, std::nullopt, kNow + 1500us},
       false,
       Kind::Wait,
       2ms},
      {"waiting until a recheck time past: at least a millisecond",
       {State::Rolling, std::nullopt, kNow - 5s},
       false,
       Kind::Wait,
       1ms},
      {"waiting until a recheck time beyond the poll: the poll",
       {State::Rolling, std::nullopt, kNow + kRollPoll + 1s},
       false,
       Kind::Wait,
       kRollPoll},
      {"waiting in a dry run alike", {State::Rolling, std::nullopt, kNow + 2s}, true, Kind::Wait, 2000ms},
      {"a pod to evict: evicted", {State::Rolling, "web-2"}, false, Kind::Evict, 0ms},
      {"a pod to evict in a dry run: every eviction announced",
       {State::Rolling, "web-2"},
       true,
       Kind::AnnounceDryRun,
       0ms},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    RollDecision decision;
    decision.state = row.decision.state;
    decision.evict = row.decision.evict;
    decision.recheckAt = row.decision.recheckAt;
    decision.outdated = {"web-2", "web-1"};
    const RollStep step = nextRollStep(decision, kNow, row.dryRun);
    CHECK(step.kind == row.kind);
    CHECK(step.after == row.after);
    // The decision goes along whole: the act step names its pods and reason.
    CHECK(step.decision.state == row.decision.state);
    CHECK(step.decision.evict == row.decision.evict);
    CHECK(step.decision.outdated == std::vector<std::string>{"web-2", "web-1"});
  }
}

}  // namespace ondelete_step_test
