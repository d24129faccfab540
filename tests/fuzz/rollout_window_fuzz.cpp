// Fuzz target: rollout window specs (core/rollout_window.hpp), read from a workload annotation
// anyone with write access to the workload sets. The first 8 bytes choose "now" (seconds from
// 2027-01-15, up to about 8 years either way), the rest is the spec. Checks beyond "no crash": an
// error has a message; a parsed spec holds at most kMaxRolloutWindows windows; nextOpening is at
// or after now, open, and nothing is open between now and it; the recheck wait is bounded.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "check.hpp"
#include "restarter/core/rollout_window.hpp"

namespace {

constexpr const char* kTarget = "rollout_window_fuzz";

[[noreturn]] void fail(const char* what) { restarter::fuzz::fail(kTarget, what); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace restarter::core;
  std::int64_t offset = 0;
  if (size >= sizeof offset) {
    std::memcpy(&offset, data, sizeof offset);
    data += sizeof offset;
    size -= sizeof offset;
  }
  constexpr std::int64_t kRange = 250'000'000;  // seconds, about 8 years
  const TimePoint now =
      TimePoint(std::chrono::seconds(1'800'000'000)) + std::chrono::microseconds(offset % (kRange * 1'000'000));
  const std::string_view spec(reinterpret_cast<const char*>(data), size);

  const auto schedule = parseRolloutSchedule(spec);
  restarter::fuzz::expectMessage(kTarget, schedule);
  if (!schedule) return 0;
  if (schedule->windows().size() > kMaxRolloutWindows) fail("more windows than the bound");
  const TimePoint opening = schedule->nextOpening(now);
  if (opening < now) fail("the next opening is before now");
  if (!schedule->isOpen(opening)) fail("closed at its next opening");
  if (opening > now && schedule->isOpen(now)) fail("open now but the next opening is later");
  if (opening > now && schedule->isOpen(opening - std::chrono::microseconds(1)))
    fail("open just before its next opening");
  if (rolloutWindowWait(now, opening) > std::chrono::milliseconds(kRolloutWindowRecheck))
    fail("a wait longer than the recheck");
  return 0;
}
