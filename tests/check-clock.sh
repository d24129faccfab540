#!/usr/bin/env bash
# Time is read through the clock seam (docs/architecture.md, "Injected time"): no source of the
# product (lib/, cli/, cmd/) reads std::chrono's clocks but lib/base/src/clock.cpp, so every "now"
# is one a test can replace with a FakeClock, or, where a real wait needs real time (a condition
# variable's deadline, poll's timeout), base::systemClock()'s, visibly. Tests and benchmarks may
# read the clocks themselves.
# Usage: tests/check-clock.sh. Exit status: 0 none found, 1 found.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
found=$(git ls-files -z --cached --others --exclude-standard -- lib cli cmd ':!lib/base/src/clock.cpp' |
  xargs -0 grep -IEn -- '(steady_clock|system_clock|high_resolution_clock)::now|\btime\(nullptr\)|\bgettimeofday\(|\bclock_gettime\(' \
    2>/dev/null || true)
if [[ -n $found ]]; then
  printf '%s\n' "$found" >&2
  echo "check-clock: the clocks are read above outside the seam; take a base::Clock& (or base::systemClock())" >&2
  exit 1
fi
echo "check-clock: every clock read goes through base::Clock (lib/base/src/clock.cpp)"
