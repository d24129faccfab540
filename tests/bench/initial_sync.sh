#!/usr/bin/env bash
# Benchmark: initial metadata-only sync of 10,000 ConfigMaps and 10,000 Secrets, against
# `kubectl get --raw` of the same lists (full objects, one request each) on the same cluster.
# A measurement, not a test: it prints figures and never fails on them.
#
# Usage (the cluster must be up; runs everything inside its network namespace):
#   tests/bench/initial_sync.sh [BUILD_DIR] [RUNS] [COUNT]
# Defaults: build/bench (built RelWithDebInfo if missing), 5 runs, 10000 objects of each kind.
# RESTARTER_CLUSTER selects the cluster as for tests/cluster/cluster.sh.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$repo/build/bench}
runs=${2:-5}
count=${3:-10000}
ns=restarter-bench
cluster="$repo/tests/cluster/cluster.sh"

if [[ ! -x $build/tests/bench/initial_sync_bench ]]; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" --target initial_sync_bench >/dev/null
bench="$build/tests/bench/initial_sync_bench"

"$cluster" exec -- "$bench" populate "$ns" "$count"
# Warm-up (the apiserver's first list after writes is slower), not counted.
"$cluster" exec -- "$bench" sync "$ns" both >/dev/null

measure() {  # measure LABEL CMD...
  local label=$1; shift
  for ((i = 1; i <= runs; i++)); do
    printf '%-44s run %d: %s\n' "$label" "$i" "$("$cluster" exec -- "$@" | tail -1)"
  done
}
measure "restarter sync configmaps (metadata-only)" "$bench" sync "$ns" configmaps
measure "restarter sync secrets (metadata-only)" "$bench" sync "$ns" secrets
measure "restarter sync both (metadata-only)" "$bench" sync "$ns" both
measure "restarter sync both, managedFields dropped" "$bench" sync-lean "$ns" both
measure "kubectl get --raw configmaps" "$bench" run -- kubectl get --raw "/api/v1/namespaces/$ns/configmaps"
measure "kubectl get --raw secrets" "$bench" run -- kubectl get --raw "/api/v1/namespaces/$ns/secrets"
echo "(namespace $ns is left in place for further runs; delete it with kubectl delete namespace $ns)"
