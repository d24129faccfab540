#pragma once
// Fleet-wide rollout concurrency (serve-controller --max-concurrent-rollouts; docs/behaviour.md,
// "Fleet-wide rollout concurrency"): at most N of restarter's rollouts in progress at once across
// every watched namespace; a workload whose change may roll by its own hold (rollout.hpp) but finds
// no free slot is queued, and the queue's head rolls when a slot frees.
//
// A rollout holds a slot while it is in progress by the same reading today's hold makes: the
// workload's kLastRolloutAnnotation (restarter rolled it, at that time), its status unfinished
// (rolloutProgressOf), and younger than the hold's upper bound (--min-rollout-interval). So a slot
// frees when the rollout finishes or, for one that never does, after that bound; and a new leader
// reads the same slots from the workloads it lists.
//
// Order: the workload's kRolloutPriorityAnnotation (an integer, higher first; absent or invalid:
// 0), then the oldest queued first (kQueuedSinceAnnotation: when the controller first queued the
// change; the oldest change), then the id (the queue key) so that the order is total.
//
// Pure: the caller passes "now", the workloads and the counts; the controller (RolloutSlots) and
// explain-restart/status (lib/inspect) compute the same order with these functions.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/core/rollout.hpp"
#include "restarter/core/time.hpp"

namespace restarter::core {

// The Event reason of an invalid priority annotation (Warning, once per value).
inline constexpr std::string_view kInvalidRolloutPriorityReason = "InvalidRolloutPriority";
// The Event reason the controller records once per queued rollout.
inline constexpr std::string_view kRolloutQueuedReason = "RolloutQueued";

// The bounds of a priority: wide enough for any ordering scheme, narrow enough that a value is
// read without overflow. Longer text is invalid before it is parsed.
inline constexpr std::int64_t kMaxRolloutPriority = 1'000'000'000;
inline constexpr std::size_t kMaxRolloutPriorityLength = 11;  // "-1000000000"

struct RolloutPriority {
  std::int64_t value = 0;
  // Why the annotation is not a valid priority ("" when valid or absent); then value is 0.
  std::string problem;
};

// The workload's kRolloutPriorityAnnotation: an optional sign and decimal digits within
// [-kMaxRolloutPriority, kMaxRolloutPriority]; absent: 0. Never throws.
RolloutPriority rolloutPriorityOf(const nlohmann::json& workload);

// The workload's kQueuedSinceAnnotation, parsed; nullopt when absent or not RFC 3339.
std::optional<TimePoint> queuedSinceOf(const nlohmann::json& workload);

// Until when the workload's last rollout by restarter holds a slot, judged at `now`; nullopt when
// it holds none:
//   - interval <= 0 (no upper bound, so no slot is ever held: --max-concurrent-rollouts needs an
//     interval), no record, or a record more than `interval` after `now` (rollout.hpp: ignored);
//   - now >= lastRollout + interval: the upper bound has passed;
//   - progress finished;
//   - otherwise lastRollout + interval.
std::optional<TimePoint> rolloutSlotUntil(std::optional<TimePoint> lastRollout, TimePoint now,
                                          std::chrono::milliseconds interval, const RolloutProgress& progress);

struct QueuedRollout {
  std::string id;  // unique: the controller's queue key, lib/inspect's kind/namespace/name
  std::int64_t priority = 0;
  TimePoint since{};
};

// The queue's order: higher priority, then older `since`, then smaller id.
bool queuedBefore(const QueuedRollout& a, const QueuedRollout& b);

struct SlotAdmission {
  bool admit = true;
  std::size_t ahead = 0;  // queued rollouts before the candidate (0 when admitted without a limit)
  std::size_t free = 0;   // slots free (maxConcurrent - inProgress, at least 0)
};

// May `candidate` take a slot now? `queue` holds the other waiting rollouts (an entry with the
// candidate's id is skipped); `inProgress` counts the slots held. maxConcurrent 0: no limit, always
// admitted. Otherwise admitted when fewer than the free slots are ahead of it: the first `free`
// of the queue in order roll, the rest wait.
SlotAdmission admitRollout(std::size_t maxConcurrent, std::size_t inProgress,
                           const std::vector<QueuedRollout>& queue, const QueuedRollout& candidate);

// The ids to wake when slots free: the first `free` of `queue` in order (none without a limit).
std::vector<std::string> queueHeads(std::size_t maxConcurrent, std::size_t inProgress,
                                    std::vector<QueuedRollout> queue);

// "queued: 37 rollouts ahead", "queued: 1 rollout ahead", "queued: next".
std::string describeQueued(std::size_t ahead);

// The note of a RolloutQueued Event:
//   "Rollout queued: <describeQueued>; at most <max> rollouts in progress at once
//    (--max-concurrent-rollouts), priority <priority>; changes so far in namespace <ns>: <changes>"
std::string rolloutQueuedNote(std::size_t ahead, std::size_t maxConcurrent, std::int64_t priority,
                              std::string_view namespace_, std::string_view changes);

}  // namespace restarter::core
