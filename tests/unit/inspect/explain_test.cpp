#include "restarter/inspect/explanation.hpp"

#include <catch2/catch.hpp>

#include "../kube/fakes.hpp"
#include "fixtures.hpp"
#include "restarter/base/rfc3339.hpp"
#include "restarter/testing/fake_clock.hpp"

#include "restarter/core/rollout.hpp"

using namespace restarter;
using namespace restarter::inspect;
using nlohmann::json;

namespace {

using inspect_fixtures::kCm;
using inspect_fixtures::podTemplate;

ExplainInput sampleInput() {
  ExplainInput input;
  input.kind = core::WorkloadKind::StatefulSet;
  input.workload = {{"metadata", {{"name", "web"}, {"namespace", "shop"}, {"uid", "w-uid"}, {"generation", 3}}},
                    {"spec", {{"template", podTemplate("web:2", {{kCm, "u/2"}})}}}};
  input.revisions = {{"web-1", 1, "2026-11-29T18:00:00Z", podTemplate("web:1", {{kCm, "u/1"}}), 0},
                     {"web-2", 2, "2026-11-29T18:01:00Z", podTemplate("web:1", {{kCm, "u/2"}}), 0},
                     {"web-3", 3, "2026-11-29T18:02:00Z", podTemplate("web:2", {{kCm, "u/2"}}), 2}};
  input.currentRevision = "web-3";
  input.desired = core::desiredAnnotations(input.workload, [](core::RefKind, const std::string&) {
    return core::ObjectState::present("u", "3", false);
  });
  return input;
}

// ordered_json compares key order too; the schema does not fix it, so compare as plain JSON.
json plain(const nlohmann::ordered_json& value) { return json::parse(value.dump()); }

}  // namespace

TEST_CASE("the explanation document follows its schema", "[inspect][explain]") {
  const auto explained = explain(sampleInput());
  const auto doc = explanationDocument(explained);
  CHECK(doc["apiVersion"] == "restarter.stackable.tech/v1alpha1");
  CHECK(doc["kind"] == "RestartExplanation");
  CHECK(plain(doc["workload"]) == json{{"kind", "StatefulSet"},
                                       {"namespace", "shop"},
                                       {"name", "web"},
                                       {"uid", "w-uid"},
                                       {"generation", 3}});
  CHECK(doc["firstRollout"]["verdict"] == "restart-free");
  REQUIRE(doc["revisions"].size() == 3);
  CHECK(plain(doc["revisions"][0]["causes"]) == json::array({{{"type", "created"}}}));
  CHECK(plain(doc["revisions"][1]["causes"][0]) == json{{"type", "annotation"},
                                                        {"object", {{"kind", "configmap"}, {"name", "cfg"}}},
                                                        {"change", "updated"},
                                                        {"before", "u/1"},
                                                        {"after", "u/2"}});
  CHECK(plain(doc["revisions"][2]["causes"][0]) ==
        json{{"type", "template"}, {"path", "containers[app].image"}});
  CHECK(doc["revisions"][2]["current"] == true);
  CHECK(doc["revisions"][2]["pods"] == 2);
  CHECK(doc["pending"]["status"] == "restart-due");
  CHECK(doc["pending"]["changes"][0]["after"] == "u/3");
  CHECK(plain(doc["pending"]["references"][0]) == json{{"kind", "configmap"},
                                                       {"name", "cfg"},
                                                       {"optional", false},
                                                       {"disposition", "tracked"},
                                                       {"selection", nullptr},
                                                       {"value", "u/3"},
                                                       {"keysRead", nullptr},
                                                       {"metadataOnlyChange", nullptr},
                                                       {"selection", nullptr},
                                                       {"baseline", nullptr},
                                                       {"noRestart", nullptr}});
  // Not labeled in this sample, and no --reloader-annotations: not managed.
  CHECK(plain(doc["managedBy"]) == json{{"by", "none"}, {"reason", ""}});
}

TEST_CASE(
    "a reference kept at an older version with the same content is shown as such, not as a metadata-only change",
    "[inspect][explain][content]") {
  ExplainInput input = sampleInput();
  input.workload["metadata"]["annotations"] = {
      {"restarter.stackable.tech/content-digests", "configmap/cfg=u/2/00112233445566778899aabbccddeeff"}};
  input.desired = core::desiredAnnotations(input.workload, [](core::RefKind, const std::string&) {
    return core::ObjectState::present("u", "3", false, core::parseDigest("00112233445566778899aabbccddeeff"));
  });
  const auto explained = explain(input);
  const auto doc = explanationDocument(explained);
  CHECK(doc["pending"]["status"] == "up-to-date");
  CHECK(doc["pending"]["references"][0]["value"] == "u/2");
  CHECK(doc["pending"]["references"][0]["metadataOnlyChange"] == "u/3");
  CHECK_THAT(renderText(explained, false),
             Catch::Contains("Pending: up to date") &&
                 Catch::Contains(
                     "same content, no restart (now u/3: only metadata changed, or the content changed back"));
}

TEST_CASE("the text names every cause and colours only when asked", "[inspect][explain]") {
  const auto explained = explain(sampleInput());
  const auto doc = explanationDocument(explained);
  const std::string plain = renderText(explained, false);
  CHECK_THAT(plain, Catch::Contains("StatefulSet shop/web") &&
                        Catch::Contains("configmap/cfg: u/1 -> u/2 (updated)") &&
                        Catch::Contains("containers[app].image changed") &&
                        Catch::Contains("a restart is due") && Catch::Contains("3 *"));
  CHECK(plain.find('\033') == std::string::npos);
  CHECK(renderText(explained, true).find("\033[1m") != std::string::npos);
}

TEST_CASE("the writer line names who last wrote the annotations and does not contradict the verdict",
          "[inspect][explain]") {
  // A webhook-annotated StatefulSet whose ConfigMap later changed: revision 1 was complete
  // (restart-free) and the controller owns the annotations now. The text must not claim the
  // controller wrote them after creation, which would read as the extra restart.
  Explanation explained = explain(sampleInput());
  explained.firstRollout.verdict = core::FirstRolloutVerdict::RestartFree;
  explained.firstRollout.writer = core::AnnotationWriter::Controller;
  explained.firstRollout.fieldManager = "restarter-statefulset";
  const std::string plain = renderText(explained, false);
  CHECK_THAT(plain, Catch::Contains("restart-free") &&
                        Catch::Contains("last written by the controller (restarter-statefulset)"));
  CHECK(plain.find("after creation") == std::string::npos);
}

TEST_CASE("an unreadable reference makes pending unknown with the reason", "[inspect][explain]") {
  ExplainInput input = sampleInput();
  input.desired = core::desiredAnnotations(input.workload, [](core::RefKind, const std::string&) {
    return core::ObjectState::unknown("forbidden");
  });
  const auto explained = explain(input);
  const auto doc = explanationDocument(explained);
  CHECK(doc["pending"]["status"] == "unknown");
  CHECK_THAT(doc["pending"]["reason"].get<std::string>(), Catch::Contains("forbidden"));
  CHECK_THAT(renderText(explained, false), Catch::Contains("Pending: unknown"));
}

TEST_CASE("a write too large for the apiserver is pending as refused in the text and the JSON",
          "[inspect][explain]") {
  ExplainInput input = sampleInput();
  // Metadata annotations 40 bytes under the apiserver's 262,144: the controller's last-rollout
  // stamp does not fit beside them.
  input.workload["metadata"]["annotations"] = {{"example.com/big", std::string(262144 - 40 - 15, 'x')}};
  input.desired = core::desiredAnnotations(input.workload, [](core::RefKind, const std::string&) {
    return core::ObjectState::present("u", "3", false);
  });
  const auto explained = explain(input);
  const auto doc = explanationDocument(explained);
  CHECK(doc["pending"]["status"] == "refused-too-large");
  CHECK_THAT(doc["pending"]["reason"].get<std::string>(), Catch::StartsWith("annotations too large: "));
  const std::string text = renderText(explained, false);
  CHECK_THAT(text, Catch::Contains("Pending: refused: annotations too large: "));
  CHECK(text.find("Pending: unknown") == std::string::npos);
  CHECK(text.find("a restart is due") == std::string::npos);
}

namespace {

core::TimePoint t0() { return base::parseRfc3339("2027-01-15T08:00:00Z").value(); }

}  // namespace

TEST_CASE("a held rollout says what it waits for in the text and the JSON", "[inspect][explain]") {
  using namespace std::chrono_literals;
  ExplainInput input = sampleInput();
  input.workload["metadata"]["annotations"] = {
      {"restarter.stackable.tech/last-rollout", "2027-01-15T08:00:00Z"}};
  input.workload["spec"]["replicas"] = 3;
  input.workload["status"] = {{"observedGeneration", 3}, {"updatedReplicas", 2}, {"readyReplicas", 3}};
  input.heldRollouts = std::vector<core::HeldRollout>{{t0() + 5s, t0() + 5min}};
  input.now = t0() + 30s;
  const auto explained = explain(input);
  const auto doc = explanationDocument(explained);
  CHECK(plain(doc["pending"]["rolloutHold"]) ==
        json{{"status", "held"},
             {"until", "2027-01-15T08:05:00Z"},
             {"waitingFor", "2 of 3 pods updated"},
             {"description",
              "waiting for the previous rollout (2 of 3 pods updated), at most until "
              "2027-01-15T08:05:00Z"},
             {"recorded", "2027-01-15T08:00:05Z"},
             {"lastRollout", "2027-01-15T08:00:00Z"}});
  CHECK_THAT(
      renderText(explained, false),
      Catch::Contains("Pending: a restart is due, rollout held: waiting for the previous rollout (2 of 3 "
                      "pods updated), at most until 2027-01-15T08:05:00Z") &&
          Catch::Contains("since the last rollout at 2027-01-15T08:00:00Z"));

  // Within the floor, the previous rollout finished: held until the floor ends.
  input.workload["status"]["updatedReplicas"] = 3;
  input.now = t0() + 5s;
  const auto floorExplained = explain(input);
  const auto floor = explanationDocument(floorExplained);
  CHECK(floor["pending"]["rolloutHold"]["status"] == "held");
  CHECK(floor["pending"]["rolloutHold"]["until"] == "2027-01-15T08:00:10Z");
  CHECK(floor["pending"]["rolloutHold"]["waitingFor"].is_null());
  CHECK_THAT(renderText(floorExplained, false),
             Catch::Contains("Pending: a restart is due, rollout held until 2027-01-15T08:00:10Z (the previous "
                             "rollout was less than 10s ago"));

  // After the floor, the previous rollout finished: the controller rolls it now.
  input.now = t0() + 30s;
  const auto releasedExplained = explain(input);
  const auto released = explanationDocument(releasedExplained);
  CHECK(released["pending"]["rolloutHold"]["status"] == "not-held");
  CHECK_THAT(released["pending"]["rolloutHold"]["reason"].get<std::string>(), Catch::Contains("finished"));
  CHECK_THAT(renderText(releasedExplained, false),
             Catch::Contains("a restart is due (the controller will apply it)"));

  // The held rollout was made: the workload's record is newer than the Event.
  input.workload["metadata"]["annotations"]["restarter.stackable.tech/last-rollout"] = "2027-01-15T08:05:00Z";
  const auto rolledExplained = explain(input);
  const auto rolled = explanationDocument(rolledExplained);
  CHECK(rolled["pending"]["rolloutHold"]["status"] == "not-held");
  CHECK_THAT(renderText(rolledExplained, false),
             Catch::Contains("a restart is due (the controller will apply it)"));
}

TEST_CASE("without RolloutHeld Events nothing is held and the last rollout may be unknown",
          "[inspect][explain]") {
  const auto explained = explain(sampleInput());
  const auto doc = explanationDocument(explained);
  CHECK(plain(doc["pending"]["rolloutHold"]) == json{{"status", "not-held"}, {"lastRollout", nullptr}});
}

TEST_CASE("unlistable Events make the hold unknown and leave the rest standing", "[inspect][explain]") {
  ExplainInput input = sampleInput();
  input.heldRollouts = core::makeError(core::ErrorKind::Forbidden, "events is forbidden");
  const auto explained = explain(input);
  const auto doc = explanationDocument(explained);
  CHECK(doc["pending"]["status"] == "restart-due");
  CHECK(doc["pending"]["rolloutHold"]["status"] == "unknown");
  CHECK_THAT(doc["pending"]["rolloutHold"]["reason"].get<std::string>(), Catch::Contains("forbidden"));
  CHECK_THAT(renderText(explained, false), Catch::Contains("whether the controller holds it is unknown"));
}

TEST_CASE("a RolloutHeld Event is read from the core Event fields", "[inspect][explain]") {
  using namespace std::chrono_literals;
  const std::string note = core::rolloutHeldNote(
      core::decideRollout(t0(), t0() + 1s, 20s, core::RolloutProgress{false, "0 of 1 pod updated"}), t0(), 20s,
      "shop", "configmap/cfg: u/1 -> u/2 (updated)");
  json event = {{"reason", "RolloutHeld"},
                {"message", note},
                {"eventTime", "2027-01-15T08:00:01.500000Z"},
                {"metadata", {{"creationTimestamp", "2027-01-15T08:00:02Z"}}}};
  auto held = heldRolloutFromEvent(event);
  REQUIRE(held);
  CHECK(held->until == t0() + 20s);
  CHECK(held->recorded == t0() + 1500ms);
  // Without eventTime (an Event from the core API's recorder): lastTimestamp, then creation.
  event["eventTime"] = nullptr;
  event["lastTimestamp"] = "2027-01-15T08:00:03Z";
  CHECK(heldRolloutFromEvent(event)->recorded == t0() + 3s);
  event.erase("lastTimestamp");
  CHECK(heldRolloutFromEvent(event)->recorded == t0() + 2s);
  CHECK_FALSE(heldRolloutFromEvent(
      json{{"reason", "Restarted"}, {"message", note}, {"eventTime", "2027-01-15T08:00:01Z"}}));
  CHECK_FALSE(heldRolloutFromEvent(
      json{{"reason", "RolloutHeld"}, {"message", "held"}, {"eventTime", "2027-01-15T08:00:01Z"}}));
  CHECK_FALSE(heldRolloutFromEvent(json{{"reason", "RolloutHeld"}, {"message", note}}));
  CHECK_FALSE(heldRolloutFromEvent(json::array()));
}

namespace {

json rollPod(const std::string& name, const std::string& revision, bool ready, const std::string& since) {
  return {
      {"metadata",
       {{"name", name},
        {"creationTimestamp", since},
        {"labels", {{"controller-revision-hash", revision}}},
        {"ownerReferences", json::array({{{"uid", "w-uid"}, {"controller", true}}})}}},
      {"status",
       {{"conditions",
         json::array(
             {{{"type", "Ready"}, {"status", ready ? "True" : "False"}, {"lastTransitionTime", since}}})}}}};
}

ExplainInput onDeleteInput() {
  ExplainInput input = sampleInput();
  input.workload["spec"]["replicas"] = 3;
  input.workload["spec"]["updateStrategy"] = {{"type", "OnDelete"}};
  input.workload["status"] = {{"observedGeneration", 3}, {"updateRevision", "web-3"}};
  input.now = base::parseRfc3339("2026-11-29T19:00:00Z").value();
  input.readyTimeout = std::chrono::seconds(600);
  return input;
}

}  // namespace

TEST_CASE("the roll section says rolling or paused with the pod or manual or partitioned",
          "[inspect][explain]") {
  SECTION("rolling: the next pod and the outdated ones") {
    ExplainInput input = onDeleteInput();
    input.pods = {rollPod("web-0", "web-2", true, "2026-11-29T18:00:00Z"),
                  rollPod("web-1", "web-2", true, "2026-11-29T18:00:00Z"),
                  rollPod("web-2", "web-3", true, "2026-11-29T18:00:00Z")};
    const auto explained = explain(input);
    const auto doc = explanationDocument(explained);
    CHECK(doc["roll"]["state"] == "rolling");
    CHECK(doc["roll"]["updateStrategy"] == "OnDelete");
    CHECK(plain(doc["roll"]["outdatedPods"]) == json{"web-1", "web-0"});
    CHECK(doc["roll"]["reason"] == "the next pod to evict is web-1");
    CHECK_THAT(renderText(explained, false),
               Catch::Contains("2 pods still run an outdated revision: web-1, web-0"));
  }
  SECTION("rolling: a budget that allows no disruption of the next pod is named") {
    ExplainInput input = onDeleteInput();
    input.pods = {rollPod("web-0", "web-2", true, "2026-11-29T18:00:00Z"),
                  rollPod("web-1", "web-2", true, "2026-11-29T18:00:00Z"),
                  rollPod("web-2", "web-3", true, "2026-11-29T18:00:00Z")};
    const json selector = {{"matchLabels", {{"controller-revision-hash", "web-2"}}}};
    input.budgets = {{{"metadata", {{"name", "other"}}},
                      {"spec", {{"selector", {{"matchLabels", {{"app", "x"}}}}}}},
                      {"status", {{"disruptionsAllowed", 0}}}},
                     {{"metadata", {{"name", "web-budget"}}},
                      {"spec", {{"selector", selector}}},
                      {"status", {{"disruptionsAllowed", 0}, {"currentHealthy", 3}, {"desiredHealthy", 3}}}}};
    auto explained = explain(input);
    auto doc = explanationDocument(explained);
    CHECK(doc["roll"]["state"] == "rolling");
    CHECK(doc["roll"]["blockedBy"] == "PodDisruptionBudget/web-budget");
    CHECK(
        doc["roll"]["reason"] ==
        "the next pod to evict is web-1, whose eviction waits for PodDisruptionBudget web-budget (3 healthy, 3 "
        "required: no disruption allowed)");
    // Once the budget allows a disruption, nothing is named.
    input.budgets[1]["status"]["disruptionsAllowed"] = 1;
    doc = explanationDocument(explain(input));
    CHECK_FALSE(doc["roll"].contains("blockedBy"));
    CHECK(doc["roll"]["reason"] == "the next pod to evict is web-1");
  }
  SECTION("paused, naming the pod") {
    ExplainInput input = onDeleteInput();
    input.pods = {rollPod("web-0", "web-2", true, "2026-11-29T18:00:00Z"),
                  rollPod("web-1", "web-2", true, "2026-11-29T18:00:00Z"),
                  rollPod("web-2", "web-3", false, "2026-11-29T18:30:00Z")};
    const auto explained = explain(input);
    const auto doc = explanationDocument(explained);
    CHECK(doc["roll"]["state"] == "paused");
    CHECK(doc["roll"]["blockingPod"] == "web-2");
    CHECK_THAT(renderText(explained, false),
               Catch::Contains("Roll (OnDelete): paused") && Catch::Contains("web-2"));
  }
  SECTION("opted out: the pods still on the old configuration are listed") {
    ExplainInput input = onDeleteInput();
    input.workload["metadata"]["annotations"] = {{"restarter.stackable.tech/ondelete", "manual"}};
    input.pods = {rollPod("web-0", "web-2", true, "2026-11-29T18:00:00Z"),
                  rollPod("web-1", "web-3", true, "2026-11-29T18:00:00Z")};
    const auto explained = explain(input);
    const auto doc = explanationDocument(explained);
    CHECK(doc["roll"]["state"] == "manual");
    CHECK(plain(doc["roll"]["outdatedPods"]) == json{"web-0"});
  }
  SECTION("partitioned: the kept pods and why") {
    ExplainInput input = onDeleteInput();
    input.workload["spec"]["updateStrategy"] = {{"type", "RollingUpdate"},
                                                {"rollingUpdate", {{"partition", 1}}}};
    input.pods = {rollPod("web-0", "web-2", true, "2026-11-29T18:00:00Z"),
                  rollPod("web-1", "web-3", true, "2026-11-29T18:00:00Z")};
    const auto explained = explain(input);
    const auto doc = explanationDocument(explained);
    CHECK(doc["roll"]["state"] == "partitioned");
    CHECK(plain(doc["roll"]["keptPods"]) == json{"web-0"});
    CHECK_THAT(renderText(explained, false),
               Catch::Contains("kept by the partition: web-0") && Catch::Contains("partition 1"));
  }
  SECTION("a pod the API describes oddly makes the roll unknown, the rest stands") {
    ExplainInput input = onDeleteInput();
    input.pods = {json{{"metadata", {{"name", 7}}}}};
    const auto explained = explain(input);
    const auto doc = explanationDocument(explained);
    CHECK(doc["roll"]["state"] == "unknown");
    CHECK(doc["pending"]["status"] == "restart-due");
  }
  SECTION("a Deployment has no roll section") {
    ExplainInput input = sampleInput();
    input.kind = core::WorkloadKind::Deployment;
    CHECK_FALSE(explanationDocument(explain(input)).contains("roll"));
  }
}

namespace {

json controllerRevision(const std::string& name, int number) {
  return {{"kind", "ControllerRevision"},
          {"apiVersion", "apps/v1"},
          {"metadata",
           {{"name", name},
            {"resourceVersion", std::to_string(number)},
            {"creationTimestamp", "2026-11-29T18:00:00Z"},
            {"ownerReferences", {{{"uid", "w-uid"}, {"controller", true}}}}}},
          {"revision", number},
          {"data", {{"spec", {{"template", podTemplate("web:" + std::to_string(number), json::object())}}}}}};
}

std::string revisionList(const std::vector<json>& items, const std::string& rv) {
  return json{{"kind", "ControllerRevisionList"},
              {"apiVersion", "apps/v1"},
              {"metadata", {{"resourceVersion", rv}}},
              {"items", items}}
      .dump();
}

std::string revisionEvent(const std::string& type, const json& object) {
  return json{{"type", type}, {"object", object}}.dump() + "\n";
}

}  // namespace

TEST_CASE("the revision watch reports each new revision once and backs off until it gives up",
          "[inspect][explain][watch]") {
  using namespace restarter::kube::testing;
  using restarter::testing::FakeClock;
  using namespace std::chrono_literals;
  FakeClock clock;
  FakeProcessRunner runner;
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport& transport = *fake;
  kube::ConnectionConfig config;
  config.token = "t";
  kube::Client client(std::move(fake), kube::makeAuthenticator(config, clock, runner), "shop", clock);

  ExplainInput start = sampleInput();
  start.workload["spec"]["selector"] = {{"matchLabels", {{"app", "web"}}}};
  start.revisions = {{"web-1", 1, "2026-11-29T18:00:00Z", podTemplate("web:1", json::object()), 0}};
  transport.push(ok(revisionList({controllerRevision("web-1", 1), controllerRevision("web-2", 2)}, "5")));
  transport.push(stream({revisionEvent("ADDED", controllerRevision("web-3", 3)),
                         revisionEvent("ERROR", {{"kind", "Status"}, {"code", 410}})}));
  transport.push(ok(revisionList({controllerRevision("web-2", 2), controllerRevision("web-3", 3)}, "9")));
  for (int i = 0; i < kMaxWatchFailures; ++i) transport.push(failure(core::ErrorKind::Unavailable, "refused"));

  std::vector<std::string> seen;
  int interruptions = 0;
  const WatchStopped stopped = watchRevisions(
      client, start, "shop", clock,
      [&](const RevisionFeed::NewRevision& added) {
        seen.push_back(added.revision.name + ": " + causeLines(added.cause).at(0));
      },
      [&](const core::Error&) { ++interruptions; });
  CHECK(seen == std::vector<std::string>{"web-2: containers[app].image changed",
                                         "web-3: containers[app].image changed"});
  CHECK_FALSE(stopped.listing);
  CHECK(stopped.error.kind == core::ErrorKind::Unavailable);
  CHECK(interruptions == kMaxWatchFailures);  // 410 Gone relists without a word
  // Exponential backoff between the failures (jittered into [base/2, base]), none after the last.
  const auto waits = clock.waits();
  REQUIRE(waits.size() == 4);
  CHECK(waits[0] >= 400ms);
  CHECK(waits[0] <= 800ms);
  CHECK(waits[3] >= 3200ms);
  CHECK(waits[3] <= 6400ms);
  const auto requests = transport.requests();
  REQUIRE(requests.size() >= 2);
  CHECK(requests[0].path.find("labelSelector=app") != std::string::npos);
}

TEST_CASE("the revision watch stops at once when its list fails", "[inspect][explain][watch]") {
  using namespace restarter::kube::testing;
  using restarter::testing::FakeClock;
  FakeClock clock;
  FakeProcessRunner runner;
  auto fake = std::make_unique<FakeTransport>();
  FakeTransport& transport = *fake;
  kube::ConnectionConfig config;
  config.token = "t";
  kube::Client client(std::move(fake), kube::makeAuthenticator(config, clock, runner), "shop", clock);
  transport.push(failure(core::ErrorKind::Forbidden, "no"));
  const WatchStopped stopped = watchRevisions(
      client, sampleInput(), "shop", clock, [](const RevisionFeed::NewRevision&) {}, [](const core::Error&) {});
  CHECK(stopped.listing);
  CHECK(stopped.error.kind == core::ErrorKind::Forbidden);
  CHECK(transport.requests().size() == 1);
}

TEST_CASE("a rollout window says until when it holds a pending restart", "[inspect][explain][window]") {
  using namespace std::chrono_literals;
  ExplainInput input = sampleInput();  // a restart is due (u/2 -> u/3)
  input.now = t0();                    // 2027-01-15T08:00:00Z, a Friday
  input.workload["metadata"]["annotations"] = {{"restarter.stackable.tech/rollout-window", "09:00-10:00"}};
  const auto heldExplained = explain(input);
  const auto held = explanationDocument(heldExplained);
  CHECK(plain(held["pending"]["rolloutWindow"]) ==
        json{{"status", "held"},
             {"window", "09:00-10:00"},
             {"source", "annotation"},
             {"nextOpening", "2027-01-15T09:00:00Z"},
             {"description", "held by the rollout window until 2027-01-15T09:00:00Z"}});
  CHECK_THAT(renderText(heldExplained, false),
             Catch::Contains("Pending: a restart is due, rollout held by the rollout window until "
                             "2027-01-15T09:00:00Z (window \"09:00-10:00\" from the annotation)"));

  input.now = t0() + 1h;
  CHECK(explanationDocument(explain(input))["pending"]["rolloutWindow"]["status"] == "open");

  // The controller's default, as given to explain-restart --rollout-window.
  input.workload["metadata"].erase("annotations");
  input.defaultRolloutWindow = "Sat,Sun 00:00-24:00";
  const auto byDefault = explanationDocument(explain(input));
  CHECK(byDefault["pending"]["rolloutWindow"]["source"] == "controller default");
  CHECK(byDefault["pending"]["rolloutWindow"]["nextOpening"] == "2027-01-16T00:00:00Z");
  input.defaultRolloutWindow = "always";
  CHECK(plain(explanationDocument(explain(input))["pending"]["rolloutWindow"]) ==
        json{{"status", "none"}, {"window", "always"}, {"source", "controller default"}});

  // Invalid: nothing held, and said.
  input.workload["metadata"]["annotations"] = {{"restarter.stackable.tech/rollout-window", "9-10"}};
  const auto invalidExplained = explain(input);
  const auto invalid = explanationDocument(invalidExplained);
  CHECK(invalid["pending"]["rolloutWindow"]["status"] == "invalid");
  CHECK(invalid["pending"]["rolloutWindow"]["reason"] ==
        "window 1 (\"9-10\"): \"9\" is not a start time (HH:MM, 00:00 to 23:59)");
  CHECK_THAT(renderText(invalidExplained, false),
             Catch::Contains("a restart is due (the controller will apply it)") &&
                 Catch::Contains("invalid rollout window \"9-10\""));

  // Nothing pending: closed, not held.
  ExplainInput upToDate = sampleInput();
  upToDate.desired = core::desiredAnnotations(upToDate.workload, [](core::RefKind, const std::string&) {
    return core::ObjectState::present("u", "2", false);
  });
  upToDate.now = t0();
  upToDate.workload["metadata"]["annotations"] = {{"restarter.stackable.tech/rollout-window", "09:00-10:00"}};
  CHECK(explanationDocument(explain(upToDate))["pending"]["rolloutWindow"]["status"] == "closed");
}

TEST_CASE("a queued rollout says how many are ahead in the text and the JSON", "[inspect][explain][queue]") {
  using namespace std::chrono_literals;
  ExplainInput input = sampleInput();
  input.workload["metadata"]["annotations"] = {
      {"restarter.stackable.tech/queued-since", "2027-01-15T08:00:05Z"},
      {"restarter.stackable.tech/rollout-priority", "2"}};
  // Ahead: a higher priority queued later, an equal priority queued earlier. Behind: an equal
  // priority queued later, a lower priority queued earlier. Itself (the same id) is not counted.
  input.rolloutQueue = std::vector<core::QueuedRollout>{{"deployment/a/high", 5, t0() + 60s},
                                                        {"statefulset/b/older", 2, t0()},
                                                        {"statefulset/b/newer", 2, t0() + 60s},
                                                        {"statefulset/c/low", 0, t0()},
                                                        {"statefulset/shop/web", 2, t0() + 5s}};
  input.rolloutQueueScope = "all namespaces";
  const auto explained = explain(input);
  const auto doc = explanationDocument(explained);
  CHECK(plain(doc["pending"]["rolloutQueue"]) == json{{"status", "queued"},
                                                      {"since", "2027-01-15T08:00:05Z"},
                                                      {"priority", 2},
                                                      {"ahead", 2},
                                                      {"scope", "all namespaces"},
                                                      {"description", "queued: 2 rollouts ahead"}});
  CHECK_THAT(renderText(explained, false),
             Catch::Contains("Pending: a restart is due, queued: 2 rollouts ahead (--max-concurrent-rollouts; "
                             "priority 2, queued since 2027-01-15T08:00:05Z, counted in all namespaces)"));

  // The queue could not be listed: unknown, said.
  input.rolloutQueue = core::makeError(core::ErrorKind::Forbidden, "deployments is forbidden");
  const auto unknownExplained = explain(input);
  const auto unknown = explanationDocument(unknownExplained);
  CHECK(unknown["pending"]["rolloutQueue"]["status"] == "unknown");
  CHECK_THAT(renderText(unknownExplained, false),
             Catch::Contains("its place in the controller's rollout queue is unknown"));

  // Nothing pending: a leftover record queues nothing.
  input.workload["spec"]["template"]["metadata"]["annotations"][kCm] = "u/3";
  input.desired = core::desiredAnnotations(input.workload, [](core::RefKind, const std::string&) {
    return core::ObjectState::present("u", "3", false);
  });
  CHECK(explanationDocument(explain(input))["pending"]["rolloutQueue"]["status"] == "not-queued");

  // Not queued at all.
  CHECK(explanationDocument(explain(sampleInput()))["pending"]["rolloutQueue"]["status"] == "not-queued");
}

TEST_CASE("the queued place of a workload is read from its annotations", "[inspect][explain][queue]") {
  const json workload = {{"metadata",
                          {{"name", "web"},
                           {"namespace", "shop"},
                           {"annotations",
                            {{"restarter.stackable.tech/queued-since", "2027-01-15T08:00:00Z"},
                             {"restarter.stackable.tech/rollout-priority", "oops"}}}}}};
  const auto queued = queuedRolloutOf(workload, core::WorkloadKind::Deployment);
  REQUIRE(queued);
  CHECK(queued->id == "deployment/shop/web");
  CHECK(queued->priority == 0);
  CHECK(queued->since == t0());
  CHECK_FALSE(queuedRolloutOf(json{{"metadata", {{"name", "web"}}}}, core::WorkloadKind::Deployment));
}
