#include "restarter/core/rollout.hpp"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/json_access.hpp"

namespace restarter::core {

namespace {

constexpr std::string_view kHeldNotePrefix = "Rollout held at most until ";
// The prefix of the notes written when the interval alone held a rollout.
constexpr std::string_view kFixedHoldNotePrefix = "Rollout held until ";

// An integer at `path`; `fallback` when absent or not an integer.
std::int64_t intAt(const nlohmann::json& object, std::initializer_list<std::string_view> path,
                   std::int64_t fallback = 0) {
  const nlohmann::json* value = valueAt(object, path);
  if (value == nullptr || !value->is_number_integer()) return fallback;
  return value->get<std::int64_t>();
}

std::string pods(std::int64_t n) { return std::to_string(n) + (n == 1 ? " pod" : " pods"); }

RolloutProgress notFinished(std::string missing) { return {false, std::move(missing)}; }

// The checks of a workload rolled through ReplicaSets (a Deployment, an Argo Rollout): every one of
// spec.replicas updated, no old pod left, every one available.
RolloutProgress replicaSetProgress(const nlohmann::json& workload) {
  const std::int64_t replicas = intAt(workload, {"spec", "replicas"}, 1);
  const std::int64_t updated = intAt(workload, {"status", "updatedReplicas"});
  const std::int64_t existing = intAt(workload, {"status", "replicas"});
  const std::int64_t available = intAt(workload, {"status", "availableReplicas"});
  if (updated < replicas) return notFinished(std::to_string(updated) + " of " + pods(replicas) + " updated");
  if (existing > updated) {
    const std::int64_t old = existing - updated;
    return notFinished(std::to_string(old) + (old == 1 ? " old pod" : " old pods") + " left");
  }
  if (available < replicas)
    return notFinished(std::to_string(available) + " of " + pods(replicas) + " available");
  return {};
}

// An Argo Rollout's status.observedGeneration: a decimal string (RolloutStatus.ObservedGeneration
// is a Go string); an integer is taken too. -1 when absent or not a generation (an old hash).
std::int64_t observedGenerationOf(const nlohmann::json& workload) {
  const nlohmann::json* value = valueAt(workload, {"status", "observedGeneration"});
  if (value == nullptr) return -1;
  if (value->is_number_integer()) return value->get<std::int64_t>();
  if (!value->is_string()) return -1;
  const std::string& text = value->get_ref<const std::string&>();
  if (text.empty() || text.size() > 18) return -1;  // 18 digits: no overflow
  std::int64_t out = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    out = out * 10 + (c - '0');
  }
  return out;
}

// An Argo Rollout's progress, as `kubectl argo rollouts status` reads it: the generation
// observed, every replica updated and available, no old one left, and the phase Healthy (the
// phase is valid only for the observed generation; Paused: a canary step or blue-green promotion
// waits, Degraded: aborted or failing; both unfinished, so the hold's upper bound applies).
RolloutProgress argoRolloutProgressOf(const nlohmann::json& workload) {
  const std::int64_t generation = intAt(workload, {"metadata", "generation"});
  if (observedGenerationOf(workload) < generation) {
    return notFinished("generation " + std::to_string(generation) +
                       " not yet observed by the Argo Rollouts controller");
  }
  if (RolloutProgress replicas = replicaSetProgress(workload); !replicas.finished) return replicas;
  const std::string phase = stringAt(workload, {"status", "phase"});
  if (!phase.empty() && phase != "Healthy") return notFinished("phase " + phase);
  return {};
}

}  // namespace

RolloutProgress rolloutProgressOf(const nlohmann::json& workload, WorkloadKind kind) {
  if (!workload.is_object()) return {};
  if (kind == WorkloadKind::Rollout) return argoRolloutProgressOf(workload);
  const std::int64_t generation = intAt(workload, {"metadata", "generation"});
  const std::int64_t observed = intAt(workload, {"status", "observedGeneration"});
  if (observed < generation) {
    return notFinished("generation " + std::to_string(generation) + " not yet observed by the " +
                       std::string(managedKind(kind).name) + " controller");
  }
  if (kind == WorkloadKind::DaemonSet) {
    const std::int64_t desired = intAt(workload, {"status", "desiredNumberScheduled"});
    const std::int64_t updated = intAt(workload, {"status", "updatedNumberScheduled"});
    const std::int64_t available = intAt(workload, {"status", "numberAvailable"});
    if (updated < desired) return notFinished(std::to_string(updated) + " of " + pods(desired) + " updated");
    if (available < desired)
      return notFinished(std::to_string(available) + " of " + pods(desired) + " available");
    return {};
  }
  if (kind == WorkloadKind::Deployment) return replicaSetProgress(workload);
  const std::int64_t replicas = intAt(workload, {"spec", "replicas"}, 1);
  const std::int64_t updated = intAt(workload, {"status", "updatedReplicas"});
  // StatefulSet. A RollingUpdate partition leaves the ordinals below it on the old revision.
  std::int64_t partition = 0;
  if (stringAt(workload, {"spec", "updateStrategy", "type"}) != "OnDelete") {
    partition = std::clamp<std::int64_t>(
        intAt(workload, {"spec", "updateStrategy", "rollingUpdate", "partition"}), 0, replicas);
  }
  const std::int64_t ready = intAt(workload, {"status", "readyReplicas"});
  if (updated < replicas - partition) {
    return notFinished(std::to_string(updated) + " of " + pods(replicas - partition) + " updated");
  }
  if (ready < replicas) return notFinished(std::to_string(ready) + " of " + pods(replicas) + " ready");
  return {};
}

RolloutDecision decideRollout(std::optional<TimePoint> lastRollout, TimePoint now,
                              std::chrono::milliseconds interval, const RolloutProgress& progress,
                              std::chrono::milliseconds floor) {
  RolloutDecision decision;
  if (interval <= std::chrono::milliseconds(0)) {
    decision.reason = "no minimum rollout interval";
    return decision;
  }
  if (!lastRollout) {
    decision.reason = "no earlier rollout recorded";
    return decision;
  }
  if (*lastRollout > now + interval) {
    decision.reason = "the recorded last rollout lies more than the interval in the future; ignored";
    return decision;
  }
  const TimePoint floorEnd = *lastRollout + std::min(floor, interval);
  const TimePoint upperBound = *lastRollout + interval;
  if (now < floorEnd) {
    decision.rollNow = false;
    decision.wait = RolloutWait::Floor;
    decision.notBefore = floorEnd;
    decision.upperBound = upperBound;
    if (!progress.finished) decision.waitingFor = progress.missing;
    decision.reason = "the last rollout was less than the rollout floor ago";
    return decision;
  }
  if (now >= upperBound) {
    decision.reason = "the minimum rollout interval (the upper bound of a hold) has passed";
    return decision;
  }
  if (progress.finished) {
    decision.reason = "the previous rollout has finished";
    return decision;
  }
  decision.rollNow = false;
  decision.wait = RolloutWait::Progress;
  decision.notBefore = upperBound;
  decision.upperBound = upperBound;
  decision.waitingFor = progress.missing;
  decision.reason = "the previous rollout is still in progress";
  return decision;
}

namespace {

// describeHold without the upper bound (the RolloutHeld note starts with it).
std::string holdReason(const RolloutDecision& decision, std::chrono::milliseconds floor) {
  if (!decision.waitingFor.empty()) return "waiting for the previous rollout (" + decision.waitingFor + ")";
  return "held until " + base::formatRfc3339(decision.notBefore) + " (the previous rollout was less than " +
         formatDuration(floor) + " ago)";
}

}  // namespace

std::string describeHold(const RolloutDecision& decision, std::chrono::milliseconds floor) {
  if (decision.rollNow) return "not held";
  if (!decision.waitingFor.empty()) {
    return holdReason(decision, floor) + ", at most until " + base::formatRfc3339(decision.upperBound);
  }
  return holdReason(decision, floor);
}

std::optional<TimePoint> lastRolloutOf(const nlohmann::json& workload) {
  if (!workload.is_object()) return std::nullopt;
  const auto metadata = workload.find("metadata");
  if (metadata == workload.end() || !metadata->is_object()) return std::nullopt;
  const auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return std::nullopt;
  const auto value = annotations->find(std::string(kLastRolloutAnnotation));
  if (value == annotations->end() || !value->is_string()) return std::nullopt;
  auto parsed = base::parseRfc3339(value->get_ref<const std::string&>());
  if (!parsed) return std::nullopt;
  return *parsed;
}

std::string rolloutHeldNote(const RolloutDecision& decision, TimePoint lastRollout,
                            std::chrono::milliseconds interval, std::string_view namespace_,
                            std::string_view changes) {
  std::string note(kHeldNotePrefix);
  note += base::formatRfc3339(decision.upperBound);
  note += "; " + holdReason(decision, kMinRolloutFloor);
  note += "; at most one rollout per " + formatDuration(interval) + " while the previous one is in progress, ";
  note += "the last at " + base::formatRfc3339(lastRollout);
  note += "; changes so far in namespace ";
  note += namespace_;
  note += ": ";
  note += changes;
  return note;
}

std::optional<TimePoint> heldUntilFromNote(std::string_view note) {
  std::string_view rest;
  if (note.substr(0, kHeldNotePrefix.size()) == kHeldNotePrefix) {
    rest = note.substr(kHeldNotePrefix.size());
  } else if (note.substr(0, kFixedHoldNotePrefix.size()) == kFixedHoldNotePrefix) {
    rest = note.substr(kFixedHoldNotePrefix.size());
  } else {
    return std::nullopt;
  }
  rest = rest.substr(0, rest.find(';'));
  auto parsed = base::parseRfc3339(rest);
  if (!parsed) return std::nullopt;
  return *parsed;
}

}  // namespace restarter::core
