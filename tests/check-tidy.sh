#!/usr/bin/env bash
# clang-tidy's checks (.clang-tidy, which says which and why) over the product's sources: every
# translation unit of lib/, cli/ and cmd/ in BUILD_DIR's compile_commands.json, as that build
# compiles them (with the dev preset, unity batches: about 25 units instead of 120 files), and
# findings in those directories' files only. The unit tests are left out: they would add about
# three minutes to CI, and ASan, UBSan and TSan run them.
# Usage: tests/check-tidy.sh BUILD_DIR (a configured build, e.g. build/ci or build/dev).
# Exit status: 0 no finding, 1 a finding or a unit clang-tidy could not read, 2 usage.
set -euo pipefail

usage() { sed -n '/^# Usage:/,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }
(($# == 1)) || usage
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "$1" && pwd)
commands=$build/compile_commands.json
[[ -f $commands ]] || { echo "check-tidy: no $commands (configure $1 first)" >&2; exit 1; }
command -v clang-tidy >/dev/null || { echo "check-tidy: clang-tidy is not installed (tests/install-deps.sh)" >&2; exit 1; }

mapfile -t units < <(python3 - "$commands" "$repo" "$build" <<'PY'
import json, sys
commands, repo, build = sys.argv[1:]
for entry in json.load(open(commands)):
    path = entry["file"]
    for root in (repo, build):
        relative = path[len(root) + 1:] if path.startswith(root + "/") else None
        if relative and relative.split("/")[0] in ("lib", "cli", "cmd"):
            print(path)
            break
PY
)
((${#units[@]} > 0)) || { echo "check-tidy: no unit of lib/, cli/ or cmd/ in $commands" >&2; exit 1; }
jobs=${RESTARTER_BUILD_JOBS:-$(nproc)}
output=$(mktemp)
trap 'rm -f "$output"' EXIT
status=0
printf '%s\0' "${units[@]}" |
  xargs -0 -P "$jobs" -n 1 clang-tidy -p "$build" --quiet --header-filter="^$repo/(lib|cli|cmd)/" >"$output" 2>&1 ||
  status=$?
if ((status != 0)); then
  grep -E -A3 'warning:|error:' "$output" >&2 || cat "$output" >&2
  echo "check-tidy: findings above (.clang-tidy says what each check is for)" >&2
  exit 1
fi
echo "check-tidy: ${#units[@]} units of lib/, cli/ and cmd/, no finding"
