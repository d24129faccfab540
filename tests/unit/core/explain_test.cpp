#include "restarter/core/explain.hpp"

#include <catch2/catch.hpp>

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace explain_test {

using namespace restarter::core;
using nlohmann::json;

namespace {

const std::string kCm = "configmap.restarter.stackable.tech/cfg";

json podTemplate(const std::string& image, const json& annotations = json::object()) {
  return {{"metadata", {{"labels", {{"app", "web"}}}, {"annotations", annotations}}},
          {"spec",
           {{"containers", {{{"name", "app"}, {"image", image}}}},
            {"volumes", {{{"name", "cfg"}, {"configMap", {{"name", "cfg"}}}}}}}}};
}

Revision revision(std::int64_t number, json tmpl) {
  return Revision{"web-" + std::to_string(number), number, "2026-11-29T18:00:0" + std::to_string(number) + "Z",
                  std::move(tmpl), 0};
}

json workloadWithManagers(std::int64_t generation, const std::vector<std::string>& annotationOwners) {
  json managed = json::array();
  managed.push_back({{"manager", "kube-controller-manager"},
                     {"operation", "Update"},
                     {"fieldsV1", {{"f:status", json::object()}}}});
  for (const std::string& owner : annotationOwners) {
    managed.push_back(
        {{"manager", owner},
         {"operation", "Apply"},
         {"fieldsV1",
          {{"f:spec",
            {{"f:template", {{"f:metadata", {{"f:annotations", {{"f:" + kCm, json::object()}}}}}}}}}}}});
  }
  return {{"metadata", {{"generation", generation}, {"managedFields", managed}}},
          {"spec", {{"template", podTemplate("web:1", {{kCm, "u/1"}})}}}};
}

}  // namespace

TEST_CASE("kinds parse like kubectl's names", "[explain]") {
  CHECK(*parseWorkloadKind("sts") == WorkloadKind::StatefulSet);
  CHECK(*parseWorkloadKind("StatefulSets") == WorkloadKind::StatefulSet);
  CHECK(*parseWorkloadKind("deploy") == WorkloadKind::Deployment);
  CHECK(*parseWorkloadKind("daemonset.apps") == WorkloadKind::DaemonSet);
  CHECK_FALSE(parseWorkloadKind("pod").ok());
  CHECK(fieldManagerFor(WorkloadKind::StatefulSet) == "restarter.stackable.tech/statefulset");
}

TEST_CASE("each revision is explained against the one before it", "[explain]") {
  const auto explained = explainRevisions({revision(3, podTemplate("web:2", {{kCm, "u/2"}})),
                                           revision(1, podTemplate("web:1", {{kCm, "u/1"}})),
                                           revision(2, podTemplate("web:1", {{kCm, "u/2"}}))});
  REQUIRE(explained.size() == 3);
  CHECK(explained[0].revision.number == 1);
  CHECK(explained[0].cause.created);
  REQUIRE(explained[1].cause.annotations.size() == 1);
  CHECK(explained[1].cause.annotations[0].describe() == "configmap/cfg: u/1 -> u/2 (updated)");
  CHECK(explained[1].cause.templatePaths.empty());
  CHECK(explained[2].cause.annotations.empty());
  CHECK(explained[2].cause.templatePaths == std::vector<std::string>{"containers[app].image"});
}

TEST_CASE("a second revision that only adds annotations is the extra restart", "[explain]") {
  const auto explained =
      explainRevisions({revision(1, podTemplate("web:1")), revision(2, podTemplate("web:1", {{kCm, "u/1"}}))});
  const FirstRollout first = judgeFirstRollout(
      workloadWithManagers(2, {"restarter.stackable.tech/statefulset"}), WorkloadKind::StatefulSet, explained);
  CHECK(first.verdict == FirstRolloutVerdict::ExtraRestart);
  CHECK(first.generation == 2);
  CHECK(first.revisions == 2);
  CHECK(first.writer == AnnotationWriter::Controller);
}

TEST_CASE("annotations present from revision 1 and owned by no manager were written at admission",
          "[explain]") {
  const auto explained = explainRevisions({revision(1, podTemplate("web:1", {{kCm, "u/1"}}))});
  const FirstRollout first =
      judgeFirstRollout(workloadWithManagers(1, {}), WorkloadKind::StatefulSet, explained);
  CHECK(first.verdict == FirstRolloutVerdict::RestartFree);
  CHECK(first.writer == AnnotationWriter::Admission);
  CHECK(first.fieldManager.empty());
  CHECK_THAT(first.reason, Catch::Contains("already carried"));
}

TEST_CASE("annotations owned by another manager came with the manifest", "[explain]") {
  const auto explained = explainRevisions({revision(1, podTemplate("web:1", {{kCm, "u/1"}}))});
  const FirstRollout first =
      judgeFirstRollout(workloadWithManagers(1, {"kubectl-create"}), WorkloadKind::StatefulSet, explained);
  CHECK(first.writer == AnnotationWriter::Other);
  CHECK(first.fieldManager == "kubectl-create");
}

TEST_CASE("a first rollout that cannot be judged says why", "[explain]") {
  CHECK(judgeFirstRollout(workloadWithManagers(1, {}), WorkloadKind::StatefulSet, {}).verdict ==
        FirstRolloutVerdict::Unknown);
  const auto pruned = explainRevisions({revision(4, podTemplate("web:1"))});
  const FirstRollout first = judgeFirstRollout(workloadWithManagers(9, {}), WorkloadKind::Deployment, pruned);
  CHECK(first.verdict == FirstRolloutVerdict::Unknown);
  CHECK_THAT(first.reason, Catch::Contains("revisionHistoryLimit"));
  CHECK(judgeFirstRollout(json::array(), WorkloadKind::DaemonSet, pruned).writer == AnnotationWriter::None);
  json noManagedFields = workloadWithManagers(1, {});
  noManagedFields["metadata"].erase("managedFields");
  CHECK(judgeFirstRollout(noManagedFields, WorkloadKind::DaemonSet, pruned).writer ==
        AnnotationWriter::Unknown);
  json noAnnotations = workloadWithManagers(1, {"restarter.stackable.tech/daemonset"});
  noAnnotations["spec"]["template"]["metadata"].erase("annotations");
  CHECK(judgeFirstRollout(noAnnotations, WorkloadKind::DaemonSet, pruned).writer == AnnotationWriter::None);
}

TEST_CASE("a lone revision without annotations that are pending is an extra restart to come", "[explain]") {
  const auto explained = explainRevisions({revision(1, podTemplate("web:1"))});
  AnnotationChange add;
  add.key = kCm;
  add.name = "cfg";
  add.after = "u/1";
  add.cause = ChangeCause::Added;
  const FirstRollout pendingAdd =
      judgeFirstRollout(workloadWithManagers(1, {}), WorkloadKind::StatefulSet, explained, {add});
  CHECK(pendingAdd.verdict == FirstRolloutVerdict::ExtraRestart);
  CHECK_THAT(pendingAdd.reason, Catch::Contains("pending"));
  CHECK(judgeFirstRollout(workloadWithManagers(1, {}), WorkloadKind::StatefulSet, explained).verdict ==
        FirstRolloutVerdict::RestartFree);
}

TEST_CASE("a rollout is held while its latest RolloutHeld Event is newer than the last rollout", "[explain]") {
  using namespace std::chrono_literals;
  const TimePoint t0 = TimePoint(std::chrono::seconds(1'800'000'000));
  const std::vector<HeldRollout> events = {{t0 + 5s, t0 + 20s}, {t0 + 25s, t0 + 40s}, {t0 + 2s, t0 + 20s}};
  // The latest Event wins, whatever the order they were listed in.
  const auto held = currentRolloutHold(events, t0 + 20s, true);
  REQUIRE(held);
  CHECK(held->recorded == t0 + 25s);
  CHECK(held->until == t0 + 40s);
  // No record of a rollout (the controller never rolled it): the Event stands.
  CHECK(currentRolloutHold(events, std::nullopt, true));
  // The held rollout was made: the workload's record is newer (or as new) than the Event.
  CHECK_FALSE(currentRolloutHold(events, t0 + 40s, true));
  CHECK_FALSE(currentRolloutHold(events, t0 + 25s, true));
  // Nothing pending (someone else's rollout applied the change): nothing is held.
  CHECK_FALSE(currentRolloutHold(events, t0 + 20s, false));
  CHECK_FALSE(currentRolloutHold({}, t0, true));
}

}  // namespace explain_test
