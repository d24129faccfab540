#pragma once
// Restart-storm protection (serve-controller --min-rollout-interval): a change that follows a
// rollout by restarter is held while that rollout is still in progress, merged with every later
// change, and applied as one rollout when the previous one has finished, so the last version of
// every object always ends up in the template and no rollout restarts pods the previous one has
// just replaced. Three times bound the hold (docs/architecture.md, "Rollouts rate-limited per
// workload"):
//   - a floor (kMinRolloutFloor) after the last rollout, during which nothing rolls whatever the
//     status says: the workload's controller has not yet necessarily observed the new template,
//     and a ConfigMap edited in a loop must not roll a workload whose pods are Ready at once every
//     second;
//   - the rollout's progress, read from the workload's status (rolloutProgressOf): finished means
//     the next rollout may start;
//   - the interval (--min-rollout-interval) as an upper bound: a rollout that never finishes (a
//     crash-looping pod, a paused Deployment, a partition, an OnDelete workload nobody rolls) holds
//     the next change for at most that long.
// Pure: the caller passes "now" and the workload; nothing here reads a clock (docs/architecture.md,
// "Injected time").
//
// What the times are measured from: the workload's own record of restarter's last rollout, the
// metadata annotation kLastRolloutAnnotation (constants.hpp; RFC 3339), written by the same
// server-side apply that changes the template annotations, so there is never a rollout without
// it. Because it lives on the object and not in a controller's memory, a restarted controller or a
// new leader measures from the same point, and a storm cannot restart the count by killing the
// leader. It is metadata, not template: writing it restarts nothing.
//
// Clocks: the stamp is written with the writing replica's wall clock and read with the reading
// replica's; a few seconds of skew between nodes only moves the next rollout by as much. A stamp
// more than one interval in the future cannot come from skew (a hand edit, a badly wrong clock):
// it is ignored, so that no stamp can hold a workload for longer than twice the interval.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "restarter/core/constants.hpp"
#include "restarter/core/time.hpp"
#include "restarter/core/workload_kinds.hpp"

namespace restarter::core {

// The Event reason the controller records once per held rollout (explain-restart reads it).
inline constexpr std::string_view kRolloutHeldReason = "RolloutHeld";

// Nothing rolls sooner than this after the last rollout, even when the status says the rollout
// has finished. Why 10 s: the workload's controller (Deployment, StatefulSet, DaemonSet) records
// the new generation in status.observedGeneration within a second or two of the template change
// on a healthy control plane, so within the floor a status that says "finished" may still
// describe the rollout before ours; and a workload whose pods are Ready at once (a stateless
// Deployment) still rolls at most six times a minute when its ConfigMap changes every second.
// Bounded by the interval: with --min-rollout-interval below 10 s, the interval is the floor.
inline constexpr std::chrono::seconds kMinRolloutFloor{10};

// While a hold waits for the rollout's progress, the controller looks again this often even when
// no status change woke it (a missed watch event, a status that finishes in a way
// rolloutProgressOf's transition check does not see). The wake-up on the status change is the
// usual path; this only bounds how late a missed one makes the rollout.
inline constexpr std::chrono::seconds kRolloutProgressRecheck{30};

// How far the workload's current rollout has come, from its status. The workload controller's
// own notion of "finished", as `kubectl rollout status` reads it:
//   - Deployment: status.observedGeneration >= metadata.generation, updatedReplicas == replicas
//     (spec; default 1), no pod of an old ReplicaSet left (status.replicas == updatedReplicas),
//     availableReplicas == replicas;
//   - StatefulSet: observedGeneration, updatedReplicas >= replicas - partition (a RollingUpdate
//     partition keeps the pods below it on the old revision; OnDelete counts every pod, the roll
//     restarter makes or the user's deletions), readyReplicas == replicas;
//   - DaemonSet: observedGeneration, updatedNumberScheduled and numberAvailable ==
//     desiredNumberScheduled;
//   - Rollout (Argo Rollouts): observedGeneration (a decimal string there) >= generation, as a
//     Deployment's counters, and status.phase Healthy when set (Paused and Degraded are
//     unfinished: the hold's upper bound applies).
// Absent counters are 0 (the apiserver omits zeros); an absent status is a rollout not yet
// observed. Never throws; a counter of the wrong type counts as absent, and a workload that is no
// JSON object is "finished" (then only the floor holds it).
struct RolloutProgress {
  bool finished = true;
  // When !finished: what is missing, for logs, the RolloutHeld Event and explain-restart:
  // "2 of 3 pods updated", "1 of 3 pods ready", "1 old pod left", "generation 4 not yet observed".
  std::string missing;
};

RolloutProgress rolloutProgressOf(const nlohmann::json& workload, WorkloadKind kind);

enum class RolloutWait {
  None,      // roll now
  Floor,     // within kMinRolloutFloor of the last rollout: wait until notBefore
  Progress,  // the last rollout is still in progress: wait for it, at most until notBefore
};

struct RolloutDecision {
  bool rollNow = true;
  RolloutWait wait = RolloutWait::None;
  // When rollNow is false: when to look again at the latest (Floor: the end of the floor;
  // Progress: the upper bound), and the upper bound itself (lastRollout + interval).
  TimePoint notBefore{};
  TimePoint upperBound{};
  // When rollNow is false and the previous rollout has not finished: RolloutProgress::missing
  // (also during the floor, so that a hold announced then names what it will wait for).
  std::string waitingFor;
  std::string reason;  // for logs: why it may or may not roll now
};

// May the workload, last rolled at `lastRollout` (nullopt: no record), roll at `now`, its current
// rollout having come as far as `progress`?
//   - interval <= 0 (disabled), no record, or a record more than `interval` after `now`: yes;
//   - now < lastRollout + min(floor, interval): no, Floor, not before that time;
//   - now >= lastRollout + interval: yes (the upper bound; its boundary itself is allowed);
//   - progress finished: yes;
//   - otherwise: no, Progress, at most until lastRollout + interval.
RolloutDecision decideRollout(std::optional<TimePoint> lastRollout, TimePoint now,
                              std::chrono::milliseconds interval, const RolloutProgress& progress,
                              std::chrono::milliseconds floor = kMinRolloutFloor);

// What a hold waits for, as the RolloutHeld Event, explain-restart and status say it:
//   the previous rollout unfinished: "waiting for the previous rollout (2 of 3 pods updated), at
//                                     most until <upperBound>"
//   only the floor:                  "held until <notBefore> (the previous rollout was less than
//                                     <floor> ago)"
//   not held:                        "not held"
std::string describeHold(const RolloutDecision& decision, std::chrono::milliseconds floor = kMinRolloutFloor);

// The workload's kLastRolloutAnnotation, parsed. nullopt when absent, not a string or not RFC
// 3339 (then it may roll at once, and that rollout writes a valid stamp). Never throws.
std::optional<TimePoint> lastRolloutOf(const nlohmann::json& workload);

// The note of a RolloutHeld Event:
//   "Rollout held at most until <upperBound>; <waiting>; at most one rollout per <interval>
//    while the previous one is in progress, the last at <lastRollout>; changes so far in
//    namespace <ns>: <changes>"
// <waiting> is describeHold without the upper bound: "waiting for the previous rollout (2 of 3
// pods updated)" or "held until <end of the floor> (the previous rollout was less than 10s ago)".
// <upperBound> and <lastRollout> are RFC 3339, so that heldUntilFromNote can read the first back
// (and with the last-rollout annotation, the interval: explain-restart judges the hold again
// from the workload's status at the time it looks).
std::string rolloutHeldNote(const RolloutDecision& decision, TimePoint lastRollout,
                            std::chrono::milliseconds interval, std::string_view namespace_,
                            std::string_view changes);

// The <upperBound> of a note rolloutHeldNote wrote, or the <until> of one written before holds
// waited for progress ("Rollout held until <until>; ..."); nullopt for any other text.
std::optional<TimePoint> heldUntilFromNote(std::string_view note);

}  // namespace restarter::core
