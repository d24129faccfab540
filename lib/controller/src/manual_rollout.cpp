// Gate 1 of a template change: manual mode (workload.hpp, manualGate; docs/behaviour.md, "Manual
// mode and roll"). The write a manual workload waits for is the one `restarter roll` makes
// (core/rollout_write.hpp), never this controller.
#include "restarter/controller/workload.hpp"

#include "restarter/core/json_access.hpp"
#include "restarter/core/rollout_mode.hpp"

namespace restarter::controller {

namespace {

constexpr const char* kManualTopic = "manual";
constexpr const char* kRolloutModeTopic = "rollout-mode";

}  // namespace

void WorkloadReconciler::setManualPending(const std::string& key, bool pending) {
  // Nothing pending any more: the same set pending again later is announced again.
  if (!pending) announced_.forget(key, kManualTopic);
  std::lock_guard lock(mutex_);
  const std::size_t before = manualPending_.size();
  if (pending) {
    manualPending_.insert(key);
  } else {
    manualPending_.erase(key);
  }
  if (manualPending_.size() != before)
    context_.metrics.manualPending.with({kind_.name}).set(static_cast<double>(manualPending_.size()));
}

void WorkloadReconciler::noteRolloutMode(const nlohmann::json& workload, const std::string& key) {
  const core::RolloutModeSetting setting = core::rolloutModeOf(workload);
  if (!setting.invalid) {
    announced_.forget(key, kRolloutModeTopic);
    return;
  }
  if (!announced_.once(key, kRolloutModeTopic, *setting.invalid)) return;
  const std::string note = core::invalidRolloutModeNote(*setting.invalid);
  context_.logger.warn("invalid rollout mode, rolled as auto",
                       {{"kind", kind_.name}, {"workload", key}, {"why", note}});
  // Logged, not retried: the workload is rolled as auto either way.
  if (core::Status s =
          recordEvent(workload, "Warning", std::string(core::kInvalidRolloutModeReason), "Restart", note);
      !s) {
    context_.logger.warn("cannot record invalid-rollout-mode event",
                         {{"kind", kind_.name}, {"workload", key}, {"error", s.error().describe()}});
  }
}

std::optional<Action> WorkloadReconciler::manualGate(const nlohmann::json& workload, const std::string& key,
                                                     const core::DesiredAnnotations& desired,
                                                     const std::vector<core::AnnotationChange>& changes) {
  if (core::rolloutModeOf(workload).mode != core::RolloutMode::Manual) {
    setManualPending(key, false);
    return std::nullopt;
  }
  setManualPending(key, true);
  // Nothing to look at again: the next change of the workload (a roll, the annotation removed) or
  // of a referenced object reconciles it afresh.
  const std::string digest = core::pendingSetDigest(desired.annotations);
  if (!announced_.once(key, kManualTopic, digest)) return Action::awaitChange();
  const std::string ns = core::metadataString(workload, "namespace");
  const std::string command = core::rollCommand(kind_.coreKind, ns, core::metadataString(workload, "name"));
  const std::string described = describeChanges(changes);
  context_.logger.info("rollout pending (manual mode), not restarting", {{"kind", kind_.name},
                                                                         {"workload", key},
                                                                         {"namespace", ns},
                                                                         {"pendingSet", digest},
                                                                         {"roll", command},
                                                                         {"changes", described}});
  // Logged, not retried: a retry would only repeat the same pending set.
  if (core::Status s = recordEvent(workload, "Normal", std::string(core::kRolloutPendingReason), "Hold",
                                   core::rolloutPendingNote(described, digest, command));
      !s) {
    context_.logger.warn("cannot record rollout-pending event",
                         {{"kind", kind_.name}, {"workload", key}, {"error", s.error().describe()}});
  }
  return Action::awaitChange();
}

}  // namespace restarter::controller
