#!/usr/bin/env bash
# The scale curve of serve-controller: controller/controller_bench.sh at 1,000, 5,000
# and 10,000 labeled StatefulSets with 0 replicas (the controller's work does not depend on pods,
# and 10,000 pods would keep the scheduler busy on the two fake nodes), each referencing 10
# ConfigMaps and 10 Secrets of 1 KiB (so 21,000, 105,000 and 210,000 cached objects; 50,000
# StatefulSets make the million, 1,050,000, given as a size), one namespace, growing one
# population: each size creates only the objects the previous one did not. At each size: the controller's time from start
# to "caches synced", its steady RSS after IDLE seconds, and the latency from a ConfigMap update to
# the new template annotation over UPDATES updates at 5/s with --debounce 0. A measurement, not a
# test: it prints figures, writes RESULTS_DIR/scale-<statefulsets>.json for tests/bench/plot.py,
# and fails (non-zero) only when it cannot measure.
#
# Usage (the cluster must be up: tests/cluster/cluster.sh up; for figures without the audit log's
# cost, up with RESTARTER_CLUSTER_AUDIT=off):
#   tests/bench/scale.sh [RESULTS_DIR] [SIZES...]
# Defaults: tests/bench/results, sizes 1000 5000 10000. Env: UPDATES (default 200; at most the
# smallest size), IDLE (30), BENCH_BUILD_DIR (default build/ci, what tests/run.sh builds: its
# controller_bench and restarter), RESTARTER_BIN, RESTARTER_CLUSTER and BENCH_WAIT_SECONDS as for
# controller_bench.sh, which says what "settled" means with the defaults (a baseline per
# StatefulSet, no rollout) and creates the namespace restarter-system when missing, as an install
# does. The controller's flags are the defaults except those controller_bench.sh sets
# (--debounce 0) and --max-writes-per-second 1000 --write-burst 1000: at first look the controller
# records each fresh StatefulSet's baseline, a metadata-only write that restarts nothing but
# passes the same write limiter as a rollout, so the default 10 writes/s would take 100 s to
# settle 1,000 fresh StatefulSets and 1,000 s for 10,000; it changes no figure measured after that
# (one write per change, 5 changes/s).
# SCALE_POPULATION=realistic measures the other shape instead: at S StatefulSets, 50*S ConfigMaps
# and 50*S Secrets of which each StatefulSet references 3 and 2, so 5 % of the objects are
# referenced (10,000 StatefulSets: 1,000,000 objects, 50,000 referenced), as in a cluster where
# most ConfigMaps and Secrets are Helm releases', service accounts' and other operators'; results
# in RESULTS_DIR/scale-realistic-<statefulsets>.json, namespace restarter-scale-realistic. At a
# million objects etcd needs a larger quota: up the cluster with
# RESTARTER_CLUSTER_ETCD_QUOTA_BYTES=8589934592 (docs/benchmarks.md, "The controller at scale").
# SCALE_TOOLS="restarter reloader" (default restarter) measures each tool in turn at each size, on
# the same population: Reloader with its default flags (controller_bench.sh, BENCH_TOOL=reloader),
# results in RESULTS_DIR/reloader-<name>.json, RELOADER_UPDATES updates (default UPDATES; Reloader
# lists every workload of the namespace for each change, so at 50,000 StatefulSets a change takes
# seconds and fewer updates keep the run short). A Reloader run that ends in a figure of failure
# (killed by its memory cgroup, never reloading: controller_bench.sh's exit 3, recorded in its
# results file) does not stop the sizes after it; any other failure does.
# The population is left in place (namespace restarter-scale; BENCH_NAMESPACE names another).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
results=${1:-$repo/tests/bench/results}
shift || true
sizes=("$@")
((${#sizes[@]})) || sizes=(1000 5000 10000)
mkdir -p "$results"
realistic=0
case ${SCALE_POPULATION:-every-referenced} in
  realistic) realistic=1 ;;
  every-referenced) ;;
  *) echo "scale.sh: SCALE_POPULATION is realistic or every-referenced, not '$SCALE_POPULATION'" >&2; exit 2 ;;
esac
for sts in "${sizes[@]}"; do
  if ((realistic)); then
    per=50 name=scale-realistic-$sts refs=(BENCH_CM_REFS=3 BENCH_SECRET_REFS=2) ns=${BENCH_NAMESPACE:-restarter-scale-realistic}
  else
    per=10 name=scale-$sts refs=() ns=${BENCH_NAMESPACE:-restarter-scale}
  fi
  echo "=== scale: $sts StatefulSets, $((sts * per)) ConfigMaps, $((sts * per)) Secrets; load: $(cut -d' ' -f1-3 /proc/loadavg)"
  skip_populate=
  for tool in ${SCALE_TOOLS:-restarter}; do
    case $tool in
      restarter) results_file=$results/$name.json updates=${UPDATES:-200} ;;
      reloader) results_file=$results/reloader-$name.json updates=${RELOADER_UPDATES:-${UPDATES:-200}} ;;
      *) echo "scale.sh: SCALE_TOOLS lists restarter and reloader, not '$tool'" >&2; exit 2 ;;
    esac
    echo "=== $tool"
    # The population is created once per size, by the first tool's run.
    env "${refs[@]}" BENCH_SKIP_POPULATE="$skip_populate" BENCH_TOOL="$tool" BENCH_NAMESPACE="$ns" BENCH_REPLICAS=0 BENCH_STATEFULSETS="$sts" BENCH_CONFIGMAPS=$((sts * per)) \
      BENCH_SECRETS=$((sts * per)) BENCH_CONTROLLER_FLAGS="--max-writes-per-second 1000 --write-burst 1000 ${BENCH_CONTROLLER_FLAGS:-}" \
      BENCH_RESULTS="$results_file" \
      "$repo/tests/bench/controller/controller_bench.sh" "${BENCH_BUILD_DIR:-$repo/build/ci}" "$updates" "${IDLE:-30}" ||
      { rc=$? && [[ $tool == reloader && $rc == 3 ]]; }
    skip_populate=1
  done
done
