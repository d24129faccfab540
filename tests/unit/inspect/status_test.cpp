#include "restarter/inspect/status.hpp"

#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "restarter/base/rfc3339.hpp"

#include "restarter/core/rollout.hpp"
#include "restarter/inspect/explanation.hpp"

using namespace restarter;
using namespace restarter::inspect;
using nlohmann::json;

namespace {

using inspect_fixtures::kCm;
using inspect_fixtures::podTemplate;

// A StatefulSet of 3 replicas, 2 Ready; revisions: created, a ConfigMap change (a restart by
// restarter), an image change (not one); the ConfigMap is now at version `live`.
ExplainInput input(const std::string& live) {
  ExplainInput in;
  in.kind = core::WorkloadKind::StatefulSet;
  in.workload = {{"metadata", {{"name", "web"}, {"namespace", "shop"}, {"uid", "w-uid"}, {"generation", 3}}},
                 {"spec", {{"replicas", 3}, {"template", podTemplate("web:2", {{kCm, "u/2"}})}}},
                 {"status", {{"readyReplicas", 2}}}};
  in.revisions = {{"web-1", 1, "2026-11-29T18:00:00Z", podTemplate("web:1", {{kCm, "u/1"}}), 0},
                  {"web-2", 2, "2026-11-29T18:01:00Z", podTemplate("web:1", {{kCm, "u/2"}}), 1},
                  {"web-3", 3, "2026-11-29T18:02:00Z", podTemplate("web:2", {{kCm, "u/2"}}), 2}};
  in.currentRevision = "web-3";
  in.desired = core::desiredAnnotations(in.workload, [live](core::RefKind, const std::string&) {
    return core::ObjectState::present("u", live, false);
  });
  return in;
}

WorkloadStatus row(const ExplainInput& in) { return statusFromExplanation(explain(in), in.workload); }

WorkloadStatus named(const std::string& ns, const std::string& name, PendingState pending,
                     core::FirstRolloutVerdict first = core::FirstRolloutVerdict::RestartFree,
                     std::int64_t ready = 1) {
  WorkloadStatus r;
  r.kind = core::WorkloadKind::StatefulSet;
  r.namespace_ = ns;
  r.name = name;
  r.desired = 1;
  r.ready = ready;
  r.current = 1;
  r.pending = pending;
  r.firstRollout = first;
  return r;
}

// An OnDelete StatefulSet n/db with nothing pending; its roll's state is the test's.
Explanation onDeleteExplanation() {
  Explanation explanation;
  explanation.workload = {core::WorkloadKind::StatefulSet, "n", "db", "db-uid"};
  explanation.pending.state = PendingState::UpToDate;
  explanation.firstRollout.verdict = core::FirstRolloutVerdict::RestartFree;
  explanation.roll = Roll{};
  explanation.roll->strategy = core::UpdateStrategy::OnDelete;
  return explanation;
}

std::vector<std::string> names(const std::vector<WorkloadStatus>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.namespace_ + "/" + r.name);
  return out;
}

}  // namespace

TEST_CASE("status: a row condenses the explanation", "[inspect][status]") {
  const WorkloadStatus r = row(input("2"));
  CHECK(r.kind == core::WorkloadKind::StatefulSet);
  CHECK(r.namespace_ == "shop");
  CHECK(r.name == "web");
  CHECK(r.desired == 3);
  CHECK(r.ready == 2);
  CHECK(r.current == 2);   // pods of the current revision, web-3
  CHECK(r.restarts == 1);  // web-2 (a ConfigMap change); web-3 changed the image; web-1 is the creation
  CHECK(r.pending == PendingState::UpToDate);
  CHECK(r.pendingChanges.empty());
  CHECK(r.firstRollout == core::FirstRolloutVerdict::RestartFree);
  CHECK_FALSE(pendingOrUnknown(r));
}

TEST_CASE("status: a pending change is named and fails --fail-if-pending", "[inspect][status]") {
  const WorkloadStatus r = row(input("3"));
  CHECK(r.pending == PendingState::RestartDue);
  REQUIRE(r.pendingChanges.size() == 1);
  CHECK(r.pendingChanges[0] == "configmap/cfg: u/2 -> u/3 (updated)");
  CHECK_FALSE(r.heldUntil);
  CHECK(pendingOrUnknown(r));
}

TEST_CASE("status: a held rollout shows what it waits for or until when", "[inspect][status]") {
  ExplainInput in = input("3");
  const auto last = base::parseRfc3339("2026-11-29T18:02:00Z");
  REQUIRE(last);
  in.workload["metadata"]["annotations"] = {{"restarter.stackable.tech/last-rollout", "2026-11-29T18:02:00Z"}};
  in.workload["status"] = {{"observedGeneration", 3}, {"updatedReplicas", 1}, {"readyReplicas", 2}};
  in.heldRollouts =
      std::vector<core::HeldRollout>{{*last + std::chrono::seconds(10), *last + std::chrono::minutes(5)}};
  in.now = *last + std::chrono::seconds(40);
  const WorkloadStatus r = row(in);
  CHECK(r.pending == PendingState::RestartDue);
  REQUIRE(r.heldUntil);
  CHECK(*r.heldUntil == "2026-11-29T18:07:00Z");
  REQUIRE(r.heldFor);
  CHECK(*r.heldFor == "1 of 3 pods updated");
  REQUIRE(r.lastRollout);
  CHECK(*r.lastRollout == "2026-11-29T18:02:00Z");
  CHECK(renderStatusTable({r}, false, false, "")
            .find("held: waiting for the previous rollout (1 of 3 pods updated)") != std::string::npos);
  CHECK(statusDocument({r})["items"][0]["pending"]["heldFor"] == "1 of 3 pods updated");

  // Within the floor of a finished rollout: held until the floor ends.
  in.workload["status"] = {{"observedGeneration", 3}, {"updatedReplicas", 3}, {"readyReplicas", 3}};
  in.now = *last + std::chrono::seconds(4);
  const WorkloadStatus f = row(in);
  CHECK_FALSE(f.heldFor);
  REQUIRE(f.heldUntil);
  CHECK(*f.heldUntil == "2026-11-29T18:02:10Z");
  CHECK(renderStatusTable({f}, false, false, "").find("held until 2026-11-29T18:02:10Z") != std::string::npos);
}

TEST_CASE("status: a restart held by the rollout window shows its opening", "[inspect][status][window]") {
  ExplainInput in = input("3");
  in.workload["metadata"]["annotations"] = {{"restarter.stackable.tech/rollout-window", "Mon-Fri 02:00-04:00"}};
  in.now = base::parseRfc3339("2026-12-05T12:00:00Z").value();  // a Saturday
  const WorkloadStatus r = row(in);
  CHECK(r.pending == PendingState::RestartDue);
  REQUIRE(r.heldByWindowUntil);
  CHECK(*r.heldByWindowUntil == "2026-12-07T02:00:00Z");
  CHECK(
      renderStatusTable({r}, false, false, "").find("held by the rollout window until 2026-12-07T02:00:00Z") !=
      std::string::npos);
  CHECK(statusDocument({r})["items"][0]["pending"]["heldByWindowUntil"] == "2026-12-07T02:00:00Z");
}

TEST_CASE("status: a queued rollout shows how many are ahead", "[inspect][status][queue]") {
  ExplainInput in = input("3");
  in.workload["metadata"]["annotations"] = {{"restarter.stackable.tech/queued-since", "2026-11-29T18:03:00Z"}};
  const auto since = base::parseRfc3339("2026-11-29T18:03:00Z");
  REQUIRE(since);
  std::vector<core::QueuedRollout> queue;
  for (int i = 0; i < 37; ++i)
    queue.push_back({"deployment/x/w" + std::to_string(i), 0, *since - std::chrono::seconds(1)});
  in.rolloutQueue = queue;
  in.rolloutQueueScope = "all namespaces";
  const WorkloadStatus r = row(in);
  REQUIRE(r.queuedAhead);
  CHECK(*r.queuedAhead == 37);
  CHECK(renderStatusTable({r}, false, false, "").find("queued: 37 rollouts ahead") != std::string::npos);
  CHECK(statusDocument({r})["items"][0]["pending"]["queuedAhead"] == 37);
}

TEST_CASE("status: DaemonSets count scheduled pods and any workload JSON shape is tolerated",
          "[inspect][status]") {
  Explanation explanation;
  explanation.workload = {core::WorkloadKind::DaemonSet, "n", "ds", "ds-uid"};
  const WorkloadStatus r =
      statusFromExplanation(explanation, json{{"status", {{"desiredNumberScheduled", 2}, {"numberReady", 1}}}});
  CHECK(r.kind == core::WorkloadKind::DaemonSet);
  CHECK(r.desired == 2);
  CHECK(r.ready == 1);
  CHECK(r.restarts == 0);
  CHECK(r.pending == PendingState::Unknown);
  CHECK(r.firstRollout == core::FirstRolloutVerdict::Unknown);
  const WorkloadStatus empty = statusFromExplanation(Explanation{}, json::array());
  CHECK(empty.desired == 1);  // replicas defaults to 1
  CHECK(empty.pending == PendingState::Unknown);
}

TEST_CASE("status: what needs attention comes first", "[inspect][status]") {
  std::vector<WorkloadStatus> rows = {
      named("b", "ok", PendingState::UpToDate),
      named("a", "ok", PendingState::UpToDate),
      named("a", "not-ready", PendingState::UpToDate, core::FirstRolloutVerdict::RestartFree, 0),
      named("z", "extra", PendingState::UpToDate, core::FirstRolloutVerdict::ExtraRestart),
      named("z", "due", PendingState::RestartDue),
      unreadableStatus(core::WorkloadKind::StatefulSet, "z", "unreadable", "forbidden")};
  sortByAttention(rows);
  CHECK(names(rows) ==
        std::vector<std::string>{"z/unreadable", "z/due", "z/extra", "a/not-ready", "a/ok", "b/ok"});
  CHECK(pendingOrUnknown(rows[0]));
}

TEST_CASE("status: the table and the wide table and the document", "[inspect][status]") {
  WorkloadStatus r = row(input("3"));
  const std::string table = renderStatusTable({r}, true, false, "");
  CHECK(table.rfind("NAMESPACE   WORKLOAD", 0) == 0);
  CHECK(table.find("shop        statefulset/web   2/3     2/3       1          restart due   restart-free") !=
        std::string::npos);
  const std::string wide = renderStatusTable({r}, false, true, "");
  CHECK(wide.find("LAST-ROLLOUT") != std::string::npos);
  CHECK(wide.find("configmap/cfg: u/2 -> u/3 (updated)") != std::string::npos);
  CHECK(renderStatusTable({}, false, false, "in namespace shop") ==
        "No labeled workloads found in namespace shop.\n");

  const auto doc = json::parse(statusDocument({r}).dump());
  CHECK(doc["apiVersion"] == "restarter.stackable.tech/v1alpha1");
  CHECK(doc["kind"] == "WorkloadStatusList");
  REQUIRE(doc["items"].size() == 1);
  CHECK(doc["items"][0] ==
        json{{"workload", {{"kind", "StatefulSet"}, {"namespace", "shop"}, {"name", "web"}}},
             {"pods", {{"desired", 3}, {"ready", 2}, {"current", 2}}},
             {"restarts", 1},
             {"pending", {{"status", "restart-due"}, {"changes", {"configmap/cfg: u/2 -> u/3 (updated)"}}}},
             {"firstRollout", "restart-free"},
             {"lastRollout", nullptr},
             {"roll", nullptr}});
}

TEST_CASE("status: a roll waiting for a disruption budget names it and needs attention", "[inspect][status]") {
  Explanation explanation = onDeleteExplanation();
  explanation.roll->state = RollState::Rolling;
  explanation.roll->reason =
      "the next pod to evict is db-2, whose eviction waits for PodDisruptionBudget db-pdb (...)";
  explanation.roll->blockedBy = "PodDisruptionBudget/db-pdb";
  WorkloadStatus blocked = statusFromExplanation(explanation, json{{"spec", {{"replicas", 3}}}});
  blocked.ready = blocked.current = 3;
  CHECK(blocked.roll->blockedBy == "PodDisruptionBudget/db-pdb");
  std::vector<WorkloadStatus> rows = {
      named("a", "ok", PendingState::UpToDate, core::FirstRolloutVerdict::RestartFree, 3), blocked};
  rows[0].desired = rows[0].ready = rows[0].current = 3;
  sortByAttention(rows);
  CHECK(rows[0].name == "db");
  CHECK_THAT(renderStatusTable(rows, false, false, ""), Catch::Contains("rolling (blocked by pdb/db-pdb)"));
  CHECK_THAT(renderStatusTable(rows, false, true, ""),
             Catch::Contains("roll rolling: the next pod to evict is db-2, whose eviction waits for"));
  CHECK(json::parse(statusDocument({blocked}).dump())["items"][0]["roll"]["blockedBy"] ==
        "PodDisruptionBudget/db-pdb");
}

TEST_CASE("status: an OnDelete roll shows its state and a paused one needs attention", "[inspect][status]") {
  Explanation explanation = onDeleteExplanation();
  explanation.roll->state = RollState::Paused;
  explanation.roll->reason = "db-2 not Ready for 10m";
  const WorkloadStatus paused = statusFromExplanation(explanation, json{{"spec", {{"replicas", 3}}}});
  CHECK(paused.roll->state == RollState::Paused);
  explanation.roll = Roll{};
  explanation.roll->state = RollState::KubernetesRolls;
  const WorkloadStatus rolling = statusFromExplanation(explanation, json{{"spec", {{"replicas", 3}}}});
  CHECK_FALSE(rolling.roll);  // Kubernetes rolls it: nothing of restarter's to show
  std::vector<WorkloadStatus> rows = {
      named("a", "ok", PendingState::UpToDate, core::FirstRolloutVerdict::RestartFree, 3), paused};
  rows[0].desired = rows[0].ready = rows[0].current = 3;
  rows[1].ready = rows[1].current = 3;
  sortByAttention(rows);
  CHECK(rows[0].name == "db");
  const std::string wide = renderStatusTable(rows, false, true, "");
  CHECK(wide.find("roll paused: db-2 not Ready for 10m") != std::string::npos);
  CHECK(json::parse(statusDocument({paused}).dump())["items"][0]["roll"] ==
        json{{"state", "paused"}, {"reason", "db-2 not Ready for 10m"}});
}

TEST_CASE("status: a reference that restarts nothing says why", "[inspect][status][baseline]") {
  ExplainInput in = input("2");
  // The ConfigMap was deleted: the running pods keep their copy (docs/behaviour.md,
  // "Restart only when pods need it").
  core::DesiredOptions running;
  running.podsRunning = true;
  in.desired = core::desiredAnnotations(
      in.workload, [](core::RefKind, const std::string&) { return core::ObjectState::absent(); }, running);
  const WorkloadStatus r = row(in);
  CHECK(r.pending == PendingState::UpToDate);
  REQUIRE(r.noRestart.size() == 1);
  CHECK(r.noRestart[0] == "configmap/cfg: deleted: running pods keep their copy, no restart");
  const std::string wide = renderStatusTable({r}, false, true, "in namespace shop");
  CHECK(wide.find("no (held back)") != std::string::npos);
  CHECK(wide.find("configmap/cfg: deleted: running pods keep their copy, no restart") != std::string::npos);
  CHECK(statusDocument({r})["items"][0]["pending"]["noRestart"][0] == r.noRestart[0]);
}

TEST_CASE("status and explain-restart name what opts a workload in and each reference's decision",
          "[inspect][status][reloader]") {
  ExplainInput in = input("2");
  in.workload["metadata"]["annotations"] = {{"reloader.stakater.com/search", "true"}};
  const core::SelectionOptions reloader{true, false};
  in.management = core::workloadManagement(in.workload, reloader);
  core::DesiredOptions options;
  options.selection = reloader;
  in.desired = core::desiredAnnotations(
      in.workload,
      [](core::RefKind, const std::string&) { return core::ObjectState::present("u", "2", false); }, options);
  const Explanation explained = explain(in);
  const auto doc = explanationDocument(explained);
  CHECK(doc["managedBy"]["by"] == "reloader-annotations");
  CHECK(doc["managedBy"]["reason"] == "reloader.stakater.com/search");
  const auto& ref = doc["pending"]["references"][0];
  CHECK(ref["disposition"] == "not-selected");
  CHECK(ref["selection"] == "reloader.stakater.com/search: the object lacks reloader.stakater.com/match");
  const WorkloadStatus r = statusFromExplanation(explained, in.workload);
  CHECK(r.managedBy == "reloader.stakater.com/search");
  CHECK(statusDocument({r})["items"][0]["managedBy"] == "reloader.stakater.com/search");
  CHECK(renderStatusTable({r}, false, true, "here").find("MANAGED-BY") != std::string::npos);
  // A labeled workload (the default input) keeps restarter's rules: no selection named.
  const auto labeled = explanationDocument(explain(input("2")));
  CHECK(labeled["pending"]["references"][0]["selection"].is_null());
}

TEST_CASE("status: each pending state has its cell and its place and fails --fail-if-pending but up to date",
          "[inspect][status]") {
  struct Row {
    PendingState state;
    std::string cell;
    std::string status;
    bool fails;
  };
  const Row table[] = {
      {PendingState::UpToDate, "no", "up-to-date", false},
      {PendingState::RestartDue, "restart due", "restart-due", true},
      {PendingState::RefusedTooLarge, "refused: annotations too large", "refused-too-large", true},
      {PendingState::Unknown, "unknown", "unknown", true}};
  for (const Row& expected : table) {
    INFO(expected.status);
    Explanation explanation = inspect_fixtures::dueExplanation();
    explanation.pending.state = expected.state;
    const WorkloadStatus r = statusFromExplanation(explanation, json{{"spec", {{"replicas", 1}}}});
    CHECK(r.pending == expected.state);
    CHECK(pendingOrUnknown(r) == expected.fails);
    CHECK_THAT(renderStatusTable({r}, false, false, ""), Catch::Contains("   " + expected.cell + "   "));
    CHECK(statusDocument({r})["items"][0]["pending"]["status"] == expected.status);
  }
}
