#!/usr/bin/env bash
# serve-controller's memory with and without --reloader-annotations, on the local control plane,
# over a population of workloads that nothing opts in: DEPLOYMENTS unlabeled Deployments without
# Reloader's annotations (replicas 0), each referencing 10 of OBJECTS ConfigMaps through envFrom, in
# one namespace. Without the flag the controller lists no workload (label selector); with it every
# Deployment is listed and kept as a stub (slimWorkload; docs/architecture.md, "Reloader
# annotations"). A measurement, not a test: it prints the time to "caches synced", the cache sizes
# and the RSS after IDLE seconds, for each mode.
#
# Usage (the cluster must be up: tests/cluster/cluster.sh up):
#   tests/bench/reloader_memory.sh [RESTARTER_BIN] [DEPLOYMENTS] [OBJECTS] [IDLE]
# Defaults: build/ci/cmd/restarter/restarter, 2000, 2000, 15. RESTARTER_CLUSTER selects the
# cluster. The namespace restarter-reloader-bench is deleted first and left in place after; the
# namespace restarter-system is created when missing, as an install does (the digest key's).
# BENCH_WAIT_SECONDS (default 1800) bounds the wait for "caches synced".
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/ci/cmd/restarter/restarter}
deployments=${2:-2000}
objects=${3:-2000}
idle=${4:-15}
ns=restarter-reloader-bench
cluster="$repo/tests/cluster/cluster.sh"
k() { "$cluster" exec -- kubectl "$@"; }
work=$(mktemp -d)
# shellcheck source=SCRIPTDIR/lib.sh
source "$repo/tests/bench/lib.sh"
bench_install_namespace k

echo "== populate: $deployments unlabeled Deployments, $objects ConfigMaps in $ns; load: $(uptime)"
k delete namespace "$ns" --ignore-not-found --wait=true >/dev/null
k create namespace "$ns" >/dev/null
{
  for ((i = 0; i < objects; i++)); do
    printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {v: "%d"}\n' "$i" "$i"
  done
  for ((d = 0; d < deployments; d++)); do
    printf -- '---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app-%d}\n' "$d"
    printf 'spec:\n  replicas: 0\n  selector: {matchLabels: {app: app-%d}}\n' "$d"
    printf '  template:\n    metadata: {labels: {app: app-%d}}\n    spec:\n      containers:\n        - name: app\n          image: registry.invalid/app:1\n          envFrom:\n' "$d"
    for ((j = 0; j < 10; j++)); do printf '            - configMapRef: {name: cm-%d}\n' $(((d * 10 + j) % objects)); done
  done
} >"$work/population.yaml"
start=$SECONDS
k -n "$ns" create -f "$work/population.yaml" >/dev/null
echo "populated in $((SECONDS - start)) s"

pid=
stop_controller() {
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  pid=
}
trap stop_controller EXIT
metrics() { "$cluster" exec -- curl -fsS http://127.0.0.1:18092/metrics; }
run() {
  local mode=$1 t0
  shift
  t0=$(date +%s%N)
  "$cluster" exec -- bash -c "exec '$bin' serve-controller --namespace '$ns' --leader-elect=false \
    --metrics-bind-address 127.0.0.1:18092 --health-probe-bind-address 127.0.0.1:18093 $* >'$work/$mode.log' 2>&1" &
  pid=$!
  bench_wait_synced "$work/$mode.log" "$pid"
  echo "$mode: caches synced after $(( ($(date +%s%N) - t0) / 1000000 )) ms (includes process start)"
  sleep "$idle"
  echo "$mode: $(metrics | grep '^restarter_controller_cache_objects' | tr '\n' ' ')"
  echo "$mode: applies: $(metrics | awk 'index($0, "restarter_controller_writes_total") == 1 {s += $2} END {print s + 0}')"
  echo "$mode: after ${idle} s: $(awk '/VmRSS|VmHWM/ {printf "%s %s kB  ", $1, $2}' "/proc/$(pgrep -f "serve-controller --namespace $ns" | head -1)/status")"
  stop_controller
}
echo "== without --reloader-annotations"
run plain
echo "== with --reloader-annotations"
run reloader --reloader-annotations
echo "(namespace $ns left in place; logs: $work)"
