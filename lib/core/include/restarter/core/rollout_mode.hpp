#pragma once
// Manual mode (docs/behaviour.md, "Manual mode and roll"): a workload annotated
// restarter.stackable.tech/rollout: manual is never rolled by the controller. A pending change is
// recorded and explained (a RolloutPending Event once per pending set, explain-restart, status)
// until someone rolls it with `restarter roll KIND/NAME`, which applies the same write the
// controller would have made. Pure functions: the controller's gate (lib/controller/src/workload.cpp),
// explain-restart and status (lib/inspect) and `roll` all judge by them.

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "restarter/core/annotations.hpp"
#include "restarter/core/workload_kinds.hpp"

namespace restarter::core {

// The reason of the Event the controller records for a manual workload's pending change.
inline constexpr std::string_view kRolloutPendingReason = "RolloutPending";
// The reason of the Warning Event for a rollout annotation whose value is neither manual nor auto.
inline constexpr std::string_view kInvalidRolloutModeReason = "InvalidRolloutMode";
// How much of an invalid value a message quotes (annotation values are unbounded otherwise).
inline constexpr std::size_t kMaxQuotedModeBytes = 64;

enum class RolloutMode { Auto, Manual };

struct RolloutModeSetting {
  RolloutMode mode = RolloutMode::Auto;
  // Set when the annotation holds anything but "manual" or "auto" (or is not a string): the value
  // as quoted in messages (at most kMaxQuotedModeBytes, UTF-8 kept whole); the mode is then Auto.
  std::optional<std::string> invalid;
};

// The workload's rollout mode from its metadata annotation kRolloutModeAnnotation: absent or
// "auto" -> Auto, "manual" -> Manual (exact, lower case), anything else -> Auto with `invalid` set.
// Tolerates any JSON shape.
RolloutModeSetting rolloutModeOf(const nlohmann::json& workload);

// The sentence the Warning Event and the log say for an invalid value.
std::string invalidRolloutModeNote(const std::string& quoted);

// A digest of a pending set: the restarter-owned template annotations a rollout would write (what
// `desired.annotations` holds). The same set gives the same 16 hex digits on every leader, so the
// RolloutPending Event names it and a reader can tell a repeat from a new change.
std::string pendingSetDigest(const AnnotationMap& desiredTemplateAnnotations);

// "kubectl restarter roll deployment/web -n shop": the command that rolls the pending change.
std::string rollCommand(WorkloadKind kind, std::string_view namespace_, std::string_view name);

// The note of the RolloutPending Event: the pending set's digest, the command that rolls it, then
// the changes (describeChanges' words; the API cuts a note at 1024 bytes).
std::string rolloutPendingNote(std::string_view described, std::string_view digest, std::string_view command);

}  // namespace restarter::core
