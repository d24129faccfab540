// The rollout window gate of WorkloadReconciler (workload.hpp; docs/behaviour.md, "Rollout
// windows"): a template change outside the workload's window is held, merged with every later
// change (each look plans the whole desired state again), and rolled once at the opening.
#include "restarter/base/rfc3339.hpp"
#include "restarter/controller/workload.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/rollout_window.hpp"
#include "restarter/core/text.hpp"

namespace restarter::controller {

using nlohmann::json;

namespace {

// Announcement topics (workload.hpp): the opening and pending set last announced, the invalid
// value last warned about.
constexpr const char* kWindowHeldTopic = "window-held";
constexpr const char* kWindowInvalidTopic = "window-invalid";
// An annotation value is quoted in logs and Events up to this many bytes (it may be up to the
// annotations' size limit; the parser refuses it beyond core::kMaxRolloutWindowSpecBytes).
constexpr std::size_t kQuotedSpecBytes = 200;

std::string shown(const std::string& spec) {
  // Cut at a character boundary: an Event body must stay valid UTF-8.
  return spec.size() <= kQuotedSpecBytes ? spec : core::truncateUtf8(spec, kQuotedSpecBytes) + "...";
}

}  // namespace

void WorkloadReconciler::releaseWindowHold(const std::string& key) {
  std::lock_guard lock(mutex_);
  if (windowHeld_.erase(key) > 0)
    context_.metrics.rolloutsHeldByWindow.with({kind_.name}).set(static_cast<double>(windowHeld_.size()));
}

std::optional<Action> WorkloadReconciler::windowGate(const json& workload, const std::string& key,
                                                     const std::vector<core::AnnotationChange>& changes,
                                                     core::TimePoint now) {
  auto own = core::ownRolloutWindowOf(workload);
  const core::RolloutSchedule* schedule = &context_.rolloutWindow;
  std::string spec = context_.rolloutWindowSpec;
  std::string source = "--rollout-window";
  if (own) {
    spec = own->spec;
    source = std::string(core::kRolloutWindowAnnotation);
    const auto& parsed = own->schedule;
    if (!parsed) {
      releaseWindowHold(key);
      announced_.forget(key, kWindowHeldTopic);
      // Once per value: a Warning, and the change rolls now (the next gates decide). No write
      // follows from it, so an invalid value cannot make a write loop.
      if (announced_.once(key, kWindowInvalidTopic, spec)) {
        const std::string note = "Invalid rollout window \"" + shown(spec) + "\" in " + source + ": " +
                                 parsed.error().message + "; no window holds this workload's rollouts";
        context_.logger.warn("invalid rollout window; not holding", {{"kind", kind_.name},
                                                                     {"workload", key},
                                                                     {"window", shown(spec)},
                                                                     {"error", parsed.error().message}});
        if (core::Status s =
                recordEvent(workload, "Warning", std::string(core::kInvalidRolloutWindowReason), "Hold", note);
            !s) {
          context_.logger.warn("cannot record invalid-rollout-window event",
                               {{"kind", kind_.name}, {"workload", key}, {"error", s.error().describe()}});
        }
      }
      return std::nullopt;
    }
    schedule = &*parsed;
  }
  announced_.forget(key, kWindowInvalidTopic);
  if (schedule->isOpen(now)) {
    releaseWindowHold(key);
    announced_.forget(key, kWindowHeldTopic);
    return std::nullopt;
  }
  const core::TimePoint opening = schedule->nextOpening(now);
  {
    std::lock_guard lock(mutex_);
    if (windowHeld_.insert(key).second)
      context_.metrics.rolloutsHeldByWindow.with({kind_.name}).set(static_cast<double>(windowHeld_.size()));
  }
  // At the opening, and at least every core::kRolloutWindowRecheck: the queue's timer runs on the
  // monotonic clock, the window on the wall clock, which an NTP step may move.
  const Action lookAgain = Action::requeue(core::rolloutWindowWait(now, opening));
  const std::string until = base::formatRfc3339(opening);
  const std::string described = describeChanges(changes);
  if (!announced_.once(key, kWindowHeldTopic, until + "\n" + described)) return lookAgain;
  const std::string ns = core::metadataString(workload, "namespace");
  context_.logger.info("rollout held by the rollout window", {{"kind", kind_.name},
                                                              {"workload", key},
                                                              {"namespace", ns},
                                                              {"until", until},
                                                              {"window", shown(spec)},
                                                              {"windowFrom", source},
                                                              {"changes", described}});
  const std::string note = "Rollout held by the rollout window until " + until + " (\"" + shown(spec) +
                           "\", from " + source + "); changes so far in namespace " + ns + ": " + described;
  // Logged, not retried: the hold needs no Event, and the rollout must not wait for one.
  if (core::Status s = recordEvent(workload, "Normal", std::string(core::kRolloutHeldReason), "Hold", note);
      !s) {
    context_.logger.warn("cannot record rollout-held event",
                         {{"kind", kind_.name}, {"workload", key}, {"error", s.error().describe()}});
  }
  return lookAgain;
}

}  // namespace restarter::controller
