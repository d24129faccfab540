#!/usr/bin/env bash
# The one command that runs every test (README "Set up"; .ci/run calls exactly this):
#   1. installs the Debian packages it needs (tests/install-deps.sh);
#   2. lints: shellcheck over every script (tests/check-shell.sh) and clang-format over the C++
#      sources (tests/check-format.sh), and checks that the benchmark tables and plots of
#      docs/benchmarks.md agree with their results files (tests/bench/plot.py --check), that the
#      version is written once (tests/check-version.sh), that time is read only through the clock
#      seam (tests/check-clock.sh) and that every cited documentation section exists
#      (tests/check-citations.py), each a stage of its own;
#   3. builds with warnings as errors and runs the unit tests, then runs clang-tidy's checks
#      (.clang-tidy) over the product's sources as that build compiles them (tests/check-tidy.sh);
#   4. builds with AddressSanitizer + UndefinedBehaviorSanitizer and runs the unit tests again;
#   5. builds with ThreadSanitizer and runs the unit tests again (any race report fails);
#   6. builds the fuzz targets with clang (libFuzzer + ASan + UBSan) and runs each for a fixed,
#      seeded number of inputs (tests/fuzz/run.sh): any crash or failed check fails the stage
#      (with stage 8 it runs in the background during stage 8's first steps, see Time);
#      (the builds of 3-6 are CMakePresets.json's dev, asan, tsan and fuzz, through cmd/build.sh;)
#   7. checks that the Dockerfile still builds with cmd/build.sh and installs exactly the runtime
#      packages the binary links (tests/check-dockerfile.sh), then builds the image from it with
#      buildah, no daemon, no registry (tests/image/build.sh: base images made from Debian's
#      packages, a smoke test, an archive for the real node); cross-compiles restarter and its
#      unit tests for arm64 and runs them under qemu-user (tests/cross/unit-tests.sh); builds the
#      release of this checkout for both platforms and the previous release from its commit
#      (tests/release/stage.sh build, after tests/release/refusals.sh);
#   8. builds the local control plane if not cached (tests/cluster), brings it up with its real
#      node (containerd, runc, CNI, kubelet, kube-proxy beside the kwok nodes), runs the
#      integration tests (with the build of stage 3, then with the TSan build), the kuttl suites
#      (serve-controller and serve-webhook authenticated as the manifests' ServiceAccounts), the
#      kuttl suites again with the ASan+UBSan build of stage 4, the suites of the threaded paths
#      with the TSan build (any sanitizer report fails) and the Krew plugin test
#      (krew/test-install.sh) inside its network namespace, loads the image into the real node
#      and runs the suites of kuttl/kuttl-node.yaml (restarter installed with kubectl apply -k and
#      helm install, in real containers) and of kuttl/kuttl-netpol.yaml (the same with kube-router
#      enforcing NetworkPolicy on the node), publishes the release into the node's registry (signed;
#      tests/release/stage.sh publish) and runs the suites of kuttl/kuttl-release.yaml (verify,
#      upgrade from the previous release, kustomize by digest, Krew), and brings it down, also when
#      a test fails; the Helm
#      chart's check (tests/check-helm.sh) runs there too, with its helm; then
#      runs every benchmark that uses the local control plane at its smallest size on a fresh
#      control plane of its own (tests/bench/smoke.sh: a benchmark that cannot start or cannot
#      measure fails; about 1.5 minutes), and
#      proves the demo (tests/demo/test-demo.sh: cmd/demo.sh on a control plane of its
#      own, with this build). Each of these is a row of its own in the table of stage times.
# Time: stages 2-7 run on both cores while the control plane of stage 8 builds (first run on a
# machine) and starts in the background; stage 8 waits for it. Stage 6 then runs in the
# background while stage 8's integration tests and kuttl suites, which mostly wait on the
# control plane, leave a core idle; its row comes before the control plane goes down and counts
# only the time waited for it (its log says how long it ran). Every compilation goes through the
# ccache of cmd/build.sh, so a fresh clone on a machine that ran this before compiles little, and
# no build compiles a target its stages do not run (ASan: no integration tests, TSan: no
# benchmarks, fuzz: only the fuzz targets and the modules they test). A table of stage times is
# printed at the end, also when a stage fails or the run is interrupted, and after it, for each failed
# kuttl test, its own lines that say what failed (the full output stays above).
# Flags: --no-cluster skips stage 8 (for a quick local loop; CI always runs everything).
# Exit status: 0 only if every stage passed. The last line counts the stages.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 1
# The cluster the stage-8 tests use (the demo test starts its own, "<this>-demo").
export RESTARTER_CLUSTER=${RESTARTER_CLUSTER:-ci}

with_cluster=1
for arg in "$@"; do
  case "$arg" in
    --no-cluster) with_cluster=0 ;;
    -h|--help) sed -n '2,/^# Exit status/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "tests/run.sh: unknown flag $arg (try --help)" >&2; exit 2 ;;
  esac
done

jobs=$(nproc 2>/dev/null || echo 2)
passed=0
failed=0
failed_names=()
run_start=$SECONDS
# One row per stage that ran, for the table: name, result, seconds.
table_names=()
table_results=()
table_seconds=()

# stage NAME CMD...: runs one stage, timing it and counting the result.
stage() {
  local name=$1; shift
  local start=$SECONDS result
  current_stage=$name
  echo "=== ${name}"
  if "$@"; then
    passed=$((passed + 1))
    result=passed
  else
    failed=$((failed + 1))
    failed_names+=("$name")
    result=FAILED
  fi
  echo "=== ${name}: ${result} in $((SECONDS - start)) s"
  table_names+=("$name")
  table_results+=("$result")
  table_seconds+=("$((SECONDS - start))")
}

# The table of stage times; printed once, at the end or when the run is cut short.
table_printed=0
print_stage_table() {
  ((table_printed)) && return 0
  table_printed=1
  local i
  echo
  echo "stage times (wall clock; the control-plane start and the fuzz stage run in the background):"
  for i in "${!table_names[@]}"; do
    printf '  %6d s  %-7s %s\n' "${table_seconds[$i]}" "${table_results[$i]}" "${table_names[$i]}"
  done
  printf '  %6d s  total\n' "$((SECONDS - run_start))"
  print_failure_digest
}

build_and_unit_test() {  # build_and_unit_test DIR CMAKE_ARGS...
  local dir=$1; shift
  # The same build recipe as the Dockerfile's (cmd/build.sh).
  RESTARTER_BUILD_JOBS=$jobs cmd/build.sh "$dir" "$@" || return 1
  ctest --test-dir "$dir" -L unit --output-on-failure --no-tests=error -j "$jobs"
}

# ThreadSanitizer: any report fails (halt_on_error makes the reporting process exit non-zero, so a
# unit or integration test with a race fails by itself; the servers in the kuttl suites also write
# reports under $reports, checked after the suites like the ASan ones).
tsan_options="halt_on_error=1:second_deadlock_stack=1"
build_and_unit_test_tsan() {
  # The integration tests run with this build too (stage 8); the benchmarks do not (the preset).
  TSAN_OPTIONS=$tsan_options build_and_unit_test build/tsan --preset tsan
}
# The kuttl suites whose servers run many threads at once: leader election, the controller's
# workers and reflectors, certificate rotation under load, the webhook's lookup pool, two webhook
# replicas racing, the fleet-wide rollout slots taken and freed by every worker. (kuttl's --test is a
# regular expression over the suites' directory names.)
tsan_suites='^(controller-leader|controller-restart|controller-workloads|controller-rollout-queue|webhook-rotation|webhook-first-rollout|webhook-secret-race)$'

# Fuzz runs: 40,000 inputs per target take about 1 minute for all five on the 2-core machine.
fuzz_runs=40000
build_and_fuzz() {
  local dir=build/fuzz
  # The same build recipe again, with clang (libFuzzer) and only the fuzz targets.
  RESTARTER_BUILD_JOBS=$jobs cmd/build.sh "$dir" --preset fuzz -- --target fuzz_targets || return 1
  tests/fuzz/run.sh "$dir" "$fuzz_runs"
}

# With the cluster stages, the fuzz stage runs in the background from after the TSan stage to
# just before the control plane goes down: one libFuzzer process, deterministic (fixed seed and
# run count, no time budget), so sharing the cores changes its duration, never its result. Its
# output goes to a log, shown in full when it fails.
fuzz_log=$repo/build/logs/fuzz.log
fuzz_pid=""
fuzz_started_at=0
start_fuzz_in_background() {
  mkdir -p "$(dirname "$fuzz_log")"
  fuzz_started_at=$SECONDS
  build_and_fuzz >"$fuzz_log" 2>&1 &
  fuzz_pid=$!
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
  wait "$fuzz_pid" || rc=$?
  fuzz_pid=""
  echo "(the fuzz stage ran in the background for $((SECONDS - fuzz_started_at)) s)"
  if ((rc != 0)); then
    cat "$fuzz_log"
    return 1
  fi
  tail -n 12 "$fuzz_log"
}

# The control plane starts in the background while stages 2-7 run: on a new machine its Go
# build is the longest single step, and on a warm one its start (readiness waits) costs a minute
# of mostly idle cores. Its output goes to a log; stage 8 waits for it and shows the log on failure.
cluster_log=$repo/build/logs/cluster-up.log
cluster_pid=""
cluster_started=0
# The benchmarks' smoke stage brings up a control plane of its own (bench_smoke, below).
bench_cluster=$RESTARTER_CLUSTER-bench
bench_cluster_started=0
start_cluster_in_background() {
  mkdir -p "$(dirname "$cluster_log")"
  # With the real node (containerd, runc, CNI, kubelet, kube-proxy; tainted, so only the suites
  # that ask for it put pods there) for the suites that run restarter's image.
  # Then kube-router's policy controller is built (cached; about 2 minutes on a new machine), for
  # the netpol stage, which starts it.
  { RESTARTER_CLUSTER_REAL_NODE=1 tests/cluster/cluster.sh up && tests/cluster/cluster.sh build-tools kuberouter >/dev/null; } \
    >"$cluster_log" 2>&1 &
  cluster_pid=$!
  cluster_started=1
}

# Whatever happens (a failed stage, Ctrl-C, CI's kill), the control plane goes down and the table
# is printed.
on_exit() {
  if [[ -n $fuzz_pid ]]; then
    kill_tree "$fuzz_pid"
    wait "$fuzz_pid" 2>/dev/null || true
  fi
  if [[ -n $cluster_pid ]]; then
    kill "$cluster_pid" 2>/dev/null || true
    wait "$cluster_pid" 2>/dev/null || true
  fi
  # Idempotent: nothing to do when the "local control plane: down" stage already ran.
  ((cluster_started)) && { tests/cluster/cluster.sh down >/dev/null 2>&1 || true; }
  # The benchmarks' own control plane (tests/bench/smoke.sh takes it down itself, unless killed).
  ((bench_cluster_started)) && { RESTARTER_CLUSTER=$bench_cluster tests/cluster/cluster.sh down >/dev/null 2>&1 || true; }
  print_stage_table
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Stage 8, split into steps so the table shows where the time goes. Each step fails (rather than
# being skipped) when the control plane is not up, so a broken start cannot pass for a green run.
cluster=tests/cluster/cluster.sh
cluster_ready=0
image_archive=$repo/build/image/restarter.tar
identities=$repo/build/identities
reports=$repo/build/sanitizer-reports

wait_for_cluster() {
  local up_start=$SECONDS rc=0
  wait "$cluster_pid" || rc=$?
  cluster_pid=""  # finished: on_exit must not wait for it again
  if ((rc != 0)); then
    echo "the control plane did not come up (exit $rc); its log ($cluster_log):"
    tail -n 60 "$cluster_log"
    "$cluster" down >/dev/null 2>&1 || true
    return 1
  fi
  echo "(control plane up; waited $((SECONDS - up_start)) s for it after the builds)"
  # The suites' serve-controller and serve-webhook run as the manifests' ServiceAccounts (tokens
  # from the TokenRequest API), so passing suites prove the install's RBAC sufficient.
  if ! { "$cluster" exec -- kuttl/lib/identity.sh install-rbac &&
         "$cluster" exec -- kuttl/lib/identity.sh kubeconfig restarter-controller "$identities/controller.kubeconfig" &&
         "$cluster" exec -- kuttl/lib/identity.sh kubeconfig restarter-webhook "$identities/webhook.kubeconfig"; }; then
    echo "cannot set up the manifests' ServiceAccounts"
    return 1
  fi
  cluster_ready=1
}

need_cluster() {
  ((cluster_ready)) || { echo "the control plane is not up (see the stage that started it)"; return 1; }
}

# integration_tests BUILD_DIR [ENV...]: the integration tests of one build, inside the namespace.
integration_tests() {
  need_cluster || return 1
  local dir=$1; shift
  if grep -q 'Total Tests: 0' <<<"$(ctest --test-dir "$dir" -N -L integration)"; then
    echo "no integration tests are registered in $dir"
    return 1
  fi
  env "$@" "$cluster" exec -- ctest --test-dir "$dir" -L integration --output-on-failure
}

# What failed and why, printed after the table of stage times: the full kuttl output of a run is
# thousands of lines, and the end of a run's output is what a reader (or a CI summary that keeps
# only part of it) sees first.
failure_digest=$repo/build/logs/failure-digest.txt
# kuttl_failure_digest LOG: for each failed kuttl test in LOG, what kuttl itself reported (the
# step that failed and its errors: an assert's mismatch, a command's exit status; Go's test output
# puts these under the test's "=== NAME" header, not on kuttl's logger lines), then the test's
# logger lines that say what went wrong (a failed check, an error, a timeout; the last 25), then
# the last 10 lines its steps printed, which place a check that failed without a word.
kuttl_failure_digest() {
  local test lines
  while read -r test; do
    echo "--- kuttl test $test failed (stage: ${current_stage:-?}):"
    awk -v t="kuttl/harness/$test" '
      /^=== (RUN|CONT|NAME|PAUSE) / { current = $3; next }
      current == t && /^ +case\.go:[0-9]+:/ {
        # a failed command is quoted whole (its script): the head says enough
        print (length($0) > 300 ? substr($0, 1, 300) " ..." : $0)
      }' "$1"
    lines=$(grep -E "\| ${test}(/[^ |]*)? \|" "$1")
    grep -Ei 'fail|error|timed out|timeout|panic|not ' <<<"$lines" | grep -v 'Ignoring ' | tail -n 25
    echo "  its steps' last lines:"
    grep -E "\| ${test}/[^ |]+ \|" <<<"$lines" | tail -n 10
  done < <(sed -n 's/.*--- FAIL: kuttl\/harness\/\([^ ]*\) .*/\1/p' "$1")
}
print_failure_digest() {
  [[ -s $failure_digest ]] || return 0
  echo
  echo "why (the failed kuttl tests' own lines; the full output is above):"
  cat "$failure_digest"
}

# kuttl_suites BINARY [ENV...] [-- KUTTL ARGS...]: the kuttl suites with that build of restarter,
# its servers authenticated as the manifests' ServiceAccounts. With sanitizer options in ENV
# (log_path under $reports), any report the servers leave fails the step.
kuttl_suites() {
  need_cluster || return 1
  local binary=$1; shift
  local envs=() rc=0
  while (($#)) && [[ $1 != -- ]]; do envs+=("$1"); shift; done
  (($#)) && shift
  [[ -x $binary ]] || { echo "no restarter binary at $binary (did its build stage fail?)"; return 1; }
  rm -rf "$reports" && mkdir -p "$reports"
  local log
  log=$(mktemp "$repo/build/logs/kuttl.XXXXXX")
  env RESTARTER_BIN="$binary" \
    RESTARTER_CONTROLLER_KUBECONFIG="$identities/controller.kubeconfig" \
    RESTARTER_WEBHOOK_KUBECONFIG="$identities/webhook.kubeconfig" "${envs[@]}" \
    "$cluster" exec -- kubectl-kuttl test --config kuttl/kuttl-test.yaml "$@" 2>&1 | tee "$log" || rc=1
  ((rc == 0)) || kuttl_failure_digest "$log" >>"$failure_digest"
  rm -f "$log"
  if compgen -G "$reports/*" >/dev/null; then
    echo "sanitizer reports from the servers:"
    cat "$reports"/*
    rc=1
  fi
  return $rc
}

# The Helm chart: lint, the defaults render manifests/, the schema refuses wrong types, the
# values table of docs/install.md (offline, with the control plane's helm and kubectl; seconds).
helm_check() {
  need_cluster || return 1
  "$cluster" exec -- tests/check-helm.sh
}

krew_test() {
  need_cluster || return 1
  "$cluster" exec -- krew/test-install.sh
}

# The image of the image stage, loaded into the real node's containerd, where the manifests'
# `restarter:<tag>` finds it (imagePullPolicy IfNotPresent: no registry is asked).
load_image() {
  need_cluster || return 1
  [[ -f $image_archive ]] || { echo "no image archive at $image_archive (did the image stage fail?)"; return 1; }
  "$cluster" load-image "$image_archive"
}

# The suites that run restarter as users install it, in real containers on the real node. The
# install they share stays for the netpol stage, which removes it.
node_suites() {
  need_cluster || return 1
  kuttl_config_suites kuttl/kuttl-node.yaml
}

# The same install with NetworkPolicy enforced on the real node: kube-router's policy controller
# started on the running node (tests/cluster/lib/netpol.sh; after the node suites, which must see
# the node without it), the suites of kuttl/kuttl-netpol.yaml; then the install is removed (also
# when one failed), and the controller stopped (its rules with it), so that the release's suites
# see the node as before.
netpol_suites() {
  need_cluster || return 1
  local rc=0
  if RESTARTER_CLUSTER_REAL_NODE=1 RESTARTER_CLUSTER_NETWORK_POLICY=1 "$cluster" up >/dev/null; then
    kuttl_config_suites kuttl/kuttl-netpol.yaml || rc=1
  else
    echo "cannot start NetworkPolicy enforcement on the real node (kube-router)"
    rc=1
  fi
  "$cluster" exec -- kuttl/lib/node.sh uninstall || rc=1
  "$cluster" stop-network-policy || rc=1
  return $rc
}

# kuttl_config_suites CONFIG: the suites of one kuttl configuration inside the namespace, what
# failed and why added to the failure digest.
kuttl_config_suites() {
  local rc=0 log
  log=$(mktemp "$repo/build/logs/kuttl.XXXXXX")
  "$cluster" exec -- kubectl-kuttl test --config "$1" 2>&1 | tee "$log" || rc=1
  ((rc == 0)) || kuttl_failure_digest "$log" >>"$failure_digest"
  rm -f "$log"
  return $rc
}

# The release of this checkout (docs/release.md): what users would install, built here and
# published into the real node's registry, then verified, installed and upgraded from there.
release_build() {
  tests/release/refusals.sh && tests/release/stage.sh build
}
release_publish() {
  need_cluster || return 1
  "$cluster" exec -- tests/release/stage.sh publish
}
release_suites() {
  need_cluster || return 1
  kuttl_config_suites kuttl/kuttl-release.yaml
}

cluster_down() {
  need_cluster || return 1
  "$cluster" down
}

# Every benchmark that uses the local control plane, at its smallest size, on a fresh control
# plane of its own ("<this>-bench"; tests/bench/smoke.sh brings it up and down): a benchmark that
# cannot start or cannot measure is a failed test. A leftover of a killed run is taken down first
# (smoke.sh refuses a cluster that is already up).
bench_smoke() {
  bench_cluster_started=1
  RESTARTER_CLUSTER=$bench_cluster "$cluster" down >/dev/null 2>&1 || true
  RESTARTER_CLUSTER=$bench_cluster tests/bench/smoke.sh build/ci
}

mkdir -p build/logs
rm -f "$failure_digest"
stage "install dependencies" tests/install-deps.sh
if [ "$with_cluster" -eq 1 ]; then start_cluster_in_background; fi
stage "shellcheck of every script (tests/check-shell.sh)" tests/check-shell.sh
stage "C++ formatting (tests/check-format.sh)" tests/check-format.sh
stage "benchmark figures agree with their results (tests/bench/plot.py --check)" tests/bench/plot.py --check
stage "the version is written once (tests/check-version.sh)" tests/check-version.sh
stage "time is read through the clock seam (tests/check-clock.sh)" tests/check-clock.sh
stage "every cited documentation section exists (tests/check-citations.py)" tests/check-citations.py
# The four builds are CMakePresets.json's dev, asan, tsan and fuzz (a developer's `cmake --preset
# NAME` configures exactly what CI builds, in the same directory), through cmd/build.sh's ccache.
stage "build (warnings as errors) and unit tests" build_and_unit_test build/ci --preset dev
stage "clang-tidy's checks over lib/, cli/ and cmd/ (tests/check-tidy.sh)" tests/check-tidy.sh build/ci
# Only what its stages run: the unit tests and the binary the kuttl suites run a second time (the
# asan preset leaves the integration tests out).
stage "build with ASan+UBSan and unit tests" build_and_unit_test build/asan --preset asan
stage "build with TSan and unit tests" build_and_unit_test_tsan
fuzz_stage="fuzz targets (clang libFuzzer, ASan+UBSan), ${fuzz_runs} seeded runs each"
if [ "$with_cluster" -eq 1 ]; then start_fuzz_in_background; else stage "$fuzz_stage" build_and_fuzz; fi
stage "Dockerfile: build recipe and runtime packages" \
  tests/check-dockerfile.sh build/ci/cmd/restarter/restarter
# The image users build: the Dockerfile itself, with buildah (no daemon, no registry; base images
# made from Debian's packages), smoke-tested and exported for the real node.
stage "image: the Dockerfile built with buildah (tests/image/build.sh)" \
  tests/image/build.sh --output "$image_archive"
# The arm64 binary, where CI has no arm64 machine: cross-compiled with the unit tests, all run
# under qemu-user. Then the release of this checkout, both platforms (cmd/release.sh --no-push:
# images, index, SBOMs, chart, Krew, kustomize tree) and the previous release from its commit,
# named for the real node's registry, where the stages after the node's suites publish them.
stage "arm64: cross-compiled, unit tests and restarter under qemu-user (tests/cross/unit-tests.sh)" \
  tests/cross/unit-tests.sh
stage "release: refusals, then built for linux/amd64 and linux/arm64 (tests/release/stage.sh build)" \
  release_build
if [ "$with_cluster" -eq 1 ]; then
  release_bin=$repo/build/ci/cmd/restarter/restarter
  stage "local control plane: up (started in the background) and ServiceAccounts" wait_for_cluster
  stage "Helm chart (tests/check-helm.sh)" helm_check
  stage "integration tests" integration_tests build/ci
  stage "kuttl suites" kuttl_suites "$release_bin"
  # Once more with the ASan+UBSan build: memory errors and undefined behaviour abort the server
  # (its step fails), leaks are reported when it exits.
  stage "kuttl suites with the ASan+UBSan build" kuttl_suites "$repo/build/asan/cmd/restarter/restarter" \
    "ASAN_OPTIONS=log_path=$reports/asan" "UBSAN_OPTIONS=print_stacktrace=1:log_path=$reports/ubsan"
  stage "integration tests with the TSan build" integration_tests build/tsan "TSAN_OPTIONS=$tsan_options"
  stage "kuttl suites of the threaded paths with the TSan build" kuttl_suites "$repo/build/tsan/cmd/restarter/restarter" \
    "TSAN_OPTIONS=$tsan_options:log_path=$reports/tsan" -- --test "$tsan_suites"
  stage "Krew plugin install" krew_test
  stage "real node: the image loaded (cluster.sh load-image)" load_image
  stage "kuttl suites on the real node (restarter's image, kuttl/kuttl-node.yaml)" node_suites
  stage "kuttl suites with NetworkPolicy enforced on the real node (kube-router, kuttl/kuttl-netpol.yaml)" netpol_suites
  stage "release: published to the real node's registry, signed (tests/release/stage.sh publish)" release_publish
  stage "kuttl suites of the release: verify, upgrade, kustomize, Krew (kuttl/kuttl-release.yaml)" release_suites
  stage "$fuzz_stage (background)" wait_for_fuzz
  stage "local control plane: down" cluster_down
  # After the "ci" cluster is down, one control plane at a time: the benchmarks' smoke run starts
  # (and stops) its own, "ci-bench", then the demo its own, "ci-demo".
  stage "benchmarks at their smallest size (tests/bench/smoke.sh, a control plane of its own)" bench_smoke
  stage "demo (cmd/demo.sh on a control plane of its own)" \
    env RESTARTER_BIN="$release_bin" tests/demo/test-demo.sh
fi

print_stage_table
[ "$failed" -eq 0 ] || printf 'failed stage: %s\n' "${failed_names[@]}"
echo "stages: ${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
