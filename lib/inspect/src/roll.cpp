// restarter roll: the plan and the write (see roll.hpp).
#include "restarter/inspect/roll.hpp"

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/rollout_mode.hpp"
#include "restarter/core/rollout_queue.hpp"
#include "restarter/core/workload_kinds.hpp"
#include "restarter/core/write_plan.hpp"

namespace restarter::inspect {

using nlohmann::json;

std::vector<std::string> gatesHolding(const Explanation& explanation) {
  std::vector<std::string> gates;
  const Pending& pending = explanation.pending;
  // A rollout window (the workload's or the controller's --rollout-window) that has not opened.
  const RolloutWindow& window = pending.window;
  if (window.state == WindowState::Held || window.state == WindowState::Closed) {
    gates.push_back("the rollout window \"" + window.window + "\" holds it until " +
                    (window.nextOpening ? base::formatRfc3339(*window.nextOpening) : ""));
  }
  // Today's hold (--min-rollout-interval): the floor, or the previous rollout still in progress.
  const RolloutHold& hold = pending.hold;
  switch (hold.state) {
    case HoldState::Held: gates.push_back("the rollout hold holds it: " + hold.description); break;
    case HoldState::Unknown:
      gates.push_back("the rollout hold may hold it (unknown: " + hold.reason.value_or("") + ")");
      break;
    case HoldState::NotHeld: break;
  }
  // The fleet-wide rollout queue (--max-concurrent-rollouts): queued behind others, or unknown.
  const RolloutQueue& queue = pending.queue;
  switch (queue.state) {
    case QueueState::Queued:
      gates.push_back("the rollout queue holds it: " + core::describeQueued(queue.ahead));
      break;
    case QueueState::Unknown:
      gates.push_back("the rollout queue may hold it (unknown: " + queue.reason.value_or("") + ")");
      break;
    case QueueState::NotQueued: break;
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
  const std::vector<std::string> gates = gatesHolding(explain(input));
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
