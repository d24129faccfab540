# shellcheck shell=bash
# The build stages of tests/run.sh: the four builds with their unit tests and the fuzz runs, the
# fuzz runs also as a background job. Sourced by tests/run.sh, never executed; uses REPO and JOBS.
#
# The four builds are CMakePresets.json's dev, asan, tsan and fuzz (a developer's `cmake --preset
# NAME` configures exactly what CI builds, in the same directory), through cmd/build.sh, the same
# recipe as the Dockerfile's, and its ccache: a fresh clone on a machine that ran this before
# compiles little, and no build compiles a target its stages do not run (ASan: no integration
# tests, TSan: no benchmarks, fuzz: only the fuzz targets and the modules they test).

build_and_unit_test() {  # build_and_unit_test DIR CMAKE_ARGS...
  local dir=$1; shift
  RESTARTER_BUILD_JOBS=$JOBS cmd/build.sh "$dir" "$@" || return 1
  ctest --test-dir "$dir" -L unit --output-on-failure --no-tests=error -j "$JOBS"
}

# ThreadSanitizer: any report fails (halt_on_error makes the reporting process exit non-zero, so a
# unit or integration test with a race fails by itself; the servers in the kuttl suites also write
# reports, checked after the suites like the ASan ones: tests/run/kuttl.sh).
TSAN_OPTIONS_CI="halt_on_error=1:second_deadlock_stack=1"
build_and_unit_test_tsan() {
  # The integration tests run with this build too; the benchmarks do not (the preset).
  TSAN_OPTIONS=$TSAN_OPTIONS_CI build_and_unit_test build/tsan --preset tsan
}

# Fuzz runs: 40,000 inputs per target take about 1 minute for all five on the 2-core machine.
FUZZ_RUNS=40000
build_and_fuzz() {
  local dir=build/fuzz
  # The same build recipe again, with clang (libFuzzer) and only the fuzz targets.
  RESTARTER_BUILD_JOBS=$JOBS cmd/build.sh "$dir" --preset fuzz -- --target fuzz_targets || return 1
  tests/fuzz/run.sh "$dir" "$FUZZ_RUNS"
}

# With the cluster stages, the fuzz stage runs in the background from after the TSan stage to
# just before the control plane goes down: one libFuzzer process, deterministic (fixed seed and
# run count, no time budget), so sharing the cores changes its duration, never its result. Its
# output goes to a log, shown in full when it fails; its stage (wait_for_fuzz) counts only the
# time waited for it.
FUZZ_LOG=$REPO/build/logs/fuzz.log
FUZZ_PID=""
FUZZ_STARTED_AT=0
start_fuzz_in_background() {
  mkdir -p "$(dirname "$FUZZ_LOG")"
  FUZZ_STARTED_AT=$SECONDS
  build_and_fuzz >"$FUZZ_LOG" 2>&1 &
  FUZZ_PID=$!
}
# kill_tree PID: TERM to PID, then to every process that was below it, so that a fuzzer (a
# grandchild of the background job) does not outlive the run; the parent goes first so that it
# cannot start another child meanwhile.
kill_tree() {
  local children
  children=$(pgrep -P "$1" 2>/dev/null)
  kill "$1" 2>/dev/null || true
  for child in $children; do kill_tree "$child"; done
}
wait_for_fuzz() {
  local rc=0
  wait "$FUZZ_PID" || rc=$?
  FUZZ_PID=""
  echo "(the fuzz stage ran in the background for $((SECONDS - FUZZ_STARTED_AT)) s)"
  if ((rc != 0)); then
    cat "$FUZZ_LOG"
    return 1
  fi
  tail -n 12 "$FUZZ_LOG"
}
# The run's exit: a fuzz job still running is stopped with its children.
stop_fuzz() {
  [[ -n $FUZZ_PID ]] || return 0
  kill_tree "$FUZZ_PID"
  wait "$FUZZ_PID" 2>/dev/null || true
}
