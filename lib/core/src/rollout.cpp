#include "restarter/core/rollout.hpp"

namespace restarter::core {

namespace {

constexpr std::string_view kHeldNotePrefix = "Rollout held until ";

}  // namespace

RolloutDecision decideRollout(std::optional<TimePoint> lastRollout, TimePoint now,
                              std::chrono::milliseconds interval) {
  if (interval <= std::chrono::milliseconds(0)) return {true, {}, "no minimum rollout interval"};
  if (!lastRollout) return {true, {}, "no earlier rollout recorded"};
  if (*lastRollout > now + interval) {
    return {true, {}, "the recorded last rollout lies more than the interval in the future; ignored"};
  }
  const TimePoint notBefore = *lastRollout + interval;
  if (now >= notBefore) return {true, {}, "the minimum rollout interval has passed"};
  return {false, notBefore, "the last rollout was less than the minimum rollout interval ago"};
}

std::optional<TimePoint> lastRolloutOf(const nlohmann::json& workload) {
  if (!workload.is_object()) return std::nullopt;
  const auto metadata = workload.find("metadata");
  if (metadata == workload.end() || !metadata->is_object()) return std::nullopt;
  const auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return std::nullopt;
  const auto value = annotations->find(std::string(kLastRolloutAnnotation));
  if (value == annotations->end() || !value->is_string()) return std::nullopt;
  auto parsed = parseRfc3339(value->get_ref<const std::string&>());
  if (!parsed) return std::nullopt;
  return *parsed;
}

std::string formatInterval(std::chrono::milliseconds interval) {
  if (interval.count() % 1000 != 0) return std::to_string(interval.count()) + "ms";
  return formatDuration(std::chrono::duration_cast<std::chrono::seconds>(interval));
}

std::string rolloutHeldNote(TimePoint until, TimePoint lastRollout, std::chrono::milliseconds interval,
                            std::string_view namespace_, std::string_view changes) {
  std::string note(kHeldNotePrefix);
  note += formatRfc3339(until);
  note += "; at most one rollout per " + formatInterval(interval) + ", the last at ";
  note += formatRfc3339(lastRollout);
  note += "; changes so far in namespace ";
  note += namespace_;
  note += ": ";
  note += changes;
  return note;
}

std::optional<TimePoint> heldUntilFromNote(std::string_view note) {
  if (note.substr(0, kHeldNotePrefix.size()) != kHeldNotePrefix) return std::nullopt;
  std::string_view rest = note.substr(kHeldNotePrefix.size());
  rest = rest.substr(0, rest.find(';'));
  auto parsed = parseRfc3339(rest);
  if (!parsed) return std::nullopt;
  return *parsed;
}

}  // namespace restarter::core
