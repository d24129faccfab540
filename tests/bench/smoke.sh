#!/usr/bin/env bash
# The benchmarks that run against the local control plane, each at its smallest size, on a fresh
# control plane of their own: a benchmark that cannot start or cannot measure is a failed test
# (tests/run.sh, stage "benchmarks at their smallest size"; docs/testing.md). Not a measurement:
# the figures are printed, never judged, and nothing is written to tests/bench/results (scale.sh
# writes its results file into a scratch directory, removed at the end).
#
# Usage: tests/bench/smoke.sh [BUILD_DIR]
#   BUILD_DIR (default build/ci, what tests/run.sh builds) holds restarter, controller_bench and
#   initial_sync_bench (built there when missing). The control plane is $RESTARTER_CLUSTER (default
#   bench-smoke), brought up fresh (`up` makes new etcd data: no namespace of an earlier run, not
#   even restarter-system, which the benchmarks of serve-controller's defaults create as an install
#   does), without the audit log as docs/benchmarks.md brings the benchmarks' cluster up; refused
#   when it is already up (a cluster in use is never taken down); brought down at the end, also
#   when a benchmark fails or the run is interrupted.
#
# What runs, each bounded (BENCH_WAIT_SECONDS=120 for each of its waits, and `timeout` around it:
# 300 s, 900 s for Reloader's build):
#   scale.sh 5          5 StatefulSets, 50 ConfigMaps, 50 Secrets: caches synced, every
#                       baseline recorded, 3 s idle, 5 ConfigMap updates measured (the same path as
#                       controller/controller_bench.sh, which it runs), then Reloader on the same
#                       population (SCALE_TOOLS; reloader/build.sh builds it first, its own step):
#                       its first reload and 5 updates; a results file for each, Reloader's
#                       without "failed"
#   opt_in.sh 5         5 running StatefulSets labeled at once, baseline then --roll-on-opt-in
#   content_aware.sh    5 StatefulSets, 50 ConfigMaps and 50 Secrets, 5 relabels, no idle
#   reloader_memory.sh  5 unlabeled Deployments, 50 ConfigMaps, no idle
#   initial_sync.sh     1 run over 10 ConfigMaps and 10 Secrets
#   ondelete.sh 2       a 2-replica StatefulSet rolled under OnDelete, then under RollingUpdate
#   rollout_queue.sh 3 1
#                       3 Deployments rolled by one shared change under --max-concurrent-rollouts 1
#   webhook.sh          part 2 only (part 1 needs wrk, which CI does not install): 1 run of 5
#                       creations per kind, 4 idle and 2 slow-header connections held, 1 at the
#                       health port; fails when the apiserver counted no call of the webhook
#   webhook_amplifier.sh
#                       1 run of 3 creations quiet and 3 under an amplifier of 2 loops over 50 names
# Left out: the benchmarks that need no control plane (webhook_limits.sh and fair_admission.sh, wrk
# and minutes of attacks; release.sh, a whole release of both platforms per run).
# Exit status: 0 when every benchmark ran to its end, 1 otherwise (the failed ones named last).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$repo/build/ci}
[[ $build == /* ]] || build=$PWD/$build
export RESTARTER_CLUSTER=${RESTARTER_CLUSTER:-bench-smoke}
# Only the sizes given here: no BENCH_RESULTS(_DIR) of the caller's shell may send a results file
# into tests/bench/results, no BENCH_NAMESPACE or BENCH_CONTROLLER_FLAGS change what runs.
while read -r variable; do unset "$variable"; done < <(compgen -e | grep '^BENCH_')
export RESTARTER_BIN=$build/cmd/restarter/restarter
export BENCH_WAIT_SECONDS=${BENCH_WAIT_SECONDS:-120}
cluster=$repo/tests/cluster/cluster.sh
bench=$repo/tests/bench
# Each benchmark's whole run, at most (its own waits are bounded by BENCH_WAIT_SECONDS first).
limit=300

[[ -x $RESTARTER_BIN ]] || { echo "smoke: no restarter binary at $RESTARTER_BIN (build $build first)" >&2; exit 1; }
if "$cluster" status >/dev/null 2>&1; then
  echo "smoke: cluster $RESTARTER_CLUSTER is already up; the smoke run needs a fresh one (down it, or set RESTARTER_CLUSTER)" >&2
  exit 1
fi
scratch=$(mktemp -d)
started=0
current=""
# A benchmark still running (interrupted) is stopped first, so that its own exit trap stops the
# controller or webhook it started while the control plane is still there.
finish() {
  if [[ -n $current ]]; then
    kill -TERM "$current" 2>/dev/null
    wait "$current" 2>/dev/null
  fi
  ((started)) && "$cluster" down >/dev/null 2>&1
  rm -rf "$scratch"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

run_start=$SECONDS
started=1
RESTARTER_CLUSTER_AUDIT=off "$cluster" up >"$scratch/up.log" 2>&1 ||
  { tail -n 40 "$scratch/up.log"; echo "smoke: the control plane did not come up" >&2; exit 1; }
echo "control plane $RESTARTER_CLUSTER up in $((SECONDS - run_start)) s"

failed=()
# smoke NAME CMD...: one benchmark; its output indented once it is done, then its time and result.
count=0
smoke() {
  local name=$1 start=$SECONDS rc=0 log
  shift
  count=$((count + 1))
  log=$scratch/$count.log
  echo "=== $name"
  timeout -k 10 "$limit" "$@" >"$log" 2>&1 &
  current=$!
  wait "$current" || rc=$?
  current=""
  sed 's/^/    /' "$log"
  if ((rc == 0)); then
    echo "=== $name: ran in $((SECONDS - start)) s"
  else
    echo "=== $name: FAILED (exit $rc) after $((SECONDS - start)) s"
    failed+=("$name")
  fi
}

# Its first build on a machine downloads and compiles Reloader's modules (client-go and more):
# minutes on two cores, so a longer bound than a benchmark's; later runs find it cached.
limit=900 smoke "Reloader built from its Go module" "$bench/reloader/build.sh"
smoke "scale.sh at 5 StatefulSets, restarter and Reloader" env BENCH_BUILD_DIR="$build" UPDATES=5 IDLE=3 \
  SCALE_TOOLS="restarter reloader" "$bench/scale.sh" "$scratch/results" 5
smoke "scale.sh results files" python3 -c 'import json, sys
for path in sys.argv[1:]:
    result = json.load(open(path))
    assert "failed" not in result and result["latency_ms"], (path, result.get("failed"))' \
  "$scratch/results/scale-5.json" "$scratch/results/reloader-scale-5.json"
smoke "opt_in.sh at 5 StatefulSets" "$bench/opt_in.sh" "$RESTARTER_BIN" 5
smoke "content_aware.sh at 5 StatefulSets" "$bench/content_aware.sh" "$RESTARTER_BIN" 5 50 5 0
smoke "reloader_memory.sh at 5 Deployments" "$bench/reloader_memory.sh" "$RESTARTER_BIN" 5 50 0
smoke "initial_sync.sh at 10 objects" "$bench/initial_sync.sh" "$build" 1 10
smoke "ondelete.sh at 2 replicas" "$bench/ondelete.sh" 2
smoke "rollout_queue.sh at 3 Deployments, N=1" "$bench/rollout_queue.sh" 3 1
smoke "webhook.sh part 2, 5 creations per kind" "$cluster" exec -- env SKIP_SERVER_ALONE=1 RUNS=1 RATE=5 \
  E2E_SECONDS=1 HOSTILE_IDLE=4 HOSTILE_SLOW=2 HOSTILE_HEALTH_SLOW=1 "$bench/webhook.sh"
smoke "webhook_amplifier.sh, 3 creations" "$cluster" exec -- env RUNS=1 COUNT=3 LOOPS=2 NAMES=50 \
  "$bench/webhook_amplifier.sh"

echo "smoke: $((SECONDS - run_start)) s in all, the control plane's up included (its down follows)"
if ((${#failed[@]})); then
  printf 'smoke: failed: %s\n' "${failed[@]}"
  exit 1
fi
echo "smoke: every benchmark ran"
