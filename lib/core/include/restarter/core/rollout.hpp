#pragma once
// Restart-storm protection (serve-controller --min-rollout-interval): a workload is rolled at most
// once per interval, on top of the debounce. A change that arrives sooner is held, merged with
// every later change, and applied when the interval has passed, so the last version of every
// object always ends up in the template. Pure: the caller passes "now" and the workload; nothing
// here reads a clock (docs/architecture.md, "Injected time").
//
// What the interval is measured from: the workload's own record of restarter's last rollout, the
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

namespace restarter::core {

// The Event reason the controller records once per held rollout (explain-restart reads it).
inline constexpr std::string_view kRolloutHeldReason = "RolloutHeld";

struct RolloutDecision {
  bool rollNow = true;
  // When rollNow is false: the earliest time the workload may roll (lastRollout + interval).
  TimePoint notBefore{};
  std::string reason;  // for logs: why it may or may not roll now
};

// May the workload, last rolled at `lastRollout` (nullopt: no record), roll at `now`?
//   - interval <= 0 (disabled), no record, or a record more than `interval` after `now`: yes;
//   - now >= lastRollout + interval: yes (the boundary itself is allowed);
//   - otherwise: no, not before lastRollout + interval.
RolloutDecision decideRollout(std::optional<TimePoint> lastRollout, TimePoint now,
                              std::chrono::milliseconds interval);

// The workload's kLastRolloutAnnotation, parsed. nullopt when absent, not a string or not RFC
// 3339 (then it may roll at once, and that rollout writes a valid stamp). Never throws.
std::optional<TimePoint> lastRolloutOf(const nlohmann::json& workload);

// "5m", "20s", "1h30m"; "1500ms" when not whole seconds; "0s" for zero or less.
std::string formatInterval(std::chrono::milliseconds interval);

// The note of a RolloutHeld Event:
//   "Rollout held until <until>; at most one rollout per <interval>, the last at <lastRollout>;
//    changes so far in namespace <ns>: <changes>"
// <until> and <lastRollout> are RFC 3339, so that heldUntilFromNote can read the first back.
std::string rolloutHeldNote(TimePoint until, TimePoint lastRollout, std::chrono::milliseconds interval,
                            std::string_view namespace_, std::string_view changes);

// The <until> of a note rolloutHeldNote wrote; nullopt for any other text.
std::optional<TimePoint> heldUntilFromNote(std::string_view note);

}  // namespace restarter::core
