// explain-restart's JSON and text and status' rows, byte for byte, for representative workloads:
// the outputs pinned in tests/unit/inspect/golden/ (regenerate them with
// RESTARTER_UPDATE_GOLDEN=1 only when an output is meant to change, and review the diff).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "fixtures.hpp"
#include "restarter/base/rfc3339.hpp"
#include "restarter/inspect/explanation.hpp"
#include "restarter/inspect/status.hpp"

namespace explanation_golden_test {

using namespace restarter;
using namespace restarter::inspect;
using inspect_fixtures::kCm;
using inspect_fixtures::podTemplate;
using nlohmann::json;

core::TimePoint t0() { return base::parseRfc3339("2027-01-15T08:00:00Z").value(); }

core::Result<core::DesiredAnnotations> desiredAt(const json& workload, const std::string& version) {
  return core::desiredAnnotations(workload, [version](core::RefKind, const std::string&) {
    return core::ObjectState::present("u", version, false);
  });
}

// A StatefulSet whose ConfigMap moved from u/2 to u/3: a restart is due.
ExplainInput restartDue() {
  ExplainInput input;
  input.kind = core::WorkloadKind::StatefulSet;
  input.workload = {{"metadata",
                     {{"name", "web"},
                      {"namespace", "shop"},
                      {"uid", "w-uid"},
                      {"generation", 3},
                      {"labels", {{"restarter.stackable.tech/enabled", "true"}}}}},
                    {"spec", {{"replicas", 3}, {"template", podTemplate("web:2", {{kCm, "u/2"}})}}},
                    {"status", {{"readyReplicas", 2}}}};
  input.revisions = {{"web-1", 1, "2026-11-29T18:00:00Z", podTemplate("web:1", {{kCm, "u/1"}}), 0},
                     {"web-2", 2, "2026-11-29T18:01:00Z", podTemplate("web:1", {{kCm, "u/2"}}), 1},
                     {"web-3", 3, "2026-11-29T18:02:00Z", podTemplate("web:2", {{kCm, "u/2"}}), 2}};
  input.currentRevision = "web-3";
  input.management = core::workloadManagement(input.workload, core::SelectionOptions{});
  input.desired = desiredAt(input.workload, "3");
  input.now = t0();
  return input;
}

ExplainInput upToDate() {
  ExplainInput input = restartDue();
  input.desired = desiredAt(input.workload, "2");
  input.baselineRecorded = std::pair<std::string, std::string>{"2026-11-29T18:00:01Z", "baseline recorded"};
  return input;
}

ExplainInput unknownPending() {
  ExplainInput input = restartDue();
  input.desired = core::desiredAnnotations(input.workload, [](core::RefKind, const std::string&) {
    return core::ObjectState::unknown("forbidden");
  });
  input.heldRollouts = core::makeError(core::ErrorKind::Forbidden, "events is forbidden");
  return input;
}

ExplainInput refusedTooLarge() {
  ExplainInput input = restartDue();
  input.workload["metadata"]["annotations"] = {{"example.com/big", std::string(262144 - 40 - 15, 'x')}};
  input.desired = desiredAt(input.workload, "3");
  return input;
}

ExplainInput heldByInterval() {
  using namespace std::chrono_literals;
  ExplainInput input = restartDue();
  input.workload["metadata"]["annotations"] = {
      {"restarter.stackable.tech/last-rollout", "2027-01-15T08:00:00Z"}};
  input.workload["status"] = {{"observedGeneration", 3}, {"updatedReplicas", 2}, {"readyReplicas", 3}};
  input.heldRollouts = std::vector<core::HeldRollout>{{t0() + 5s, t0() + 5min}};
  input.now = t0() + 30s;
  return input;
}

ExplainInput heldByWindow() {
  ExplainInput input = restartDue();
  input.workload["metadata"]["annotations"] = {{"restarter.stackable.tech/rollout-window", "09:00-10:00"}};
  return input;
}

ExplainInput invalidWindowAndMode() {
  ExplainInput input = restartDue();
  input.workload["metadata"]["annotations"] = {{"restarter.stackable.tech/rollout-window", "9-10"},
                                               {"restarter.stackable.tech/rollout", "sometimes"}};
  return input;
}

ExplainInput queued() {
  using namespace std::chrono_literals;
  ExplainInput input = restartDue();
  input.workload["metadata"]["annotations"] = {
      {"restarter.stackable.tech/queued-since", "2027-01-15T08:00:05Z"},
      {"restarter.stackable.tech/rollout-priority", "2"}};
  input.rolloutQueue = std::vector<core::QueuedRollout>{{"deployment/a/high", 5, t0() + 60s},
                                                        {"statefulset/shop/web", 2, t0() + 5s}};
  input.rolloutQueueScope = "all namespaces";
  return input;
}

ExplainInput queueUnknown() {
  ExplainInput input = queued();
  input.rolloutQueue = core::makeError(core::ErrorKind::Forbidden, "deployments is forbidden");
  return input;
}

ExplainInput manual() {
  ExplainInput input = restartDue();
  input.workload["metadata"]["annotations"] = {{"restarter.stackable.tech/rollout", "manual"}};
  return input;
}

json rollPod(const std::string& name, const std::string& revision, bool ready) {
  return {{"metadata",
           {{"name", name},
            {"creationTimestamp", "2026-11-29T18:00:00Z"},
            {"labels", {{"controller-revision-hash", revision}}},
            {"ownerReferences", json::array({{{"uid", "w-uid"}, {"controller", true}}})}}},
          {"status",
           {{"conditions", json::array({{{"type", "Ready"},
                                         {"status", ready ? "True" : "False"},
                                         {"lastTransitionTime", "2026-11-29T18:00:00Z"}}})}}}};
}

ExplainInput onDeleteBlocked() {
  ExplainInput input = restartDue();
  input.workload["spec"]["updateStrategy"] = {{"type", "OnDelete"}};
  input.workload["status"] = {{"observedGeneration", 3}, {"updateRevision", "web-3"}, {"readyReplicas", 3}};
  input.pods = {rollPod("web-0", "web-2", true), rollPod("web-1", "web-2", true),
                rollPod("web-2", "web-3", true)};
  input.budgets = {{{"metadata", {{"name", "web-budget"}}},
                    {"spec", {{"selector", {{"matchLabels", {{"controller-revision-hash", "web-2"}}}}}}},
                    {"status", {{"disruptionsAllowed", 0}, {"currentHealthy", 3}, {"desiredHealthy", 3}}}}};
  return input;
}

ExplainInput onDeletePaused() {
  ExplainInput input = onDeleteBlocked();
  input.budgets.clear();
  input.pods[2] = rollPod("web-2", "web-3", false);
  input.now = base::parseRfc3339("2026-11-29T19:00:00Z").value();
  return input;
}

ExplainInput rollUnknown() {
  ExplainInput input = onDeleteBlocked();
  input.pods = {json{{"metadata", {{"name", 7}}}}};
  return input;
}

ExplainInput deploymentWithDetails() {
  ExplainInput input = upToDate();
  input.kind = core::WorkloadKind::Deployment;
  input.workload["metadata"]["annotations"] = {
      {"restarter.stackable.tech/content-digests", "configmap/cfg=u/2/00112233445566778899aabbccddeeff"}};
  input.desired = core::desiredAnnotations(input.workload, [](core::RefKind, const std::string&) {
    return core::ObjectState::present("u", "3", false, core::parseDigest("00112233445566778899aabbccddeeff"));
  });
  return input;
}

ExplainInput templateElsewhere() {
  ExplainInput input = restartDue();
  input.kind = core::WorkloadKind::Rollout;
  input.desired = core::makeError(core::ErrorKind::InvalidInput,
                                  "the pod template is the workloadRef Deployment's (explain-restart "
                                  "deployment/web)");
  return input;
}

ExplainInput deletedKeepsCopy() {
  ExplainInput input = restartDue();
  core::DesiredOptions running;
  running.podsRunning = true;
  input.desired = core::desiredAnnotations(
      input.workload, [](core::RefKind, const std::string&) { return core::ObjectState::absent(); }, running);
  return input;
}

ExplainInput reloaderNotSelected() {
  ExplainInput input = restartDue();
  input.workload["metadata"].erase("labels");
  input.workload["metadata"]["annotations"] = {{"reloader.stakater.com/search", "true"}};
  const core::SelectionOptions reloader{true, false};
  input.management = core::workloadManagement(input.workload, reloader);
  core::DesiredOptions options;
  options.selection = reloader;
  input.desired = core::desiredAnnotations(
      input.workload,
      [](core::RefKind, const std::string&) { return core::ObjectState::present("u", "2", false); }, options);
  return input;
}

struct Fixture {
  const char* name;
  ExplainInput (*make)();
};

const Fixture kFixtures[] = {{"restart-due", restartDue},
                             {"up-to-date", upToDate},
                             {"unknown", unknownPending},
                             {"refused-too-large", refusedTooLarge},
                             {"held-by-interval", heldByInterval},
                             {"held-by-window", heldByWindow},
                             {"invalid-window-and-mode", invalidWindowAndMode},
                             {"queued", queued},
                             {"queue-unknown", queueUnknown},
                             {"manual", manual},
                             {"ondelete-blocked", onDeleteBlocked},
                             {"ondelete-paused", onDeletePaused},
                             {"roll-unknown", rollUnknown},
                             {"deployment-metadata-only", deploymentWithDetails},
                             {"template-elsewhere", templateElsewhere},
                             {"deleted-keeps-copy", deletedKeepsCopy},
                             {"reloader-not-selected", reloaderNotSelected}};

std::string goldenPath(const std::string& file) {
  return std::string(RESTARTER_SOURCE_DIR) + "/tests/unit/inspect/golden/" + file;
}

// The golden file's content; with RESTARTER_UPDATE_GOLDEN set, `actual` is written there first.
std::string golden(const std::string& file, const std::string& actual) {
  if (std::getenv("RESTARTER_UPDATE_GOLDEN") != nullptr) std::ofstream(goldenPath(file)) << actual;
  std::ifstream in(goldenPath(file));
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

TEST_CASE("explain-restart prints the pinned JSON and text for each fixture", "[inspect][explain][golden]") {
  for (const Fixture& fixture : kFixtures) {
    INFO(fixture.name);
    const ExplainInput input = fixture.make();
    const std::string jsonText = explanationDocument(explain(input)).dump(2) + "\n";
    CHECK(jsonText == golden(std::string(fixture.name) + ".json", jsonText));
    const std::string text = renderText(explain(input), false);
    CHECK(text == golden(std::string(fixture.name) + ".txt", text));
    const std::string colored = renderText(explain(input), true);
    CHECK(colored == golden(std::string(fixture.name) + ".color.txt", colored));
  }
}

TEST_CASE("status prints the pinned table and document for the fixtures", "[inspect][status][golden]") {
  std::vector<WorkloadStatus> rows;
  for (const Fixture& fixture : kFixtures) {
    ExplainInput input = fixture.make();
    input.workload["metadata"]["name"] = fixture.name;
    rows.push_back(statusFromExplanation(explain(input), input.workload));
  }
  rows.push_back(unreadableStatus(core::WorkloadKind::Deployment, "shop", "unreadable", "pods is forbidden"));
  sortByAttention(rows);
  std::string failing;
  for (const WorkloadStatus& row : rows)
    failing += row.name + (pendingOrUnknown(row) ? ": fails\n" : ": passes\n");
  CHECK(failing == golden("status-fail-if-pending.txt", failing));
  const std::string table = renderStatusTable(rows, true, false, "in any namespace");
  CHECK(table == golden("status-table.txt", table));
  const std::string wide = renderStatusTable(rows, false, true, "in namespace shop");
  CHECK(wide == golden("status-wide.txt", wide));
  const std::string document = statusDocument(rows).dump(2) + "\n";
  CHECK(document == golden("status.json", document));
}

}  // namespace explanation_golden_test
