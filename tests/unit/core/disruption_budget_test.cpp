#include "restarter/core/disruption_budget.hpp"

#include <catch2/catch.hpp>

using namespace restarter::core;
using nlohmann::json;

namespace {

json budgetPod(const json& labels) { return {{"metadata", {{"name", "db-2"}, {"labels", labels}}}}; }

json budget(const std::string& name, const json& selector, const json& status) {
  json object = {{"metadata", {{"name", name}}}, {"spec", {{"selector", selector}}}};
  if (!status.is_null()) object["status"] = status;
  return object;
}

}  // namespace

TEST_CASE("label selectors: matchLabels and each expression operator", "[disruption_budget]") {
  const json labels = {{"app", "db"}, {"tier", "data"}};
  CHECK(selectorMatches(json::object(), labels));  // empty: every pod (policy/v1)
  CHECK_FALSE(selectorMatches(nullptr, labels));   // absent: none
  CHECK(selectorMatches({{"matchLabels", {{"app", "db"}}}}, labels));
  CHECK_FALSE(selectorMatches({{"matchLabels", {{"app", "web"}}}}, labels));
  CHECK_FALSE(selectorMatches({{"matchLabels", {{"zone", "a"}}}}, labels));
  const auto expression = [](const std::string& op, const json& values) {
    json requirement = {{"key", "tier"}, {"operator", op}};
    if (!values.is_null()) requirement["values"] = values;
    return json{{"matchExpressions", json::array({requirement})}};
  };
  CHECK(selectorMatches(expression("In", {"data", "cache"}), labels));
  CHECK_FALSE(selectorMatches(expression("In", {"cache"}), labels));
  CHECK(selectorMatches(expression("NotIn", {"cache"}), labels));
  CHECK_FALSE(selectorMatches(expression("NotIn", {"data"}), labels));
  CHECK(selectorMatches(expression("Exists", nullptr), labels));
  CHECK_FALSE(selectorMatches(expression("DoesNotExist", nullptr), labels));
  CHECK(selectorMatches(expression("NotIn", {"data"}), json{{"app", "db"}}));  // no such label
  // Malformed selectors select nothing rather than everything.
  CHECK_FALSE(selectorMatches(expression("Near", {"data"}), labels));
  CHECK_FALSE(selectorMatches(expression("In", "data"), labels));
  CHECK_FALSE(selectorMatches({{"matchLabels", json::array()}}, labels));
  CHECK_FALSE(selectorMatches({{"matchExpressions", json::array({{{"operator", "Exists"}}})}}, labels));
  CHECK_FALSE(selectorMatches({{"matchLabels", {{"app", 1}}}}, labels));
}

TEST_CASE("the budget that allows no disruption of a pod is the blocking one", "[disruption_budget]") {
  const json pod = budgetPod({{"app", "db"}});
  const json selects = {{"matchLabels", {{"app", "db"}}}};
  const std::vector<json> budgets = {
      budget("elsewhere", {{"matchLabels", {{"app", "web"}}}}, {{"disruptionsAllowed", 0}}),
      budget("unjudged", selects, nullptr), budget("allows", selects, {{"disruptionsAllowed", 1}}),
      budget("blocks", selects, {{"disruptionsAllowed", 0}, {"currentHealthy", 2}, {"desiredHealthy", 3}})};
  const auto blocking = budgetBlocking(pod, budgets);
  REQUIRE(blocking);
  CHECK(blocking->name == "blocks");
  CHECK(blocking->describe() == "PodDisruptionBudget blocks (2 healthy, 3 required: no disruption allowed)");
  CHECK_FALSE(budgetBlocking(pod, {budgets[0], budgets[1], budgets[2]}));
  CHECK_FALSE(budgetBlocking(budgetPod(nullptr), {budgets[3]}));  // a pod without labels
  CHECK_FALSE(budgetBlocking(json::array(), budgets));            // any JSON shape is tolerated
}
