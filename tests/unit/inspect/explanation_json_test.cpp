// The JSON renderer over hand-made explanations: each state's section carries the keys the
// schema gives it, in its order, and no others.
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "restarter/base/rfc3339.hpp"
#include "restarter/inspect/explanation.hpp"

namespace explanation_json_test {

using namespace restarter;
using namespace restarter::inspect;
using nlohmann::ordered_json;

core::TimePoint at(const char* text) { return base::parseRfc3339(text).value(); }

// The keys of `object` in order.
std::vector<std::string> keys(const ordered_json& object) {
  std::vector<std::string> out;
  for (const auto& item : object.items()) out.push_back(item.key());
  return out;
}

TEST_CASE("the document has the schema's sections in order and the roll only when there is one",
          "[inspect][explanation][json]") {
  Explanation explanation = inspect_fixtures::dueExplanation();
  ordered_json doc = explanationDocument(explanation);
  CHECK(keys(doc) == std::vector<std::string>{"apiVersion", "kind", "workload", "managedBy", "firstRollout",
                                              "revisions", "pending"});
  CHECK(keys(doc["pending"]) == std::vector<std::string>{"status", "changes", "references", "rolloutHold",
                                                         "rolloutWindow", "rolloutQueue", "rolloutMode"});
  CHECK(doc["pending"]["status"] == "restart-due");
  CHECK(doc["pending"]["changes"][0]["after"] == "u/3");
  explanation.roll = Roll{};
  CHECK(explanationDocument(explanation).contains("roll"));
}

TEST_CASE("pending's reason appears only when there is one", "[inspect][explanation][json]") {
  Explanation explanation = inspect_fixtures::dueExplanation();
  explanation.pending.state = PendingState::Unknown;
  explanation.pending.reason = "configmap/cfg: state unknown: forbidden";
  explanation.pending.changes.clear();
  const ordered_json pending = explanationDocument(explanation)["pending"];
  CHECK(pending["status"] == "unknown");
  CHECK(pending["reason"] == "configmap/cfg: state unknown: forbidden");
}

TEST_CASE("the hold section has each state's keys", "[inspect][explanation][json]") {
  Explanation explanation = inspect_fixtures::dueExplanation();
  RolloutHold& hold = explanation.pending.hold;
  CHECK(keys(explanationDocument(explanation)["pending"]["rolloutHold"]) ==
        std::vector<std::string>{"status", "lastRollout"});
  hold.state = HoldState::Held;
  hold.until = at("2027-01-15T08:05:00Z");
  hold.description = "held until 2027-01-15T08:05:00Z";
  hold.recorded = at("2027-01-15T08:00:05Z");
  hold.lastRollout = at("2027-01-15T08:00:00Z");
  const ordered_json held = explanationDocument(explanation)["pending"]["rolloutHold"];
  CHECK(keys(held) ==
        std::vector<std::string>{"status", "until", "waitingFor", "description", "recorded", "lastRollout"});
  CHECK(held["waitingFor"].is_null());
  CHECK(held["until"] == "2027-01-15T08:05:00Z");
  hold = RolloutHold{};
  hold.state = HoldState::Unknown;
  hold.reason = "events is forbidden";
  const ordered_json unknown = explanationDocument(explanation)["pending"]["rolloutHold"];
  CHECK(keys(unknown) == std::vector<std::string>{"status", "reason", "lastRollout"});
  CHECK(unknown["lastRollout"].is_null());
}

TEST_CASE("the window and queue sections have each state's keys", "[inspect][explanation][json]") {
  Explanation explanation = inspect_fixtures::dueExplanation();
  RolloutWindow& window = explanation.pending.window;
  window = RolloutWindow{WindowState::Held,          "09:00-10:00",
                         WindowSource::Annotation,   "",
                         at("2027-01-15T09:00:00Z"), "held by the rollout window until 2027-01-15T09:00:00Z"};
  CHECK(keys(explanationDocument(explanation)["pending"]["rolloutWindow"]) ==
        std::vector<std::string>{"status", "window", "source", "nextOpening", "description"});
  window = RolloutWindow{};
  window.state = WindowState::Invalid;
  window.window = "9-10";
  window.reason = "not a time";
  const ordered_json invalid = explanationDocument(explanation)["pending"]["rolloutWindow"];
  CHECK(keys(invalid) == std::vector<std::string>{"status", "window", "source", "reason"});
  CHECK(invalid["source"] == "controller default");

  RolloutQueue& queue = explanation.pending.queue;
  queue = RolloutQueue{QueueState::Queued, std::nullopt, at("2027-01-15T08:00:05Z"), 2, 1, "all namespaces"};
  const ordered_json queued = explanationDocument(explanation)["pending"]["rolloutQueue"];
  CHECK(keys(queued) ==
        std::vector<std::string>{"status", "since", "priority", "ahead", "scope", "description"});
  CHECK(queued["description"] == "queued: 1 rollout ahead");
  queue = RolloutQueue{};
  queue.reason = "nothing pending";
  CHECK(keys(explanationDocument(explanation)["pending"]["rolloutQueue"]) ==
        std::vector<std::string>{"status", "reason"});
}

TEST_CASE("the roll section names a blocking budget only when there is one", "[inspect][explanation][json]") {
  Explanation explanation = inspect_fixtures::dueExplanation();
  explanation.roll = Roll{core::UpdateStrategy::OnDelete,
                          std::chrono::seconds(600),
                          RollState::Rolling,
                          "the next pod to evict is web-1",
                          std::nullopt,
                          {"web-1"},
                          {},
                          ""};
  const ordered_json roll = explanationDocument(explanation)["roll"];
  CHECK(keys(roll) == std::vector<std::string>{"updateStrategy", "readyTimeout", "state", "reason",
                                               "outdatedPods", "keptPods", "blockingPod"});
  CHECK(roll["updateStrategy"] == "OnDelete");
  CHECK(roll["readyTimeout"] == "10m");
  explanation.roll->blockedBy = "PodDisruptionBudget/web-budget";
  CHECK(explanationDocument(explanation)["roll"]["blockedBy"] == "PodDisruptionBudget/web-budget");
}

}  // namespace explanation_json_test
