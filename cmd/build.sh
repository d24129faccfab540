#!/usr/bin/env bash
# Configures and builds restarter the way CI does; the one build recipe shared by tests/run.sh (all
# four of its builds: warnings as errors, ASan+UBSan, TSan, fuzz) and the Dockerfile, so the image
# is built by commands CI runs on every change.
#
# Usage: cmd/build.sh BUILD_DIR [CMAKE_ARGS...] [-- BUILD_ARGS...]
#   Configures BUILD_DIR with Ninja and warnings as errors (-DRESTARTER_WERROR=ON) plus
#   CMAKE_ARGS (e.g. -DCMAKE_BUILD_TYPE=Release -DRESTARTER_BUILD_TESTS=OFF, or --preset NAME of
#   CMakePresets.json: dev, asan, tsan, fuzz; BUILD_DIR wins over its binaryDir), then builds every
#   target with $RESTARTER_BUILD_JOBS (default: nproc) jobs; BUILD_ARGS go to `cmake --build`
#   (e.g. --target restarter). The configure output goes to BUILD_DIR.configure.log and is shown
#   only when configuring fails. Run from anywhere; the dependencies come from
#   tests/install-deps.sh. Exit status: non-zero when configuring or building failed.
#
# Compiler cache: when ccache is installed (tests/install-deps.sh installs it) every compilation
# goes through it. Its directory is outside the work tree, ${RESTARTER_CCACHE_DIR:-
# ${XDG_CACHE_HOME:-~/.cache}/restarter/ccache} (RESTARTER_CCACHE_DIR=off disables it), and paths
# are rewritten relative to the checkout (base_dir), so a fresh clone in another folder on the same
# machine reuses what an earlier clone compiled. The cache key is the preprocessed source and the
# compiler's flags: a change of header, flag or compiler misses, never serves a stale object.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $# -ge 1 && $1 != -* ]] || { sed -n '6,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
dir=$1
shift
cmake_args=()
while (($#)) && [[ $1 != -- ]]; do cmake_args+=("$1"); shift; done
(($#)) && shift
jobs=${RESTARTER_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}

launcher=()
ccache_dir=${RESTARTER_CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/restarter/ccache}
if [[ $ccache_dir != off ]] && command -v ccache >/dev/null; then
  mkdir -p "$ccache_dir"
  # 5 GiB holds the four configurations (warnings-as-errors, ASan+UBSan, TSan, fuzz) several
  # times over; ccache evicts the oldest entries beyond it. Written into the cache's own
  # configuration, like the settings below into the launcher, so that running ninja by hand in a
  # build directory uses the same cache the same way.
  CCACHE_DIR=$ccache_dir ccache --max-size 5G >/dev/null
  # sloppiness: the precompiled header of cmake/pch.cmake is cacheable only with pch_defines and
  # time_macros (ccache's documented requirement for GCC's PCH); the PCH file itself is hashed.
  launcher=("-DCMAKE_CXX_COMPILER_LAUNCHER=env;CCACHE_DIR=$ccache_dir;CCACHE_BASEDIR=$repo;CCACHE_NOHASHDIR=1;CCACHE_SLOPPINESS=pch_defines,time_macros;ccache")
fi

mkdir -p "$(dirname "$dir")"
cmake -S "$repo" -B "$dir" -G Ninja -DRESTARTER_WERROR=ON "${launcher[@]}" "${cmake_args[@]}" >"$dir.configure.log" 2>&1 ||
  { cat "$dir.configure.log" >&2; exit 1; }
cmake --build "$dir" -j "$jobs" "$@"
