// The one spelling of each closed set of an explanation (see explanation.hpp): a switch over every
// value, without default, so that -Wswitch under -Werror rejects a value added without its words.
#include "restarter/core/constants.hpp"
#include "restarter/inspect/explanation.hpp"

namespace restarter::inspect {

const char* pendingStateName(PendingState state) noexcept {
  switch (state) {
    case PendingState::UpToDate: return "up-to-date";
    case PendingState::RestartDue: return "restart-due";
    case PendingState::RefusedTooLarge: return "refused-too-large";
    case PendingState::Unknown: return "unknown";
  }
  return "unknown";
}

const char* holdStateName(HoldState state) noexcept {
  switch (state) {
    case HoldState::NotHeld: return "not-held";
    case HoldState::Held: return "held";
    case HoldState::Unknown: return "unknown";
  }
  return "unknown";
}

const char* windowStateName(WindowState state) noexcept {
  switch (state) {
    case WindowState::None: return "none";
    case WindowState::Invalid: return "invalid";
    case WindowState::Open: return "open";
    case WindowState::Closed: return "closed";
    case WindowState::Held: return "held";
  }
  return "none";
}

const char* windowSourceName(WindowSource source) noexcept {
  switch (source) {
    case WindowSource::Annotation: return "annotation";
    case WindowSource::ControllerDefault: return "controller default";
  }
  return "controller default";
}

const char* queueStateName(QueueState state) noexcept {
  switch (state) {
    case QueueState::NotQueued: return "not-queued";
    case QueueState::Queued: return "queued";
    case QueueState::Unknown: return "unknown";
  }
  return "unknown";
}

RollState rollStateOf(core::RollDecision::State state) noexcept {
  using Core = core::RollDecision::State;
  switch (state) {
    case Core::KubernetesRolls: return RollState::KubernetesRolls;
    case Core::Partitioned: return RollState::Partitioned;
    case Core::Stale: return RollState::Stale;
    case Core::Manual: return RollState::Manual;
    case Core::Done: return RollState::Done;
    case Core::Rolling: return RollState::Rolling;
    case Core::Paused: return RollState::Paused;
  }
  return RollState::Unknown;
}

const char* rollStateName(RollState state) noexcept {
  using Core = core::RollDecision::State;
  switch (state) {
    case RollState::KubernetesRolls: return core::rollStateName(Core::KubernetesRolls);
    case RollState::Partitioned: return core::rollStateName(Core::Partitioned);
    case RollState::Stale: return core::rollStateName(Core::Stale);
    case RollState::Manual: return core::rollStateName(Core::Manual);
    case RollState::Done: return core::rollStateName(Core::Done);
    case RollState::Rolling: return core::rollStateName(Core::Rolling);
    case RollState::Paused: return core::rollStateName(Core::Paused);
    case RollState::Unknown: return "unknown";
  }
  return "unknown";
}

const char* updateStrategyName(core::UpdateStrategy strategy) noexcept {
  switch (strategy) {
    case core::UpdateStrategy::OnDelete: return "OnDelete";
    case core::UpdateStrategy::RollingUpdate: return "RollingUpdate";
  }
  return "RollingUpdate";
}

const char* managedByName(core::ManagedBy by) noexcept {
  switch (by) {
    case core::ManagedBy::Label: return "label";
    case core::ManagedBy::Reloader: return "reloader-annotations";
    case core::ManagedBy::None: return "none";
  }
  return "none";
}

const char* rolloutModeName(core::RolloutMode mode) noexcept {
  switch (mode) {
    case core::RolloutMode::Manual: return core::kRolloutModeManualValue.data();
    case core::RolloutMode::Auto: return core::kRolloutModeAutoValue.data();
  }
  return core::kRolloutModeAutoValue.data();
}

}  // namespace restarter::inspect
