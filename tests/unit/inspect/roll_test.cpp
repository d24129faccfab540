#include "restarter/inspect/roll.hpp"

#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "restarter/base/rfc3339.hpp"
#include "restarter/core/rollout.hpp"
#include "restarter/testing/fake_api_server.hpp"
#include "restarter/testing/fake_clock.hpp"

using namespace restarter;
using namespace restarter::inspect;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

using inspect_fixtures::kCm;
using inspect_fixtures::podTemplate;

class NoAuth final : public kube::Authenticator {
 public:
  core::Result<kube::Credential> credential() override { return kube::Credential{}; }
  bool invalidate(const kube::Credential&) override { return false; }
};

const char* kRolloutMode = "restarter.stackable.tech/rollout";

// StatefulSet shop/web, labeled, its template at u/2 of ConfigMap cfg; `mode` its rollout
// annotation ("" none).
json webStatefulSet(const std::string& mode) {
  json workload = {{"apiVersion", "apps/v1"},
                   {"kind", "StatefulSet"},
                   {"metadata",
                    {{"name", "web"},
                     {"namespace", "shop"},
                     {"uid", "w-uid"},
                     {"generation", 1},
                     {"labels", {{"restarter.stackable.tech/enabled", "true"}}},
                     {"annotations", json::object()}}},
                   {"spec", {{"replicas", 1}, {"template", podTemplate("web:1", {{kCm, "u/2"}})}}}};
  if (!mode.empty()) workload["metadata"]["annotations"][kRolloutMode] = mode;
  return workload;
}

// What readExplainInput reads for `workload` when ConfigMap cfg is at `cmVersion`.
ExplainInput inputFor(const json& workload, const std::string& cmVersion) {
  ExplainInput input;
  input.kind = core::WorkloadKind::StatefulSet;
  input.workload = workload;
  input.management = core::workloadManagement(workload, {});
  input.desired = core::desiredAnnotations(
      workload,
      [&](core::RefKind, const std::string&) { return core::ObjectState::present("u", cmVersion, false); },
      core::DesiredOptions{true});
  input.now = base::parseRfc3339("2027-01-15T08:00:30Z").value();
  return input;
}

}  // namespace

TEST_CASE("roll plans exactly what explain-restart shows as pending under the kind's field manager",
          "[inspect][roll]") {
  const ExplainInput input = inputFor(webStatefulSet("manual"), "3");
  const RollPlan plan = planRoll(input, false);
  CHECK(plan.verdict == RollVerdict::Roll);
  CHECK(plan.manual);
  CHECK(plan.fieldManager == "restarter.stackable.tech/statefulset");
  const auto docExplained = explain(input);
  const auto doc = explanationDocument(docExplained);
  REQUIRE(plan.changes.size() == doc["pending"]["changes"].size());
  REQUIRE(plan.changes.size() == 1);
  CHECK(plan.changes[0].after == doc["pending"]["changes"][0]["after"].get<std::string>());
  CHECK(describePlan(plan) == "configmap/cfg: u/2 -> u/3 (updated)");
  // explain-restart and status name the command for the manual workload.
  CHECK(doc["pending"]["rolloutMode"]["mode"] == "manual");
  CHECK(doc["pending"]["rolloutMode"]["rollCommand"] == "kubectl restarter roll statefulset/web -n shop");
  CHECK_THAT(renderText(docExplained, false),
             Catch::Contains("Pending: manual: pending; run `kubectl restarter roll statefulset/web -n shop`"));
}

TEST_CASE("roll says nothing is pending and refuses what it cannot or may not roll", "[inspect][roll]") {
  SECTION("up to date") {
    const RollPlan plan = planRoll(inputFor(webStatefulSet("manual"), "2"), false);
    CHECK(plan.verdict == RollVerdict::NothingPending);
    CHECK(plan.changes.empty());
    CHECK(explanationDocument(explain(inputFor(webStatefulSet("manual"), "2")))["pending"]["rolloutMode"].count(
              "rollCommand") == 0);
  }
  SECTION("not managed") {
    json workload = webStatefulSet("manual");
    workload["metadata"]["labels"] = json::object();
    const RollPlan plan = planRoll(inputFor(workload, "3"), true);
    CHECK(plan.verdict == RollVerdict::Refused);
    CHECK_THAT(plan.reason, Catch::Contains("not managed"));
  }
  SECTION("a reference unreadable") {
    ExplainInput input = inputFor(webStatefulSet("manual"), "3");
    input.desired = core::desiredAnnotations(input.workload, [](core::RefKind, const std::string&) {
      return core::ObjectState::unknown("forbidden");
    });
    const RollPlan plan = planRoll(input, true);
    CHECK(plan.verdict == RollVerdict::Unknown);
    CHECK_THAT(plan.reason, Catch::Contains("forbidden"));
  }
}

TEST_CASE(
    "without --now roll refuses an auto workload another gate holds and with --now or in manual mode it consults none",
    "[inspect][roll]") {
  for (const std::string mode : {"", "auto", "bogus"}) {
    CAPTURE(mode);
    json workload = webStatefulSet(mode);
    workload["metadata"]["annotations"]["restarter.stackable.tech/last-rollout"] = "2027-01-15T08:00:00Z";
    workload["status"] = {{"observedGeneration", 1}, {"updatedReplicas", 0}, {"readyReplicas", 1}};
    ExplainInput input = inputFor(workload, "3");
    const auto recorded = base::parseRfc3339("2027-01-15T08:00:05Z").value();
    input.heldRollouts = std::vector<core::HeldRollout>{{recorded, recorded + 5min}};
    const RollPlan held = planRoll(input, false);
    CHECK(held.verdict == RollVerdict::Held);
    CHECK_FALSE(held.manual);
    CHECK_THAT(held.reason, Catch::StartsWith("the rollout hold holds it: waiting for the previous rollout"));
    CHECK(planRoll(input, true).verdict == RollVerdict::Roll);
    // Not held: an auto workload rolls at once (the controller would make the same write).
    input.heldRollouts = std::vector<core::HeldRollout>{};
    CHECK(planRoll(input, false).verdict == RollVerdict::Roll);
    // Whether a gate holds it cannot be told: refused, --now rolls.
    input.heldRollouts = core::makeError(core::ErrorKind::Forbidden, "events is forbidden");
    CHECK(planRoll(input, false).verdict == RollVerdict::Held);
    CHECK(planRoll(input, true).verdict == RollVerdict::Roll);
  }
  // A manual workload: running roll is the decision, no gate is consulted.
  json workload = webStatefulSet("manual");
  workload["metadata"]["annotations"]["restarter.stackable.tech/last-rollout"] = "2027-01-15T08:00:00Z";
  workload["status"] = {{"observedGeneration", 1}, {"updatedReplicas", 0}, {"readyReplicas", 1}};
  ExplainInput input = inputFor(workload, "3");
  const auto recorded = base::parseRfc3339("2027-01-15T08:00:05Z").value();
  input.heldRollouts = std::vector<core::HeldRollout>{{recorded, recorded + 5min}};
  REQUIRE_FALSE(gatesHolding(explain(input)).empty());
  CHECK(planRoll(input, false).verdict == RollVerdict::Roll);
}

TEST_CASE("without --now roll refuses an auto workload its rollout window or the rollout queue holds",
          "[inspect][roll]") {
  // No previous rollout: only the window or the queue can hold it.
  ExplainInput input = inputFor(webStatefulSet("auto"), "3");
  input.now = base::parseRfc3339("2027-01-15T08:00:00Z").value();  // a Friday
  SECTION("a closed window") {
    input.workload["metadata"]["annotations"]["restarter.stackable.tech/rollout-window"] = "09:00-10:00";
    const RollPlan plan = planRoll(input, false);
    CHECK(plan.verdict == RollVerdict::Held);
    CHECK(plan.reason == "the rollout window \"09:00-10:00\" holds it until 2027-01-15T09:00:00Z");
    CHECK(planRoll(input, true).verdict == RollVerdict::Roll);
    // Open: nothing holds it.
    input.now += 1h;
    CHECK(planRoll(input, false).verdict == RollVerdict::Roll);
  }
  SECTION("the controller's default window, as given to roll") {
    input.defaultRolloutWindow = "Sat,Sun 00:00-24:00";
    CHECK(planRoll(input, false).reason ==
          "the rollout window \"Sat,Sun 00:00-24:00\" holds it until 2027-01-16T00:00:00Z");
  }
  SECTION("queued behind others") {
    input.workload["metadata"]["annotations"]["restarter.stackable.tech/queued-since"] = "2027-01-15T07:59:00Z";
    const auto earlier = base::parseRfc3339("2027-01-15T07:58:00Z").value();
    input.rolloutQueue = std::vector<core::QueuedRollout>{{"deployment/other/a", 0, earlier},
                                                          {"deployment/other/b", 0, earlier}};
    const RollPlan plan = planRoll(input, false);
    CHECK(plan.verdict == RollVerdict::Held);
    CHECK(plan.reason == "the rollout queue holds it: queued: 2 rollouts ahead");
    CHECK(planRoll(input, true).verdict == RollVerdict::Roll);
    // The queue cannot be listed: refused unless --now.
    input.rolloutQueue = core::makeError(core::ErrorKind::Forbidden, "deployments is forbidden");
    CHECK_THAT(planRoll(input, false).reason, Catch::StartsWith("the rollout queue may hold it (unknown: "));
    CHECK(planRoll(input, true).verdict == RollVerdict::Roll);
  }
}

TEST_CASE("roll applies the controller's write once and records a Restarted Event naming roll",
          "[inspect][roll]") {
  auto server = std::make_unique<testing::FakeApiServer>();
  testing::FakeApiServer& api = *server;
  testing::FakeClock clock;
  kube::Client client(std::move(server), std::make_unique<NoAuth>(), "shop", clock);
  const json stored = api.seed(kube::resources::statefulSets(), webStatefulSet("manual"));
  const ExplainInput input = inputFor(stored, "3");
  const RollPlan plan = planRoll(input, false);
  REQUIRE(plan.verdict == RollVerdict::Roll);

  const core::TimePoint at = base::parseRfc3339("2027-01-15T08:01:00Z").value();
  auto rolled = applyRoll(client, input, plan, at);
  REQUIRE(rolled.ok());
  CHECK_FALSE(rolled->eventError);
  const auto after = api.object(kube::resources::statefulSets(), "shop", "web");
  REQUIRE(after);
  CHECK((*after)["spec"]["template"]["metadata"]["annotations"][kCm] == "u/3");
  CHECK((*after)["metadata"]["annotations"]["restarter.stackable.tech/last-rollout"] == "2027-01-15T08:01:00Z");
  CHECK((*after)["metadata"]["annotations"][kRolloutMode] == "manual");  // not ours: left alone
  CHECK((*after)["metadata"]["generation"] == 2);
  // The controller's apply: forced, under the kind's field manager, the body core::applyBody makes.
  const auto requests = api.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].method == "PATCH");
  CHECK(requests[0].path.find("fieldManager=restarter.stackable.tech%2Fstatefulset") != std::string::npos);
  CHECK(requests[0].path.find("force=true") != std::string::npos);
  CHECK(json::parse(requests[0].body) == core::applyBody("apps/v1", "StatefulSet", stored, rolled->sent));
  const auto events = api.events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["reason"] == "Restarted");
  CHECK(events[0]["reportingController"] == "restarter.stackable.tech/roll");
  CHECK_THAT(events[0]["note"].get<std::string>(), Catch::Contains("restarter roll: a user's action") &&
                                                       Catch::Contains("configmap/cfg: u/2 -> u/3 (updated)"));
  // Rolled: planned again, nothing is pending.
  CHECK(planRoll(inputFor(*after, "3"), false).verdict == RollVerdict::NothingPending);
}
