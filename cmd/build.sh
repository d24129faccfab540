#!/usr/bin/env bash
# Configures and builds restarter the way CI does; the one build recipe shared by tests/run.sh (all
# three of its builds) and the Dockerfile, so the image is built by commands CI runs on every change.
#
# Usage: cmd/build.sh BUILD_DIR [CMAKE_ARGS...] [-- BUILD_ARGS...]
#   Configures BUILD_DIR with Ninja and warnings as errors (-DRESTARTER_WERROR=ON) plus
#   CMAKE_ARGS (e.g. -DCMAKE_BUILD_TYPE=Release -DRESTARTER_BUILD_TESTS=OFF), then builds every
#   target with $RESTARTER_BUILD_JOBS (default: nproc) jobs; BUILD_ARGS go to `cmake --build`
#   (e.g. --target restarter). The configure output goes to BUILD_DIR.configure.log and is shown
#   only when configuring fails. Run from anywhere; the dependencies come from
#   tests/install-deps.sh. Exit status: non-zero when configuring or building failed.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $# -ge 1 && $1 != -* ]] || { sed -n '4,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
dir=$1
shift
cmake_args=()
while (($#)) && [[ $1 != -- ]]; do cmake_args+=("$1"); shift; done
(($#)) && shift
jobs=${RESTARTER_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}

mkdir -p "$(dirname "$dir")"
cmake -S "$repo" -B "$dir" -G Ninja -DRESTARTER_WERROR=ON "${cmake_args[@]}" >"$dir.configure.log" 2>&1 ||
  { cat "$dir.configure.log" >&2; exit 1; }
cmake --build "$dir" -j "$jobs" "$@"
