#!/usr/bin/env bash
# The one command that runs every test (README "Set up"; .ci/run calls exactly this). What it runs
# is the table STAGES below, one row a line, run top to bottom:
#   WHEN HOW COMMAND... | NAME
#   WHEN     all: every run; cluster: not with --no-cluster; quick: only with --no-cluster
#   HOW      stage: runs now, timed, one row of the table of stage times (its NAME), and the run
#            fails if it fails; background: COMMAND starts a job and returns at once; a later
#            stage waits for the job, and its row counts only the time waited
#   COMMAND  a command, or a function of tests/run/*.sh, split on blanks (no quoting, no
#            expansion; what needs either is a function there)
# In short: the Debian packages, the linters and checks, the four builds (dev with clang-tidy,
# ASan+UBSan, TSan, fuzz; CMakePresets.json through cmd/build.sh's ccache) with the unit tests,
# the Dockerfile and its image, arm64 under qemu-user and the release; then, on the local control
# plane (tests/cluster, with its real node), the Helm chart's check, the integration and kuttl
# suites with the builds, the image on the real node, NetworkPolicy and the published release;
# then the benchmarks and the demo, each on a control plane of its own. docs/testing.md tells it
# at length.
# Two background jobs: the control plane builds (first run on a machine) and starts while the
# lint and build stages use both cores; the fuzz runs go on while the cluster stages mostly wait
# on the control plane (seeded, a fixed number of runs: sharing the cores changes their duration,
# never their result).
# A table of stage times is printed at the end, also when a stage fails or the run is interrupted,
# and after it, for each failed kuttl test, its own lines that say what failed (the full output
# stays above). Whatever happens (a failed stage, Ctrl-C, CI's kill), the control plane goes down.
# Flags: --no-cluster skips the control plane's stages (for a quick local loop; CI always runs
# everything). --list prints the stages this run would run (HOW, COMMAND, NAME) and exits.
# Exit status: 0 only if every stage passed. The last line counts the stages.
set -uo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO" || exit 1
# The cluster the control plane's stages use (the demo test starts its own, "<this>-demo").
export RESTARTER_CLUSTER=${RESTARTER_CLUSTER:-ci}
JOBS=$(nproc 2>/dev/null || echo 2)

with_cluster=1
list=0
for arg in "$@"; do
  case "$arg" in
    --no-cluster) with_cluster=0 ;;
    --list) list=1 ;;
    -h|--help) sed -n '2,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "tests/run.sh: unknown flag $arg (try --help)" >&2; exit 2 ;;
  esac
done

# shellcheck source=SCRIPTDIR/run/table.sh
source tests/run/table.sh
# shellcheck source=SCRIPTDIR/run/builds.sh
source tests/run/builds.sh
# shellcheck source=SCRIPTDIR/run/control-plane.sh
source tests/run/control-plane.sh
# shellcheck source=SCRIPTDIR/run/kuttl.sh
source tests/run/kuttl.sh

fuzz_stage="fuzz targets (clang libFuzzer, ASan+UBSan), ${FUZZ_RUNS} seeded runs each"
STAGES=(
  "all     stage      tests/install-deps.sh | install dependencies"
  "cluster background start_cluster_in_background | local control plane: started in the background"
  # The linters and checks, each a stage of its own.
  "all     stage      tests/check-shell.sh | shellcheck of every script (tests/check-shell.sh)"
  "all     stage      tests/check-format.sh | C++ formatting (tests/check-format.sh)"
  "all     stage      tests/bench/plot.py --check | benchmark figures agree with their results (tests/bench/plot.py --check)"
  "all     stage      tests/check-version.sh | the version is written once (tests/check-version.sh)"
  "all     stage      tests/check-clock.sh | time is read through the clock seam (tests/check-clock.sh)"
  "all     stage      tests/check-citations.py | every cited documentation section exists (tests/check-citations.py)"
  # The builds (tests/run/builds.sh), clang-tidy over the product's sources as the dev build
  # compiles them.
  "all     stage      build_and_unit_test build/ci --preset dev | build (warnings as errors) and unit tests"
  "all     stage      tests/check-tidy.sh build/ci | clang-tidy's checks over lib/, cli/ and cmd/ (tests/check-tidy.sh)"
  "all     stage      build_and_unit_test build/asan --preset asan | build with ASan+UBSan and unit tests"
  "all     stage      build_and_unit_test_tsan | build with TSan and unit tests"
  "cluster background start_fuzz_in_background | $fuzz_stage"
  "quick   stage      build_and_fuzz | $fuzz_stage"
  # The Dockerfile's recipe and packages, the image built from it (tests/run/control-plane.sh),
  # the arm64 binary where CI has no arm64 machine, the release of this checkout.
  "all     stage      tests/check-dockerfile.sh build/ci/cmd/restarter/restarter | Dockerfile: build recipe and runtime packages"
  "all     stage      build_image | image: the Dockerfile built with buildah (tests/image/build.sh)"
  "all     stage      tests/cross/unit-tests.sh | arm64: cross-compiled, unit tests and restarter under qemu-user (tests/cross/unit-tests.sh)"
  "all     stage      release_build | release: refusals, then built for linux/amd64 and linux/arm64 (tests/release/stage.sh build)"
  # On the local control plane (tests/run/control-plane.sh, tests/run/kuttl.sh).
  "cluster stage      wait_for_cluster | local control plane: up (started in the background) and ServiceAccounts"
  "cluster stage      helm_check | Helm chart (tests/check-helm.sh)"
  "cluster stage      integration_tests build/ci | integration tests"
  "cluster stage      kuttl_suites_dev | kuttl suites"
  "cluster stage      kuttl_suites_asan | kuttl suites with the ASan+UBSan build"
  "cluster stage      integration_tests_tsan | integration tests with the TSan build"
  "cluster stage      kuttl_suites_tsan | kuttl suites of the threaded paths with the TSan build"
  "cluster stage      krew_test | Krew plugin install"
  "cluster stage      load_image | real node: the image loaded (cluster.sh load-image)"
  "cluster stage      node_suites | kuttl suites on the real node (restarter's image, kuttl/kuttl-node.yaml)"
  "cluster stage      netpol_suites | kuttl suites with NetworkPolicy enforced on the real node (kube-router, kuttl/kuttl-netpol.yaml)"
  "cluster stage      release_publish | release: published to the real node's registry, signed (tests/release/stage.sh publish)"
  "cluster stage      release_suites | kuttl suites of the release: verify, upgrade, kustomize, Krew (kuttl/kuttl-release.yaml)"
  "cluster stage      wait_for_fuzz | $fuzz_stage (background)"
  "cluster stage      cluster_down | local control plane: down"
  # One control plane at a time: the benchmarks' smoke run starts (and stops) its own,
  # "ci-bench", then the demo its own, "ci-demo".
  "cluster stage      bench_smoke | benchmarks at their smallest size (tests/bench/smoke.sh, a control plane of its own)"
  "cluster stage      demo_test | demo (cmd/demo.sh on a control plane of its own)"
)

check_stage_table "${STAGES[@]}" || exit 2
if ((list)); then
  list_stages "$with_cluster" "${STAGES[@]}"
  exit 0
fi

# Whatever happens (a failed stage, Ctrl-C, CI's kill), the background jobs stop, the control
# plane goes down and the table is printed.
on_exit() {
  stop_fuzz
  stop_control_planes
  print_stage_times
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p build/logs
rm -f "$FAILURE_DIGEST"
run_stages "$with_cluster" "${STAGES[@]}"

print_stage_times
[ "$STAGES_FAILED" -eq 0 ] || printf 'failed stage: %s\n' "${FAILED_NAMES[@]}"
echo "stages: ${STAGES_PASSED} passed, ${STAGES_FAILED} failed"
[ "$STAGES_FAILED" -eq 0 ]
