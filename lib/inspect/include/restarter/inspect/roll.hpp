#pragma once
// `restarter roll KIND/NAME` (docs/behaviour.md, "Manual mode and roll"): applies exactly the
// change explain-restart shows as pending, through the write the controller's rollOut makes
// (core/rollout_write.hpp: the same apply body, the kind's field manager, force, last-rollout
// stamped), then records a Restarted Event that names the user's action.
//
// planRoll judges an ExplainInput read as explain-restart reads it (readExplainInput, with the
// controller's judgement flags): the same core::desiredAnnotations and core::planWrite, so what it
// rolls is what explain-restart lists under Pending. applyRoll makes the write.
//
// The gates (docs/behaviour.md): manual mode is what `roll` is for, and a manual workload is rolled
// whatever the other gates say (running roll is the decision they would otherwise make). For a
// workload that is not manual, any gate that holds the pending rollout (gatesHolding: today's hold
// while the previous rollout runs or within the floor; a rollout window or the rollout queue add
// their own words there) makes planRoll refuse unless `now`: with it, roll consults no gate at
// all, so it overrides a window or the queue for this one workload. The controller, seeing its
// template already as desired, then has nothing left to roll.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/core/annotations.hpp"
#include "restarter/core/rollout_write.hpp"
#include "restarter/core/time.hpp"
#include "restarter/inspect/explanation.hpp"
#include "restarter/kube/client.hpp"

namespace restarter::inspect {

enum class RollVerdict {
  Roll,            // a template change is pending and may be rolled now
  NothingPending,  // the template is as desired (records alone may differ: the controller writes those)
  Held,            // another gate holds it and `now` was not given (reason: which, until when)
  Refused,         // not managed by restarter, or the write would not fit the apiserver's size limit
  Unknown,         // what is pending cannot be judged (a reference unreadable, no own pod template)
};

struct RollPlan {
  RollVerdict verdict = RollVerdict::Unknown;
  std::string reason;                           // why not Roll; empty for Roll and NothingPending
  bool manual = false;                          // restarter.stackable.tech/rollout: manual
  std::vector<core::AnnotationChange> changes;  // explain-restart's pending changes
  // The write (Roll, Held): the desired annotations and the kind's field manager.
  std::optional<core::DesiredAnnotations> desired;
  std::string fieldManager;
};

// What holds the pending rollout of an explanation (explain()) besides manual
// mode, one clause each ("the rollout hold holds it: waiting for the previous rollout (...), at
// most until <time>"); empty when nothing does. A gate whose state cannot be read is named too
// ("the rollout hold may hold it (unknown: ...)").
std::vector<std::string> gatesHolding(const Explanation& explanation);

// The plan for `input` (see the file comment). `now`: consult no gate (as for a manual workload).
RollPlan planRoll(const ExplainInput& input, bool now);

// "configmap/a: <uid>/1 -> <uid>/2 (updated); ...": the changes in the controller's words.
std::string describePlan(const RollPlan& plan);

struct RollResult {
  nlohmann::json applied;                       // the workload as the apply returned it
  core::AppliedAnnotations sent;                // what the apply sent
  std::vector<core::AnnotationChange> removed;  // foreign leftovers removed after it
  std::optional<core::Error> eventError;        // the Restarted Event could not be recorded
};

// The reporting controller of roll's Events (the controller's is restarter.stackable.tech/controller).
inline constexpr const char* kRollReportingController = "restarter.stackable.tech/roll";

// Applies a plan whose verdict is Roll (or Held, when the caller overrides it): one server-side
// apply with the kind's field manager stamping last-rollout `rolledAt`, the guarded removal of
// restarter keys another manager owns, and a Normal Event Restarted (action Restart) whose note
// says it was `restarter roll`, a user's action (the apiserver's audit log names the user). A failed
// Event does not fail the roll (the restart happened): it is returned in eventError.
core::Result<RollResult> applyRoll(kube::Client& client, const ExplainInput& input, const RollPlan& plan,
                                   core::TimePoint rolledAt);

}  // namespace restarter::inspect
