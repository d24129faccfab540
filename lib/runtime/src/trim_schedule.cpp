#include "restarter/runtime/trim_schedule.hpp"

namespace restarter::runtime {

TrimSchedule::TrimSchedule(Clock::duration quiet, Clock::duration period, Clock::time_point now)
    : quiet_(quiet), period_(period), lastTrim_(now), lastWorkChange_(now) {}

bool TrimSchedule::due(bool synced, std::uint64_t work, Clock::time_point now) {
  if (work != lastWork_) {
    lastWork_ = work;
    lastWorkChange_ = now;
  }
  const bool firstAfterSync = synced && !trimmedAfterSync_;
  const bool burstEnded = synced && work != workAtTrim_ && now - lastWorkChange_ >= quiet_;
  const bool periodic = now - lastTrim_ >= period_;
  if (!firstAfterSync && !burstEnded && !periodic) return false;
  trimmedAfterSync_ = trimmedAfterSync_ || synced;
  lastTrim_ = now;
  workAtTrim_ = work;
  return true;
}

}  // namespace restarter::runtime
