// Building explain-restart's answer from what was read (see explanation.hpp, explain).
#include "restarter/inspect/explanation.hpp"

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/disruption_budget.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/roll_input.hpp"
#include "restarter/core/rollout.hpp"
#include "restarter/core/rollout_queue.hpp"
#include "restarter/core/rollout_window.hpp"
#include "restarter/core/write_plan.hpp"

namespace restarter::inspect {

using nlohmann::json;

namespace {

// The write the controller would make (stamping its last-rollout), or why none can be judged.
Pending pendingOf(const ExplainInput& input) {
  Pending pending;
  if (!input.desired) {
    pending.state = PendingState::Unknown;
    pending.reason = input.desired.error().describe();
    return pending;
  }
  std::string refusal;
  auto plan = core::planWrite(input.workload, *input.desired, core::WriteOptions{true});
  if (plan) {
    pending.changes = std::move(plan->changes);
    refusal = plan->refusal();
  }
  // A write the apiserver would refuse is never made: not "restart due" forever, but refused
  // (the controller records an AnnotationsTooLarge Event once).
  if (!refusal.empty()) {
    pending.state = PendingState::RefusedTooLarge;
    pending.reason = "annotations too large: " + refusal;
  } else {
    pending.state = pending.changes.empty() ? PendingState::UpToDate : PendingState::RestartDue;
  }
  pending.references = input.desired->references;
  return pending;
}

// Whether the controller's minimum rollout interval holds the pending rollout: the RolloutHeld
// Event says when the hold ends at the latest; what it waits for now is judged again from the
// workload's status, as the controller judges it (core::decideRollout), with the interval the
// Event implies (its upper bound less the last rollout).
RolloutHold holdOf(const ExplainInput& input, bool changesPending) {
  RolloutHold hold;
  hold.lastRollout = core::lastRolloutOf(input.workload);
  if (!input.heldRollouts) {
    hold.state = HoldState::Unknown;
    hold.reason = input.heldRollouts.error().describe();
    return hold;
  }
  const auto current = core::currentRolloutHold(*input.heldRollouts, hold.lastRollout, changesPending);
  if (!current) return hold;
  std::optional<core::RolloutDecision> now;
  if (hold.lastRollout && current->until > *hold.lastRollout) {
    now = core::decideRollout(
        hold.lastRollout, input.now,
        std::chrono::duration_cast<std::chrono::milliseconds>(current->until - *hold.lastRollout),
        core::rolloutProgressOf(input.workload, input.kind));
  }
  if (now && now->rollNow) {
    hold.reason = now->reason;
    return hold;
  }
  hold.state = HoldState::Held;
  const bool floorOnly = now && now->waitingFor.empty();
  hold.until = floorOnly ? now->notBefore : current->until;
  if (now && !now->waitingFor.empty()) hold.waitingFor = now->waitingFor;
  hold.description = now ? core::describeHold(*now) : "held until " + base::formatRfc3339(current->until);
  hold.recorded = current->recorded;
  return hold;
}

// The rollout window as serve-controller judges it at `input.now` (core/rollout_window.hpp): the
// workload's annotation, else the controller's --rollout-window (as given to this command).
RolloutWindow windowOf(const ExplainInput& input, bool restartDue) {
  const auto own = core::ownRolloutWindowOf(input.workload);
  RolloutWindow window;
  window.window = own ? own->spec : input.defaultRolloutWindow;
  window.source = own ? WindowSource::Annotation : WindowSource::ControllerDefault;
  const auto schedule = own ? own->schedule : core::parseRolloutSchedule(window.window);
  if (!schedule) {
    window.state = WindowState::Invalid;
    window.reason = schedule.error().message;
    return window;
  }
  if (schedule->always()) return window;
  const core::TimePoint opening = schedule->nextOpening(input.now);
  if (schedule->isOpen(input.now)) {
    window.state = WindowState::Open;
    return window;
  }
  window.state = restartDue ? WindowState::Held : WindowState::Closed;
  window.nextOpening = opening;
  if (restartDue) window.description = "held by the rollout window until " + base::formatRfc3339(opening);
  return window;
}

// --max-concurrent-rollouts: the workload's place in the controller's queue.
RolloutQueue queueOf(const ExplainInput& input, bool changesPending) {
  RolloutQueue queue;
  const auto self = queuedRolloutOf(input.workload, input.kind);
  if (!self) return queue;
  if (!changesPending) {
    queue.reason = "nothing pending: the controller removes the queued-since record";
    return queue;
  }
  if (!input.rolloutQueue) {
    queue.state = QueueState::Unknown;
    queue.reason = input.rolloutQueue.error().describe();
    return queue;
  }
  const core::SlotAdmission place = core::admitRollout(1, 1, *input.rolloutQueue, *self);
  queue.state = QueueState::Queued;
  queue.since = self->since;
  queue.priority = self->priority;
  queue.ahead = place.ahead;
  queue.scope = input.rolloutQueueScope;
  return queue;
}

// Manual or auto (core/rollout_mode.hpp), the invalid value warned about, and for a manual
// workload with a change due the command that rolls it.
RolloutModeView modeOf(const ExplainInput& input, bool restartDue) {
  const core::RolloutModeSetting setting = core::rolloutModeOf(input.workload);
  RolloutModeView mode{setting.mode, setting.invalid, std::nullopt};
  if (setting.mode == core::RolloutMode::Manual && restartDue) {
    mode.rollCommand = core::rollCommand(input.kind, core::metadataString(input.workload, "namespace"),
                                         core::metadataString(input.workload, "name"));
  }
  return mode;
}

// The roll: the same core::decideRoll the controller's OnDelete roll makes, over the pods read
// here. A workload or pod the API describes oddly gives state Unknown and the reason.
Roll rollOf(const ExplainInput& input) {
  Roll roll;
  roll.readyTimeout = input.readyTimeout;
  auto workload = core::rollWorkloadFromJson(input.workload, input.kind, input.daemonSetRevision);
  std::vector<core::RollPod> pods;
  core::Status read = core::okStatus();
  if (workload) {
    for (const json& item : input.pods) {
      auto pod = core::rollPodFromJson(item, input.kind);
      if (!pod) {
        read = std::move(pod).error();
        break;
      }
      pods.push_back(std::move(*pod));
    }
  }
  if (workload) roll.strategy = workload->strategy;
  if (!workload || !read) {
    roll.reason = !workload ? workload.error().describe() : read.error().describe();
    return roll;
  }
  core::RollDecision decision = core::decideRoll(*workload, std::move(pods), input.now, input.readyTimeout);
  roll.state = rollStateOf(decision.state);
  roll.reason = decision.reason;
  if (decision.evict) {
    roll.reason = "the next pod to evict is " + *decision.evict;
    // An eviction the Eviction API refuses is retried by the controller; name what it waits for.
    std::optional<core::BlockingBudget> budget;
    for (const json& pod : input.pods) {
      if (core::metadataString(pod, "name") != *decision.evict) continue;
      budget = core::budgetBlocking(pod, input.budgets);
      break;
    }
    if (budget) {
      roll.reason += ", whose eviction waits for " + budget->describe();
      roll.blockedBy = "PodDisruptionBudget/" + budget->name;
    }
  }
  roll.outdatedPods = std::move(decision.outdated);
  roll.keptPods = std::move(decision.kept);
  roll.blockingPod = std::move(decision.blockingPod);
  return roll;
}

}  // namespace

Explanation explain(const ExplainInput& input) {
  Explanation out;
  out.workload = {input.kind, core::metadataString(input.workload, "namespace"),
                  core::metadataString(input.workload, "name"), core::metadataString(input.workload, "uid")};
  out.management = input.management;
  out.revisions = core::explainRevisions(input.revisions);
  out.currentRevision = input.currentRevision;
  out.pending = pendingOf(input);
  out.firstRollout = core::judgeFirstRollout(input.workload, input.kind, out.revisions, out.pending.changes);
  const bool changesPending = !out.pending.changes.empty();
  const bool restartDue = out.pending.state == PendingState::RestartDue;
  out.pending.hold = holdOf(input, changesPending);
  out.pending.window = windowOf(input, restartDue);
  out.pending.queue = queueOf(input, changesPending);
  if (input.baselineRecorded)
    out.pending.baselineRecorded = {input.baselineRecorded->first, input.baselineRecorded->second};
  out.pending.mode = modeOf(input, restartDue);
  if (!core::revisionsInReplicaSets(input.kind)) out.roll = rollOf(input);
  return out;
}

}  // namespace restarter::inspect
