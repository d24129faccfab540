#include "restarter/core/rollout.hpp"

#include <cstdint>

#include <catch2/catch.hpp>

#include "restarter/base/rfc3339.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace rollout_test {

using namespace restarter::core;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

TimePoint at(std::chrono::microseconds offset) {
  return TimePoint(std::chrono::seconds(1'800'000'000)) + offset;
}

json stamped(json value) {
  return {{"metadata", {{"name", "web"}, {"annotations", {{"restarter.stackable.tech/last-rollout", value}}}}}};
}

const RolloutProgress kInProgress{false, "2 of 3 pods updated"};
const RolloutProgress kFinished{};

json workload(json spec, json status, std::int64_t generation = 2) {
  return {{"metadata", {{"name", "web"}, {"generation", generation}}}, {"spec", spec}, {"status", status}};
}

}  // namespace

TEST_CASE("rollout: a workload rolls at once without an interval or without a record", "[rollout]") {
  CHECK(decideRollout(at(0s), at(0s), 0ms, kInProgress).rollNow);
  CHECK(decideRollout(at(0s), at(0s), -5ms, kInProgress).rollNow);
  CHECK(decideRollout(std::nullopt, at(0s), 20s, kInProgress).rollNow);
}

TEST_CASE("rollout: nothing rolls within the floor even when the previous rollout has finished", "[rollout]") {
  const auto justRolled = decideRollout(at(0s), at(0s), 5min, kFinished);
  CHECK_FALSE(justRolled.rollNow);
  CHECK(justRolled.wait == RolloutWait::Floor);
  CHECK(justRolled.notBefore == at(kMinRolloutFloor));
  const auto lastMicrosecond = decideRollout(at(0s), at(10s - 1us), 5min, kFinished);
  CHECK(lastMicrosecond.wait == RolloutWait::Floor);
  CHECK(lastMicrosecond.notBefore == at(10s));
  // The end of the floor itself may roll.
  CHECK(decideRollout(at(0s), at(10s), 5min, kFinished).rollNow);
  // An interval below the floor is the floor: it never holds longer than the interval.
  CHECK(decideRollout(at(0s), at(1499ms), 1500ms, kInProgress).notBefore == at(1500ms));
  CHECK(decideRollout(at(0s), at(1499ms), 1500ms, kInProgress).wait == RolloutWait::Floor);
  CHECK(decideRollout(at(0s), at(1500ms), 1500ms, kInProgress).rollNow);
  // The floor is a parameter: a zero floor leaves only the progress.
  CHECK(decideRollout(at(0s), at(0s), 5min, kFinished, 0ms).rollNow);
}

TEST_CASE("rollout: after the floor a change waits for the previous rollout and not for the interval",
          "[rollout]") {
  const auto inProgress = decideRollout(at(0s), at(10s), 5min, kInProgress);
  CHECK_FALSE(inProgress.rollNow);
  CHECK(inProgress.wait == RolloutWait::Progress);
  CHECK(inProgress.waitingFor == "2 of 3 pods updated");
  CHECK(inProgress.notBefore == at(5min));  // the upper bound
  const auto finished = decideRollout(at(0s), at(11s), 5min, kFinished);
  CHECK(finished.rollNow);
  CHECK(finished.wait == RolloutWait::None);
  CHECK_THAT(finished.reason, Catch::Contains("finished"));
}

TEST_CASE("rollout: the interval is the upper bound of a rollout that never finishes", "[rollout]") {
  CHECK_FALSE(decideRollout(at(0s), at(20s - 1us), 20s, kInProgress).rollNow);
  CHECK(decideRollout(at(0s), at(20s - 1us), 20s, kInProgress).notBefore == at(20s));
  CHECK(decideRollout(at(0s), at(20s), 20s, kInProgress).rollNow);
  CHECK(decideRollout(at(0s), at(1h), 20s, kInProgress).rollNow);
}

TEST_CASE("rollout: a record up to one interval in the future holds and a later one is ignored", "[rollout]") {
  // Another replica's clock runs ahead: its stamp is in our future, the floor counts from it, and
  // the hold ends an interval after it at the latest (at most two intervals from now).
  const auto ahead = decideRollout(at(20s), at(0s), 20s, kInProgress);
  CHECK_FALSE(ahead.rollNow);
  CHECK(ahead.wait == RolloutWait::Floor);
  CHECK(ahead.notBefore == at(30s));
  CHECK(decideRollout(at(20s), at(30s), 20s, kInProgress).notBefore == at(40s));
  // More than an interval ahead is no clock skew (a hand edit): it must not hold the workload.
  const auto beyond = decideRollout(at(20s + 1us), at(0s), 20s, kInProgress);
  CHECK(beyond.rollNow);
  CHECK_THAT(beyond.reason, Catch::Contains("future"));
}

TEST_CASE("rollout: a Deployment has finished when every pod is updated and available and no old one is left",
          "[rollout]") {
  const json spec = {{"replicas", 2}};
  const auto progress = [&](json status, std::int64_t generation = 2) {
    return rolloutProgressOf(workload(spec, std::move(status), generation), WorkloadKind::Deployment);
  };
  const json done = {
      {"observedGeneration", 2}, {"replicas", 2}, {"updatedReplicas", 2}, {"availableReplicas", 2}};
  CHECK(progress(done).finished);
  CHECK(progress(done, 3).missing == "generation 3 not yet observed by the Deployment controller");
  CHECK(progress({{"observedGeneration", 2}, {"replicas", 3}, {"updatedReplicas", 1}, {"availableReplicas", 2}})
            .missing == "1 of 2 pods updated");
  CHECK(progress({{"observedGeneration", 2}, {"replicas", 3}, {"updatedReplicas", 2}, {"availableReplicas", 2}})
            .missing == "1 old pod left");
  CHECK(progress({{"observedGeneration", 2}, {"replicas", 2}, {"updatedReplicas", 2}, {"availableReplicas", 1}})
            .missing == "1 of 2 pods available");
  // No status yet: the new workload's first rollout has not been observed.
  CHECK_FALSE(rolloutProgressOf(json{{"metadata", {{"generation", 1}}}}, WorkloadKind::Deployment).finished);
  // spec.replicas defaults to 1; zero replicas are finished at once.
  CHECK(rolloutProgressOf(
            workload(
                json::object(),
                {{"observedGeneration", 2}, {"replicas", 1}, {"updatedReplicas", 1}, {"availableReplicas", 1}}),
            WorkloadKind::Deployment)
            .finished);
  CHECK(rolloutProgressOf(workload({{"replicas", 0}}, {{"observedGeneration", 2}}), WorkloadKind::Deployment)
            .finished);
}

TEST_CASE("rollout: a StatefulSet has finished when the pods above its partition are updated and all are ready",
          "[rollout]") {
  const auto progress = [](json spec, json status) {
    return rolloutProgressOf(workload(std::move(spec), std::move(status)), WorkloadKind::StatefulSet);
  };
  const json three = {{"replicas", 3}};
  CHECK(progress(three, {{"observedGeneration", 2}, {"updatedReplicas", 3}, {"readyReplicas", 3}}).finished);
  CHECK(progress(three, {{"observedGeneration", 2}, {"updatedReplicas", 2}, {"readyReplicas", 3}}).missing ==
        "2 of 3 pods updated");
  CHECK(progress(three, {{"observedGeneration", 2}, {"updatedReplicas", 3}, {"readyReplicas", 2}}).missing ==
        "2 of 3 pods ready");
  // A partition of 2 keeps ordinals 0 and 1 on the old revision: one updated pod is all there is.
  const json partitioned = {
      {"replicas", 3}, {"updateStrategy", {{"type", "RollingUpdate"}, {"rollingUpdate", {{"partition", 2}}}}}};
  CHECK(progress(partitioned, {{"observedGeneration", 2}, {"updatedReplicas", 1}, {"readyReplicas", 3}})
            .finished);
  CHECK(progress(partitioned, {{"observedGeneration", 2}, {"updatedReplicas", 0}, {"readyReplicas", 3}})
            .missing == "0 of 1 pod updated");
  // OnDelete: every pod counts (restarter's roll, or the user's deletions, replace them).
  const json onDelete = {{"replicas", 3}, {"updateStrategy", {{"type", "OnDelete"}}}};
  CHECK(progress(onDelete, {{"observedGeneration", 2}, {"updatedReplicas", 1}, {"readyReplicas", 3}}).missing ==
        "1 of 3 pods updated");
  CHECK(progress(onDelete, {{"observedGeneration", 2}, {"updatedReplicas", 3}, {"readyReplicas", 3}}).finished);
  // Counters of the wrong type count as absent, never throw.
  CHECK_FALSE(
      progress(three, {{"observedGeneration", "2"}, {"updatedReplicas", 3}, {"readyReplicas", 3}}).finished);
  CHECK(rolloutProgressOf(json::array(), WorkloadKind::StatefulSet).finished);
}

TEST_CASE("rollout: a DaemonSet has finished when every scheduled pod is updated and available", "[rollout]") {
  const auto progress = [](json status) {
    return rolloutProgressOf(workload(json::object(), std::move(status)), WorkloadKind::DaemonSet);
  };
  CHECK(progress({{"observedGeneration", 2},
                  {"desiredNumberScheduled", 2},
                  {"updatedNumberScheduled", 2},
                  {"numberAvailable", 2}})
            .finished);
  CHECK(progress({{"observedGeneration", 2},
                  {"desiredNumberScheduled", 2},
                  {"updatedNumberScheduled", 1},
                  {"numberAvailable", 2}})
            .missing == "1 of 2 pods updated");
  CHECK(progress({{"observedGeneration", 2},
                  {"desiredNumberScheduled", 2},
                  {"updatedNumberScheduled", 2},
                  {"numberAvailable", 1}})
            .missing == "1 of 2 pods available");
  CHECK(progress({{"observedGeneration", 1}}).missing ==
        "generation 2 not yet observed by the DaemonSet controller");
}

TEST_CASE("rollout: a hold says what it waits for", "[rollout]") {
  CHECK(describeHold(decideRollout(at(0s), at(12s), 5min, kInProgress)) ==
        "waiting for the previous rollout (2 of 3 pods updated), at most until " +
            restarter::base::formatRfc3339(at(5min)));
  CHECK(describeHold(decideRollout(at(0s), at(1s), 5min, kFinished)) ==
        "held until " + restarter::base::formatRfc3339(at(10s)) +
            " (the previous rollout was less than 10s ago)");
  CHECK(describeHold(decideRollout(at(0s), at(12s), 5min, kFinished)) == "not held");
  // Within the floor, an unfinished rollout is named already: that is what the hold will wait for.
  const auto early = decideRollout(at(0s), at(1s), 5min, kInProgress);
  CHECK(early.wait == RolloutWait::Floor);
  CHECK(early.notBefore == at(10s));
  CHECK(describeHold(early) == "waiting for the previous rollout (2 of 3 pods updated), at most until " +
                                   restarter::base::formatRfc3339(at(5min)));
}

TEST_CASE("rollout: the record is read from the workload metadata annotation", "[rollout]") {
  CHECK(lastRolloutOf(stamped("2027-01-15T08:00:00Z")) ==
        restarter::base::parseRfc3339("2027-01-15T08:00:00Z").value());
  CHECK(lastRolloutOf(stamped("2027-01-15T08:00:00.250000Z")) ==
        restarter::base::parseRfc3339("2027-01-15T08:00:00.25Z").value());
  CHECK_FALSE(lastRolloutOf(stamped("yesterday")));
  CHECK_FALSE(lastRolloutOf(stamped(42)));
  CHECK_FALSE(lastRolloutOf(json{{"metadata", {{"name", "web"}}}}));
  CHECK_FALSE(lastRolloutOf(json{{"metadata", {{"annotations", "x"}}}}));
  CHECK_FALSE(lastRolloutOf(json{{"metadata", 1}}));
  CHECK_FALSE(lastRolloutOf(json::array()));
}

TEST_CASE("rollout: the held note names its end and what it waits for and reads back", "[rollout]") {
  const RolloutDecision decision = decideRollout(at(250ms), at(15s), 20s, kInProgress);
  REQUIRE(decision.wait == RolloutWait::Progress);
  const std::string note = rolloutHeldNote(decision, at(250ms), 20s, "shop",
                                           "configmap/a: u/1 -> u/2 (updated); secret/b: none -> v/1 (added)");
  CHECK(note.rfind("Rollout held at most until ", 0) == 0);
  CHECK_THAT(note, Catch::Contains("waiting for the previous rollout (2 of 3 pods updated)") &&
                       Catch::Contains("at most one rollout per 20s") && Catch::Contains("namespace shop") &&
                       Catch::Contains("configmap/a: u/1 -> u/2 (updated); secret/b"));
  CHECK(note.find("at most until") == note.rfind("at most until"));  // the upper bound is said once
  CHECK(heldUntilFromNote(note) == at(20s + 250ms));
  // Notes written when the interval alone held a rollout still read back.
  CHECK(heldUntilFromNote("Rollout held until " + restarter::base::formatRfc3339(at(20s)) +
                          "; at most one rollout per 20s") == at(20s));
  CHECK_FALSE(heldUntilFromNote("Restarting pods: referenced objects changed"));
  CHECK_FALSE(heldUntilFromNote("Rollout held until later; at most one rollout per 20s"));
  CHECK_FALSE(heldUntilFromNote(""));
}

TEST_CASE("rollout: an Argo Rollout has finished when its string generation is observed and it is Healthy",
          "[rollout]") {
  const json spec = {{"replicas", 2}};
  auto progress = [&spec](json status, std::int64_t generation = 2) {
    return rolloutProgressOf(workload(spec, std::move(status), generation), WorkloadKind::Rollout);
  };
  const json done = {{"observedGeneration", "2"},
                     {"replicas", 2},
                     {"updatedReplicas", 2},
                     {"availableReplicas", 2},
                     {"phase", "Healthy"}};
  CHECK(progress(done).finished);
  // Argo writes the generation as a decimal string; an integer is read too.
  json integer = done;
  integer["observedGeneration"] = 2;
  CHECK(progress(integer).finished);
  CHECK(progress(done, 3).missing == "generation 3 not yet observed by the Argo Rollouts controller");
  // An old controller's hash, an absent field or a number out of range is no observed generation.
  for (const json& bad : {json("5d8f7c"), json(""), json("-1"), json("1234567890123456789012"), json(true)}) {
    json odd = done;
    odd["observedGeneration"] = bad;
    CHECK_FALSE(progress(odd).finished);
  }
  json unobserved = done;
  unobserved.erase("observedGeneration");
  CHECK_FALSE(progress(unobserved).finished);
  json updating = done;
  updating["updatedReplicas"] = 1;
  CHECK(progress(updating).missing == "1 of 2 pods updated");
  json oldLeft = done;
  oldLeft["replicas"] = 3;
  CHECK(progress(oldLeft).missing == "1 old pod left");
  json unavailable = done;
  unavailable["availableReplicas"] = 0;
  CHECK(progress(unavailable).missing == "0 of 2 pods available");
  // A canary step or a blue-green promotion waiting, an aborted rollout: unfinished.
  json paused = done;
  paused["phase"] = "Paused";
  CHECK(progress(paused).missing == "phase Paused");
  json degraded = done;
  degraded["phase"] = "Degraded";
  CHECK_FALSE(progress(degraded).finished);
  // No status at all: the Argo Rollouts controller has not seen the Rollout.
  CHECK_FALSE(rolloutProgressOf(json{{"metadata", {{"generation", 1}}}}, WorkloadKind::Rollout).finished);
}

}  // namespace rollout_test
