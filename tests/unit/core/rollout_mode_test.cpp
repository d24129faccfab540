#include "restarter/core/rollout_mode.hpp"

#include <catch2/catch.hpp>

using namespace restarter::core;
using nlohmann::json;

namespace {

json annotated(json value) {
  return {{"metadata", {{"annotations", {{"restarter.stackable.tech/rollout", std::move(value)}}}}}};
}

}  // namespace

TEST_CASE("the rollout mode is manual only for the exact value and anything else but auto is warned about",
          "[core][rollout-mode]") {
  struct Row {
    json workload;
    RolloutMode mode;
    std::optional<std::string> invalid;
  };
  const std::vector<Row> rows = {
      {json::object(), RolloutMode::Auto, std::nullopt},
      {json{{"metadata", {{"annotations", {{"other", "manual"}}}}}}, RolloutMode::Auto, std::nullopt},
      {annotated("manual"), RolloutMode::Manual, std::nullopt},
      {annotated("auto"), RolloutMode::Auto, std::nullopt},
      {annotated("Manual"), RolloutMode::Auto, "Manual"},
      {annotated(""), RolloutMode::Auto, ""},
      {annotated(" manual"), RolloutMode::Auto, " manual"},
      {annotated(true), RolloutMode::Auto, "true"},
      {json{{"metadata", {{"annotations", "not an object"}}}}, RolloutMode::Auto, std::nullopt},
      {json::array(), RolloutMode::Auto, std::nullopt},
  };
  for (const Row& row : rows) {
    CAPTURE(row.workload.dump());
    const RolloutModeSetting setting = rolloutModeOf(row.workload);
    CHECK(setting.mode == row.mode);
    CHECK(setting.invalid == row.invalid);
  }
}

TEST_CASE("an invalid rollout mode is quoted at most 64 bytes and never cut inside a character",
          "[core][rollout-mode]") {
  const std::string huge = "é" + std::string(100'000, 'x');
  const RolloutModeSetting setting = rolloutModeOf(annotated(huge));
  REQUIRE(setting.invalid);
  CHECK(setting.invalid->size() <= kMaxQuotedModeBytes);
  CHECK(setting.invalid->rfind("é", 0) == 0);
  CHECK_THAT(invalidRolloutModeNote(*setting.invalid), Catch::Contains("rolls this workload itself (auto)"));
}

TEST_CASE("a pending set's digest is the same for the same set and differs for another",
          "[core][rollout-mode]") {
  const AnnotationMap a = {{"configmap.restarter.stackable.tech/app", "u/2"}};
  const AnnotationMap b = {{"configmap.restarter.stackable.tech/app", "u/3"}};
  // Length-prefixed: moving a character from key to value is another set.
  const AnnotationMap c = {{"configmap.restarter.stackable.tech/ap", "pu/2"}};
  CHECK(pendingSetDigest(a) == pendingSetDigest(AnnotationMap(a)));
  CHECK(pendingSetDigest(a).size() == 16);
  CHECK(pendingSetDigest(a) != pendingSetDigest(b));
  CHECK(pendingSetDigest(a) != pendingSetDigest(c));
  CHECK(pendingSetDigest({}) != pendingSetDigest(a));
}

TEST_CASE("the roll command names the kind and the workload and its namespace", "[core][rollout-mode]") {
  CHECK(rollCommand(WorkloadKind::Deployment, "shop", "web") ==
        "kubectl restarter roll deployment/web -n shop");
  CHECK(rollCommand(WorkloadKind::StatefulSet, "", "db") == "kubectl restarter roll statefulset/db");
  const std::string note = rolloutPendingNote("configmap/app: u/1 -> u/2 (updated)", "0123456789abcdef",
                                              "kubectl restarter roll deployment/web -n shop");
  // The digest and the command come first: the API keeps 1024 bytes of a note.
  CHECK(note.find("0123456789abcdef") < 100);
  CHECK(note.find("`kubectl restarter roll deployment/web -n shop`") != std::string::npos);
  CHECK_THAT(note, Catch::EndsWith("configmap/app: u/1 -> u/2 (updated)"));
}
