#include "restarter/core/ignore.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace restarter::core;
using nlohmann::json;

TEST_CASE("ignore annotations name objects and the key suffix only makes keys unique", "[ignore]") {
  const json annotations = {{"restarter.stackable.tech/ignore-configmap.0", "a"},
                            {"restarter.stackable.tech/ignore-configmap.anything", "b"},
                            {"restarter.stackable.tech/ignore-secret.0", "a"},
                            {"restarter.stackable.tech/ignore-configmap", "no-suffix-dot"},
                            {"example.com/ignore-configmap.0", "foreign"},
                            {"unrelated", "x"}};
  auto rules = ignoreRulesFromAnnotations(annotations);
  REQUIRE(rules.ok());
  CHECK(rules->ignores(RefKind::ConfigMap, "a"));
  CHECK(rules->ignores(RefKind::ConfigMap, "b"));
  CHECK(rules->ignores(RefKind::Secret, "a"));
  CHECK_FALSE(rules->ignores(RefKind::Secret, "b"));
  CHECK_FALSE(rules->ignores(RefKind::ConfigMap, "no-suffix-dot"));
  CHECK_FALSE(rules->ignores(RefKind::ConfigMap, "foreign"));
}

TEST_CASE("no annotations means no ignore rules and bad shapes are errors", "[ignore]") {
  auto none = ignoreRulesFromAnnotations(nullptr);
  REQUIRE(none.ok());
  CHECK(none->configMaps.empty());
  CHECK(none->secrets.empty());
  CHECK_FALSE(ignoreRulesFromAnnotations(json::array()).ok());
  CHECK_FALSE(ignoreRulesFromAnnotations({{"restarter.stackable.tech/ignore-secret.x", 1}}).ok());
  // A non-string value of a key we do not read is not our business.
  CHECK(ignoreRulesFromAnnotations({{"other", 1}}).ok());
}

TEST_CASE("the ignore label counts only with the value true", "[ignore]") {
  CHECK(hasIgnoreLabel({{"restarter.stackable.tech/ignore", "true"}}));
  CHECK_FALSE(hasIgnoreLabel({{"restarter.stackable.tech/ignore", "false"}}));
  CHECK_FALSE(hasIgnoreLabel({{"restarter.stackable.tech/ignore", "True"}}));
  CHECK_FALSE(hasIgnoreLabel({{"restarter.stackable.tech/ignore", true}}));
  CHECK_FALSE(hasIgnoreLabel(nullptr));
  CHECK_FALSE(hasIgnoreLabel("labels"));
}
