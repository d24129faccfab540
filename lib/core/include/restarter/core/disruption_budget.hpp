#pragma once
// Which PodDisruptionBudget holds up the eviction of a pod: explain-restart and status name it
// where an OnDelete roll waits on a refused eviction (docs/architecture.md, "Rolls from the
// cluster"). Pure: the caller lists the namespace's budgets.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace restarter::core {

// Whether a metav1.LabelSelector (as JSON) selects an object with `labels` (a JSON object of
// strings): every matchLabels pair and every matchExpressions requirement (In, NotIn, Exists,
// DoesNotExist) holds. As policy/v1 reads a budget's selector: an empty selector selects every
// pod, an absent (null) one none; an unknown operator or a malformed requirement selects none.
bool selectorMatches(const nlohmann::json& selector, const nlohmann::json& labels);

struct BlockingBudget {
  std::string name;
  std::int64_t currentHealthy = 0;
  std::int64_t desiredHealthy = 0;

  // "PodDisruptionBudget db-budget (2 healthy, 2 required: no disruption allowed)"
  std::string describe() const;
};

// The first budget (in the order given) whose selector selects `pod` and whose status allows no
// disruption (status.disruptionsAllowed < 1), which the Eviction API refuses (429). nullopt when
// none does. Budgets without a status yet are skipped: the disruption controller has not judged
// them, and the eviction is refused for them with another reason.
std::optional<BlockingBudget> budgetBlocking(const nlohmann::json& pod,
                                             const std::vector<nlohmann::json>& budgets);

}  // namespace restarter::core
