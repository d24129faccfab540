#pragma once
// explain-restart's answer, typed: built once from an ExplainInput (explain()), then rendered
// three ways: the JSON document (explanationDocument, explanation_json.cpp; its schema is
// cli/schema/restart-explanation.schema.json), the text (renderText, explain_text.cpp) and
// status' row (statusFromExplanation, status.hpp). roll's gates (gatesHolding, roll.hpp) read it too.
//
// Contract of the closed sets: each enum below is spelled by exactly one function (`...Name`,
// explanation_names.cpp), a `switch` over every value without `default`; the build's -Wall
// -Werror (-Wswitch) makes a value added without its spelling, or without its case in a renderer
// that switches over it, fail to compile. The renderers compare enums, never spellings.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/core/annotations.hpp"
#include "restarter/core/explain.hpp"
#include "restarter/core/reloader.hpp"
#include "restarter/core/roll.hpp"
#include "restarter/core/rollout_mode.hpp"
#include "restarter/core/time.hpp"
#include "restarter/inspect/explain.hpp"

namespace restarter::inspect {

// Whether a restart is pending: the write the controller would make now, and whether it fits.
enum class PendingState {
  UpToDate,         // nothing to write
  RestartDue,       // a change the controller will apply (or, in manual mode, `roll` will)
  RefusedTooLarge,  // a write the apiserver would refuse: never made (one AnnotationsTooLarge Event)
  Unknown,          // the desired annotations could not be computed (the reason says why)
};
const char* pendingStateName(PendingState state) noexcept;  // "up-to-date", "restart-due", ...

// Whether serve-controller's minimum rollout interval holds the pending rollout (RolloutHeld Events).
enum class HoldState { NotHeld, Held, Unknown };
const char* holdStateName(HoldState state) noexcept;  // "not-held", "held", "unknown"

// The rollout window at the judgement's time (core/rollout_window.hpp).
enum class WindowState {
  None,     // no window: always open
  Invalid,  // the annotation does not parse: no hold, a Warning Event
  Open,
  Closed,  // shut, nothing pending
  Held,    // shut, a change pending waits for the opening
};
const char* windowStateName(WindowState state) noexcept;  // "none", "invalid", "open", ...

// Where the window comes from.
enum class WindowSource { Annotation, ControllerDefault };
const char* windowSourceName(WindowSource source) noexcept;  // "annotation", "controller default"

// The workload's place in the controller's rollout queue (--max-concurrent-rollouts).
enum class QueueState { NotQueued, Queued, Unknown };
const char* queueStateName(QueueState state) noexcept;  // "not-queued", "queued", "unknown"

// The state of the roll section: core's decision, or Unknown when the API described the workload
// or a pod oddly (the reason says why).
enum class RollState { KubernetesRolls, Partitioned, Stale, Manual, Done, Rolling, Paused, Unknown };
const char* rollStateName(RollState state) noexcept;  // core::rollStateName's words, and "unknown"
RollState rollStateOf(core::RollDecision::State state) noexcept;

// "OnDelete", "RollingUpdate": the update strategy as the API spells it.
const char* updateStrategyName(core::UpdateStrategy strategy) noexcept;
// "label", "reloader-annotations", "none".
const char* managedByName(core::ManagedBy by) noexcept;
// "manual", "auto" (the annotation's values).
const char* rolloutModeName(core::RolloutMode mode) noexcept;

struct WorkloadIdentity {
  core::WorkloadKind kind = core::WorkloadKind::StatefulSet;
  std::string namespace_;
  std::string name;
  std::string uid;
};

struct RolloutHold {
  HoldState state = HoldState::NotHeld;
  // Unknown: why the Events could not be read; NotHeld: why the controller rolls now, when a
  // RolloutHeld Event was judged again (none otherwise).
  std::optional<std::string> reason;
  // Held: until when at the latest, what it waits for (none when only the floor holds it), the
  // hold in words, and when the Event was recorded.
  core::TimePoint until{};
  std::optional<std::string> waitingFor;
  std::string description;
  core::TimePoint recorded{};
  std::optional<core::TimePoint> lastRollout;  // restarter's last rollout of the workload, if known
};

struct RolloutWindow {
  WindowState state = WindowState::None;
  std::string window;  // the spec, e.g. "09:00-10:00", "always"
  WindowSource source = WindowSource::ControllerDefault;
  std::string reason;                          // Invalid: why it does not parse
  std::optional<core::TimePoint> nextOpening;  // Closed, Held
  std::string description;                     // Held: "held by the rollout window until <nextOpening>"
};

struct RolloutQueue {
  QueueState state = QueueState::NotQueued;
  // Unknown: why the queue could not be listed; NotQueued: why a queued-since record queues nothing.
  std::optional<std::string> reason;
  // Queued: since when, its priority, how many are ahead and among which workloads they were counted.
  core::TimePoint since{};
  std::int64_t priority = 0;
  std::size_t ahead = 0;
  std::string scope;
};

struct RolloutModeView {
  core::RolloutMode mode = core::RolloutMode::Auto;
  std::optional<std::string> invalidValue;  // an annotation value neither manual nor auto
  std::optional<std::string> rollCommand;   // manual with a restart due: the command that rolls it
};

// The newest BaselineRecorded Event of the workload.
struct BaselineRecorded {
  std::string time;
  std::string note;
};

struct Pending {
  PendingState state = PendingState::Unknown;
  std::string reason;  // Unknown, RefusedTooLarge: why
  std::vector<core::AnnotationChange> changes;
  std::vector<core::ReferenceStatus> references;  // empty when Unknown
  RolloutHold hold;
  RolloutWindow window;
  RolloutQueue queue;
  std::optional<BaselineRecorded> baselineRecorded;
  RolloutModeView mode;
};

// The roll of a StatefulSet or DaemonSet (core::decideRoll over its pods).
struct Roll {
  core::UpdateStrategy strategy = core::UpdateStrategy::RollingUpdate;
  std::chrono::seconds readyTimeout{};
  RollState state = RollState::Unknown;
  std::string reason;
  std::optional<std::string> blockedBy;  // "PodDisruptionBudget/<name>" a rolling eviction waits for
  std::vector<std::string> outdatedPods;
  std::vector<std::string> keptPods;
  std::string blockingPod;
};

struct Explanation {
  WorkloadIdentity workload;
  core::Management management;
  core::FirstRollout firstRollout;  // its generation is the workload's
  std::vector<core::ExplainedRevision> revisions;
  std::string currentRevision;  // the name of the revision the workload's status points at, if known
  Pending pending;
  std::optional<Roll> roll;  // StatefulSets and DaemonSets only
};

// explain-restart's answer for `input` (docs/operations.md "explain-restart: why did my pods
// restart, and will they?").
Explanation explain(const ExplainInput& input);

// The explanation document (the stable schema of `-o json` and `-o yaml`): apiVersion
// restarter.stackable.tech/v1alpha1, kind RestartExplanation (explanation_json.cpp).
nlohmann::ordered_json explanationDocument(const Explanation& explanation);

// The JSON causes of a revision (the "causes" array of the schema; explanation_json.cpp).
nlohmann::ordered_json causesDocument(const core::RevisionCause& cause);

// Human-readable text of an explanation (explain_text.cpp).
std::string renderText(const Explanation& explanation, bool color);

// A change in explain-restart's words: "configmap/app: u/1 -> u/2 (updated)" (explain_text.cpp).
std::string changeLine(const core::AnnotationChange& change);

// The causes of a revision as lines: "created", "configmap/app-config: u/1 -> u/2 (updated)",
// "containers[app].image changed" (explain_text.cpp).
std::vector<std::string> causeLines(const core::RevisionCause& cause);

}  // namespace restarter::inspect
