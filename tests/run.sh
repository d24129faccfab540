#!/usr/bin/env bash
# The one command that runs every test (README "Set up"; .ci/run calls exactly this):
#   1. installs the Debian packages it needs (tests/install-deps.sh);
#   2. builds with warnings as errors and runs the unit tests;
#   3. builds with AddressSanitizer + UndefinedBehaviorSanitizer and runs the unit tests again;
#   4. builds the fuzz targets with clang (libFuzzer + ASan + UBSan) and runs each for a fixed,
#      seeded number of inputs (tests/fuzz/run.sh): any crash or failed check fails the stage;
#   5. checks that the Dockerfile still builds with cmd/build.sh and installs exactly the runtime
#      packages the binary links (tests/check-dockerfile.sh);
#   6. builds the local control plane if not cached (tests/cluster), brings it up, runs the
#      integration tests, the kuttl suites (serve-controller and serve-webhook authenticated as
#      the manifests' ServiceAccounts), the kuttl suites again with the ASan+UBSan build of stage 3
#      (any sanitizer report fails the stage) and the Krew plugin test (krew/test-install.sh) inside
#      its network namespace, and brings it down, also when a test fails; then proves the demo
#      (tests/demo/test-demo.sh: cmd/demo.sh on a control plane of its own, with this build).
# Flags: --no-cluster skips stage 6 (for a quick local loop; CI always runs everything).
# Exit status: 0 only if every stage passed. The last line counts the stages.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"

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

# stage NAME CMD...: runs one stage, timing it and counting the result.
stage() {
  local name=$1; shift
  local start=$SECONDS
  echo "=== ${name}"
  if "$@"; then
    passed=$((passed + 1))
    echo "=== ${name}: passed in $((SECONDS - start)) s"
  else
    failed=$((failed + 1))
    failed_names+=("$name")
    echo "=== ${name}: FAILED after $((SECONDS - start)) s"
  fi
}

build_and_unit_test() {  # build_and_unit_test DIR CMAKE_ARGS...
  local dir=$1; shift
  # The same build recipe as the Dockerfile's (cmd/build.sh).
  RESTARTER_BUILD_JOBS=$jobs cmd/build.sh "$dir" "$@" || return 1
  ctest --test-dir "$dir" -L unit --output-on-failure --no-tests=error -j "$jobs"
}

# Fuzz runs: 40,000 inputs per target take about 1 minute for all five on the 2-core machine.
fuzz_runs=40000
build_and_fuzz() {
  local dir=build/fuzz
  # The same build recipe again, with clang (libFuzzer) and only the fuzz targets.
  RESTARTER_BUILD_JOBS=$jobs cmd/build.sh "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRESTARTER_FUZZ=ON \
    -DRESTARTER_BUILD_TESTS=OFF -DCMAKE_CXX_COMPILER=clang++ -- --target fuzz_targets || return 1
  tests/fuzz/run.sh "$dir" "$fuzz_runs"
}

cluster_tests() {
  export RESTARTER_CLUSTER=${RESTARTER_CLUSTER:-ci}
  local cluster=tests/cluster/cluster.sh
  trap '"$repo/tests/cluster/cluster.sh" down >/dev/null 2>&1 || true' EXIT
  "$cluster" up || return 1
  local rc=0
  if ctest --test-dir build/ci -N -L integration | grep -q 'Total Tests: 0'; then
    echo "(no integration tests are registered)"
  else
    "$cluster" exec -- ctest --test-dir build/ci -L integration --output-on-failure || rc=1
  fi
  # The suites' serve-controller and serve-webhook run as the manifests' ServiceAccounts (tokens
  # from the TokenRequest API), so passing suites prove the install's RBAC sufficient.
  local identities=$repo/build/identities
  if "$cluster" exec -- kuttl/lib/identity.sh install-rbac &&
     "$cluster" exec -- kuttl/lib/identity.sh kubeconfig restarter-controller "$identities/controller.kubeconfig" &&
     "$cluster" exec -- kuttl/lib/identity.sh kubeconfig restarter-webhook "$identities/webhook.kubeconfig"; then
    RESTARTER_CONTROLLER_KUBECONFIG=$identities/controller.kubeconfig \
    RESTARTER_WEBHOOK_KUBECONFIG=$identities/webhook.kubeconfig \
      "$cluster" exec -- kubectl-kuttl test --config kuttl/kuttl-test.yaml || rc=1
    # Once more with the sanitized build: memory errors and undefined behaviour abort the server
    # (its step fails), leaks are reported when it exits; every report lands in $reports.
    local reports=$repo/build/sanitizer-reports asan_bin=$repo/build/asan/cmd/restarter/restarter
    rm -rf "$reports" && mkdir -p "$reports"
    if [[ -x $asan_bin ]]; then
      RESTARTER_BIN=$asan_bin \
      ASAN_OPTIONS=log_path=$reports/asan UBSAN_OPTIONS=print_stacktrace=1:log_path=$reports/ubsan \
      RESTARTER_CONTROLLER_KUBECONFIG=$identities/controller.kubeconfig \
      RESTARTER_WEBHOOK_KUBECONFIG=$identities/webhook.kubeconfig \
        "$cluster" exec -- kubectl-kuttl test --config kuttl/kuttl-test.yaml || rc=1
      if compgen -G "$reports/*" >/dev/null; then
        echo "sanitizer reports from the kuttl suites:"
        cat "$reports"/*
        rc=1
      fi
    else
      echo "no sanitized build at $asan_bin (stage 3 failed?); kuttl suites not run with it"
      rc=1
    fi
  else
    echo "cannot set up the manifests' ServiceAccounts; kuttl not run"
    rc=1
  fi
  "$cluster" exec -- krew/test-install.sh || rc=1
  "$cluster" down || rc=1
  trap - EXIT
  # After the "ci" cluster is down: the demo starts (and stops) its own, "ci-demo".
  RESTARTER_BIN=$repo/build/ci/cmd/restarter/restarter tests/demo/test-demo.sh || rc=1
  return $rc
}

mkdir -p build
stage "install dependencies" tests/install-deps.sh
stage "build (warnings as errors) and unit tests" \
  build_and_unit_test build/ci -DCMAKE_BUILD_TYPE=RelWithDebInfo
stage "build with ASan+UBSan and unit tests" \
  build_and_unit_test build/asan -DCMAKE_BUILD_TYPE=Debug -DRESTARTER_SANITIZE=ON
stage "fuzz targets (clang libFuzzer, ASan+UBSan), ${fuzz_runs} seeded runs each" build_and_fuzz
stage "Dockerfile: build recipe and runtime packages" \
  tests/check-dockerfile.sh build/ci/cmd/restarter/restarter
if [ "$with_cluster" -eq 1 ]; then
  stage "local control plane: integration tests and kuttl suites" cluster_tests
fi

[ "$failed" -eq 0 ] || printf 'failed stage: %s\n' "${failed_names[@]}"
echo "stages: ${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
