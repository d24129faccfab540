#include "restarter/core/rollout_queue.hpp"

#include "restarter/core/json_access.hpp"

#include <algorithm>
#include <tuple>

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/constants.hpp"

namespace restarter::core {

using nlohmann::json;

RolloutPriority rolloutPriorityOf(const json& workload) {
  const json* value = valueAt(workload, {"metadata", "annotations", kRolloutPriorityAnnotation});
  if (value == nullptr) return {};
  const std::string bounds =
      "an integer from -" + std::to_string(kMaxRolloutPriority) + " to " + std::to_string(kMaxRolloutPriority);
  if (!value->is_string()) return {0, "not a string; expected " + bounds};
  const std::string& text = value->get_ref<const std::string&>();
  if (text.size() > kMaxRolloutPriorityLength) return {0, "too long; expected " + bounds};
  std::size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  if (i == text.size()) return {0, "\"" + text + "\" is not " + bounds};
  std::int64_t parsed = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return {0, "\"" + text + "\" is not " + bounds};
    parsed = parsed * 10 + (text[i] - '0');  // at most 11 characters: no overflow
  }
  if (parsed > kMaxRolloutPriority) return {0, "\"" + text + "\" is not " + bounds};
  return {negative ? -parsed : parsed, ""};
}

std::optional<TimePoint> queuedSinceOf(const json& workload) {
  const json* value = valueAt(workload, {"metadata", "annotations", kQueuedSinceAnnotation});
  if (value == nullptr || !value->is_string()) return std::nullopt;
  auto parsed = base::parseRfc3339(value->get_ref<const std::string&>());
  if (!parsed) return std::nullopt;
  return *parsed;
}

std::optional<TimePoint> rolloutSlotUntil(std::optional<TimePoint> lastRollout, TimePoint now,
                                          std::chrono::milliseconds interval, const RolloutProgress& progress) {
  if (interval <= std::chrono::milliseconds::zero() || !lastRollout) return std::nullopt;
  if (*lastRollout > now + interval) return std::nullopt;  // not from skew: ignored (rollout.hpp)
  const TimePoint until = *lastRollout + interval;
  if (now >= until || progress.finished) return std::nullopt;
  return until;
}

bool queuedBefore(const QueuedRollout& a, const QueuedRollout& b) {
  return std::tuple(-a.priority, a.since, std::string_view(a.id)) <
         std::tuple(-b.priority, b.since, std::string_view(b.id));
}

SlotAdmission admitRollout(std::size_t maxConcurrent, std::size_t inProgress,
                           const std::vector<QueuedRollout>& queue, const QueuedRollout& candidate) {
  if (maxConcurrent == 0) return {true, 0, 0};
  SlotAdmission admission;
  admission.free = inProgress < maxConcurrent ? maxConcurrent - inProgress : 0;
  for (const QueuedRollout& other : queue) {
    if (other.id != candidate.id && queuedBefore(other, candidate)) ++admission.ahead;
  }
  admission.admit = admission.ahead < admission.free;
  return admission;
}

std::vector<std::string> queueHeads(std::size_t maxConcurrent, std::size_t inProgress,
                                    std::vector<QueuedRollout> queue) {
  std::vector<std::string> heads;
  if (maxConcurrent == 0 || inProgress >= maxConcurrent) return heads;
  const std::size_t free = std::min(maxConcurrent - inProgress, queue.size());
  std::partial_sort(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(free), queue.end(),
                    queuedBefore);
  for (std::size_t i = 0; i < free; ++i) heads.push_back(queue[i].id);
  return heads;
}

std::string describeQueued(std::size_t ahead) {
  if (ahead == 0) return "queued: next";
  return "queued: " + std::to_string(ahead) + (ahead == 1 ? " rollout ahead" : " rollouts ahead");
}

std::string rolloutQueuedNote(std::size_t ahead, std::size_t maxConcurrent, std::int64_t priority,
                              std::string_view namespace_, std::string_view changes) {
  std::string note = "Rollout " + describeQueued(ahead) + "; at most " + std::to_string(maxConcurrent) +
                     " rollouts in progress at once (--max-concurrent-rollouts), priority " +
                     std::to_string(priority) + "; changes so far in namespace ";
  note += namespace_;
  note += ": ";
  note += changes;
  return note;
}

}  // namespace restarter::core
