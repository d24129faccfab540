// restarter roll: the plan and the write (see roll.hpp).
#include "restarter/inspect/roll.hpp"

#include "restarter/core/constants.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/rollout_mode.hpp"
#include "restarter/core/workload_kinds.hpp"
#include "restarter/core/write_plan.hpp"

namespace restarter::inspect {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

std::string textAt(const ordered_json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

const ordered_json& memberOf(const ordered_json& object, const char* key) {
  static const ordered_json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it != object.end() ? *it : kNull;
}

}  // namespace

std::vector<std::string> gatesHolding(const ordered_json& explanation) {
  std::vector<std::string> gates;
  const ordered_json& pending = memberOf(explanation, "pending");
  // A rollout window (the workload's or the controller's --rollout-window) that has not opened.
  const ordered_json& window = memberOf(pending, "rolloutWindow");
  if (textAt(window, "status") == "held" || textAt(window, "status") == "closed") {
    gates.push_back("the rollout window \"" + textAt(window, "window") + "\" holds it until " +
                    textAt(window, "nextOpening"));
  }
  // Today's hold (--min-rollout-interval): the floor, or the previous rollout still in progress.
  const ordered_json& hold = memberOf(pending, "rolloutHold");
  const std::string holdStatus = textAt(hold, "status");
  if (holdStatus == "held") {
    const std::string description = textAt(hold, "description");
    gates.push_back("the rollout hold holds it: " +
                    (description.empty() ? "held until " + textAt(hold, "until") : description));
  } else if (holdStatus == "unknown") {
    gates.push_back("the rollout hold may hold it (unknown: " + textAt(hold, "reason") + ")");
  }
  // The fleet-wide rollout queue (--max-concurrent-rollouts): queued behind others, or unknown.
  const ordered_json& queue = memberOf(pending, "rolloutQueue");
  if (textAt(queue, "status") == "queued") {
    gates.push_back("the rollout queue holds it: " + textAt(queue, "description"));
  } else if (textAt(queue, "status") == "unknown") {
    gates.push_back("the rollout queue may hold it (unknown: " + textAt(queue, "reason") + ")");
  }
  return gates;
}

RollPlan planRoll(const ExplainInput& input, bool now) {
  RollPlan plan;
  plan.manual = core::rolloutModeOf(input.workload).mode == core::RolloutMode::Manual;
  plan.fieldManager = std::string(core::managedKind(input.kind).fieldManager);
  if (input.management.by == core::ManagedBy::None) {
    plan.verdict = RollVerdict::Refused;
    plan.reason = "not managed by restarter (label it " + std::string(core::kEnabledSelector) +
                  "): the controller would not roll it either";
    return plan;
  }
  if (!input.desired) {
    plan.verdict = RollVerdict::Unknown;
    plan.reason = input.desired.error().describe();
    return plan;
  }
  // The same plan as the controller's and explain-restart's (stamping last-rollout).
  auto write = core::planWrite(input.workload, *input.desired, core::WriteOptions{true});
  if (!write) {
    plan.verdict = RollVerdict::Unknown;
    plan.reason = write.error().describe();
    return plan;
  }
  if (write->kind != core::WriteKind::Template) {
    plan.verdict = RollVerdict::NothingPending;
    return plan;
  }
  plan.changes = write->changes;
  plan.desired = *input.desired;
  if (!write->fits()) {
    plan.verdict = RollVerdict::Refused;
    plan.reason = "annotations too large: " + write->refusal();
    return plan;
  }
  plan.verdict = RollVerdict::Roll;
  // Running roll on a manual workload is the decision its gates would otherwise make.
  if (now || plan.manual) return plan;
  const std::vector<std::string> gates = gatesHolding(explanationDocument(input));
  if (gates.empty()) return plan;
  plan.verdict = RollVerdict::Held;
  for (const std::string& gate : gates) plan.reason += (plan.reason.empty() ? "" : "; ") + gate;
  return plan;
}

std::string describePlan(const RollPlan& plan) {
  std::string text;
  for (const core::AnnotationChange& change : plan.changes) {
    if (!text.empty()) text += "; ";
    text += change.describe();
  }
  return text;
}

core::Result<RollResult> applyRoll(kube::Client& client, const ExplainInput& input, const RollPlan& plan,
                                   core::TimePoint rolledAt) {
  if (!plan.desired || (plan.verdict != RollVerdict::Roll && plan.verdict != RollVerdict::Held))
    return core::makeError(core::ErrorKind::InvalidInput, "nothing to roll");
  const core::ManagedKind& kind = core::managedKind(input.kind);
  const kube::ResourceRef resource = workloadResourceOf(input.kind);
  const std::string ns = core::metadataString(input.workload, "namespace");
  const std::string name = core::metadataString(input.workload, "name");
  RollResult result;
  result.sent = core::rolloutAnnotations(input.workload, *plan.desired, rolledAt);
  auto applied = client.apply(resource, ns, name,
                              core::applyBody(resource.apiVersion(), kind.name, input.workload, result.sent),
                              kube::ApplyOptions{std::string(kind.fieldManager), true, false});
  if (!applied)
    return std::move(applied).error().withContext("applying annotations to " + std::string(kind.id) + " " + ns +
                                                  "/" + name);
  result.applied = std::move(*applied);
  auto leftovers = core::foreignLeftoverPatch(result.applied, *plan.desired, &result.removed);
  if (!leftovers) return std::move(leftovers).error();
  if (*leftovers) {
    auto patched = client.jsonPatch(resource, ns, name, **leftovers,
                                    kube::WriteOptions{false, std::string(kind.fieldManager)});
    if (!patched)
      return std::move(patched).error().withContext("removing annotations of " + std::string(kind.id) + " " +
                                                    ns + "/" + name);
  }
  kube::EventRecord event;
  event.namespace_ = ns;
  event.regarding = kube::ObjectReference{resource.apiVersion(), std::string(kind.name), ns, name,
                                          core::metadataString(input.workload, "uid")};
  event.type = "Normal";
  event.reason = "Restarted";
  event.action = "Restart";
  event.note =
      "Restarting pods (restarter roll: a user's action, not the controller's): referenced objects in namespace " +
      ns + " changed: " + describePlan(plan);
  event.reportingController = kRollReportingController;
  event.reportingInstance = "restarter-roll";
  if (auto created = client.createEvent(event); !created) result.eventError = std::move(created).error();
  return result;
}

}  // namespace restarter::inspect
