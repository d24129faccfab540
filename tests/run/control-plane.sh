# shellcheck shell=bash
# The stages of tests/run.sh around the local control plane (tests/cluster): its start in the
# background and the wait for it, the stages that use it but are not kuttl suites (Helm, the
# integration tests, Krew, the image, the release), its end, and the benchmarks' and the demo's
# control planes of their own. Each stage that needs it fails (rather than being skipped) when it
# is not up, so that a broken start cannot pass for a green run. Sourced by tests/run.sh, never
# executed; uses REPO and RESTARTER_CLUSTER, TSAN_OPTIONS_CI (tests/run/builds.sh).

CLUSTER=tests/cluster/cluster.sh
CLUSTER_READY=0
IMAGE_ARCHIVE=$REPO/build/image/restarter.tar
IDENTITIES=$REPO/build/identities
RELEASE_BIN=$REPO/build/ci/cmd/restarter/restarter

# The control plane starts in the background while the lint and build stages run: on a new machine
# its Go build is the longest single step, and on a warm one its start (readiness waits) costs a
# minute of mostly idle cores. Its output goes to a log; wait_for_cluster shows it on failure.
CLUSTER_LOG=$REPO/build/logs/cluster-up.log
CLUSTER_PID=""
CLUSTER_STARTED=0
# The benchmarks' smoke stage brings up a control plane of its own (bench_smoke, below).
BENCH_CLUSTER=$RESTARTER_CLUSTER-bench
BENCH_CLUSTER_STARTED=0
start_cluster_in_background() {
  mkdir -p "$(dirname "$CLUSTER_LOG")"
  # With the real node (containerd, runc, CNI, kubelet, kube-proxy; tainted, so only the suites
  # that ask for it put pods there) for the suites that run restarter's image.
  # Then kube-router's policy controller is built (cached; about 2 minutes on a new machine), for
  # the netpol stage, which starts it.
  { RESTARTER_CLUSTER_REAL_NODE=1 "$CLUSTER" up && "$CLUSTER" build-tools kuberouter >/dev/null; } \
    >"$CLUSTER_LOG" 2>&1 &
  CLUSTER_PID=$!
  CLUSTER_STARTED=1
}

# The run's exit (a failed stage, Ctrl-C, CI's kill): the control plane goes down, and the
# benchmarks' own if a killed smoke run left it (tests/bench/smoke.sh takes it down itself).
# Idempotent: nothing to do when the "local control plane: down" stage already ran.
stop_control_planes() {
  if [[ -n $CLUSTER_PID ]]; then
    kill "$CLUSTER_PID" 2>/dev/null || true
    wait "$CLUSTER_PID" 2>/dev/null || true
  fi
  ((CLUSTER_STARTED)) && { "$CLUSTER" down >/dev/null 2>&1 || true; }
  ((BENCH_CLUSTER_STARTED)) && { RESTARTER_CLUSTER=$BENCH_CLUSTER "$CLUSTER" down >/dev/null 2>&1 || true; }
  return 0
}

wait_for_cluster() {
  local up_start=$SECONDS rc=0
  wait "$CLUSTER_PID" || rc=$?
  CLUSTER_PID=""  # finished: stop_control_planes must not wait for it again
  if ((rc != 0)); then
    echo "the control plane did not come up (exit $rc); its log ($CLUSTER_LOG):"
    tail -n 60 "$CLUSTER_LOG"
    "$CLUSTER" down >/dev/null 2>&1 || true
    return 1
  fi
  echo "(control plane up; waited $((SECONDS - up_start)) s for it after the builds)"
  # The suites' serve-controller and serve-webhook run as the manifests' ServiceAccounts (tokens
  # from the TokenRequest API), so passing suites prove the install's RBAC sufficient.
  if ! { "$CLUSTER" exec -- kuttl/lib/identity.sh install-rbac &&
         "$CLUSTER" exec -- kuttl/lib/identity.sh kubeconfig restarter-controller "$IDENTITIES/controller.kubeconfig" &&
         "$CLUSTER" exec -- kuttl/lib/identity.sh kubeconfig restarter-webhook "$IDENTITIES/webhook.kubeconfig"; }; then
    echo "cannot set up the manifests' ServiceAccounts"
    return 1
  fi
  CLUSTER_READY=1
}

need_cluster() {
  ((CLUSTER_READY)) || { echo "the control plane is not up (see the stage that started it)"; return 1; }
}

# integration_tests BUILD_DIR [ENV...]: the integration tests of one build, inside the namespace.
integration_tests() {
  need_cluster || return 1
  local dir=$1; shift
  if grep -q 'Total Tests: 0' <<<"$(ctest --test-dir "$dir" -N -L integration)"; then
    echo "no integration tests are registered in $dir"
    return 1
  fi
  env "$@" "$CLUSTER" exec -- ctest --test-dir "$dir" -L integration --output-on-failure
}
integration_tests_tsan() { integration_tests build/tsan "TSAN_OPTIONS=$TSAN_OPTIONS_CI"; }

# The Helm chart: lint, the defaults render manifests/, the schema refuses wrong types, the
# values table of docs/install.md (offline, with the control plane's helm and kubectl; seconds).
helm_check() {
  need_cluster || return 1
  "$CLUSTER" exec -- tests/check-helm.sh
}

krew_test() {
  need_cluster || return 1
  "$CLUSTER" exec -- krew/test-install.sh
}

# The image users build: the Dockerfile itself, with buildah (no daemon, no registry; base images
# made from Debian's packages), smoke-tested and exported for the real node.
build_image() { tests/image/build.sh --output "$IMAGE_ARCHIVE"; }

# That image loaded into the real node's containerd, where the manifests' `restarter:<tag>` finds
# it (imagePullPolicy IfNotPresent: no registry is asked).
load_image() {
  need_cluster || return 1
  [[ -f $IMAGE_ARCHIVE ]] || { echo "no image archive at $IMAGE_ARCHIVE (did the image stage fail?)"; return 1; }
  "$CLUSTER" load-image "$IMAGE_ARCHIVE"
}

# The release of this checkout (docs/release.md): what users would install, built here (both
# platforms, and the previous release from its commit, named for the real node's registry) and
# published into the real node's registry, then verified, installed and upgraded from there
# (release_suites, tests/run/kuttl.sh).
release_build() {
  tests/release/refusals.sh && tests/release/stage.sh build
}
release_publish() {
  need_cluster || return 1
  "$CLUSTER" exec -- tests/release/stage.sh publish
}

cluster_down() {
  need_cluster || return 1
  "$CLUSTER" down
}

# Every benchmark that uses the local control plane, at its smallest size, on a fresh control
# plane of its own ("<this>-bench"; tests/bench/smoke.sh brings it up and down): a benchmark that
# cannot start or cannot measure is a failed test. A leftover of a killed run is taken down first
# (smoke.sh refuses a cluster that is already up).
bench_smoke() {
  BENCH_CLUSTER_STARTED=1
  RESTARTER_CLUSTER=$BENCH_CLUSTER "$CLUSTER" down >/dev/null 2>&1 || true
  RESTARTER_CLUSTER=$BENCH_CLUSTER tests/bench/smoke.sh build/ci
}

# The demo (cmd/demo.sh) with this build, on a control plane of its own ("<this>-demo").
demo_test() { env RESTARTER_BIN="$RELEASE_BIN" tests/demo/test-demo.sh; }
