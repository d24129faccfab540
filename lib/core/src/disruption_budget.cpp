#include "restarter/core/disruption_budget.hpp"

#include "restarter/core/json_access.hpp"

namespace restarter::core {

using nlohmann::json;

namespace {

// The label's value, or nullopt when `labels` has no such string label.
std::optional<std::string> labelValue(const json& labels, const std::string& key) {
  if (!labels.is_object()) return std::nullopt;
  const auto it = labels.find(key);
  if (it == labels.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

bool valuesContain(const json& values, const std::string& value) {
  for (const json& candidate : values) {
    if (candidate.is_string() && candidate.get_ref<const std::string&>() == value) return true;
  }
  return false;
}

bool requirementHolds(const json& requirement, const json& labels) {
  if (!requirement.is_object()) return false;
  const std::string key = stringAt(requirement, {"key"});
  const std::string op = stringAt(requirement, {"operator"});
  if (key.empty()) return false;
  const auto value = labelValue(labels, key);
  if (op == "Exists") return value.has_value();
  if (op == "DoesNotExist") return !value.has_value();
  const json* values = valueAt(requirement, {"values"});
  if (values == nullptr || !values->is_array()) return false;
  if (op == "In") return value && valuesContain(*values, *value);
  if (op == "NotIn") return !value || !valuesContain(*values, *value);
  return false;
}

std::int64_t integerAt(const json& object, std::initializer_list<std::string_view> path,
                       std::int64_t fallback) {
  const json* value = valueAt(object, path);
  return value != nullptr && value->is_number_integer() ? value->get<std::int64_t>() : fallback;
}

}  // namespace

bool selectorMatches(const json& selector, const json& labels) {
  if (!selector.is_object()) return false;
  if (const auto matchLabels = selector.find("matchLabels"); matchLabels != selector.end()) {
    if (!matchLabels->is_object()) return false;
    for (const auto& [key, wanted] : matchLabels->items()) {
      const auto value = labelValue(labels, key);
      if (!wanted.is_string() || !value || *value != wanted.get_ref<const std::string&>()) return false;
    }
  }
  if (const auto expressions = selector.find("matchExpressions"); expressions != selector.end()) {
    if (!expressions->is_array()) return false;
    for (const json& requirement : *expressions) {
      if (!requirementHolds(requirement, labels)) return false;
    }
  }
  return true;
}

std::string BlockingBudget::describe() const {
  return "PodDisruptionBudget " + name + " (" + std::to_string(currentHealthy) + " healthy, " +
         std::to_string(desiredHealthy) + " required: no disruption allowed)";
}

std::optional<BlockingBudget> budgetBlocking(const json& pod, const std::vector<json>& budgets) {
  const json* labels = valueAt(pod, {"metadata", "labels"});
  const json noLabels = json::object();
  for (const json& budget : budgets) {
    const json* selector = valueAt(budget, {"spec", "selector"});
    if (selector == nullptr || !selectorMatches(*selector, labels != nullptr ? *labels : noLabels)) continue;
    const json* status = valueAt(budget, {"status"});
    if (status == nullptr || !status->is_object() || !status->contains("disruptionsAllowed")) continue;
    if (integerAt(*status, {"disruptionsAllowed"}, 1) >= 1) continue;
    return BlockingBudget{stringAt(budget, {"metadata", "name"}), integerAt(*status, {"currentHealthy"}, 0),
                          integerAt(*status, {"desiredHealthy"}, 0)};
  }
  return std::nullopt;
}

}  // namespace restarter::core
