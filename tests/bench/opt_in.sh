#!/usr/bin/env bash
# Opting running workloads in (docs/behaviour.md "Restart only when pods need it"), on the local
# control plane: STATEFULSETS unlabeled StatefulSets (replicas 0: revisions without pods), each
# referencing 2 ConfigMaps, already running; then `kubectl label` labels them all at once while
# serve-controller runs. Twice, each in a fresh namespace:
#   1. default (baseline): seconds from the label until every StatefulSet carries its baseline,
#      StatefulSets whose generation moved (restarts), the controller's applies and Events;
#   2. --roll-on-opt-in (the behaviour before the baseline): seconds until every template is
#      annotated, generations moved, applies.
# A measurement, not a test: it prints figures.
#
# Usage (the cluster must be up: tests/cluster/cluster.sh up):
#   tests/bench/opt_in.sh [RESTARTER_BIN] [STATEFULSETS]
# Defaults: build/ci/cmd/restarter/restarter, 500. RESTARTER_CLUSTER selects the cluster. The
# namespaces restarter-opt-in-bench-{baseline,roll} are deleted first and left in place after; the
# namespace restarter-system is created when missing, as an install does (the digest key's).
# BENCH_WAIT_SECONDS (default 1800) bounds each wait: a run that never gets there fails.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/ci/cmd/restarter/restarter}
sts=${2:-500}
cluster="$repo/tests/cluster/cluster.sh"
k() { "$cluster" exec -- kubectl "$@"; }
work=$(mktemp -d)
# shellcheck source=SCRIPTDIR/lib.sh
source "$repo/tests/bench/lib.sh"
bench_install_namespace k

pid=
stop_controller() {
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  pid=
}
trap stop_controller EXIT
metric() { "$cluster" exec -- curl -fsS http://127.0.0.1:18092/metrics | awk -v m="$1" 'index($0, m) == 1 {print $2; f=1} END {if (!f) print 0}'; }

# populate NS: the ConfigMaps and the unlabeled StatefulSets, created and observed (generation 1).
populate() {
  local ns=$1
  k delete namespace "$ns" --ignore-not-found --wait=true >/dev/null
  k create namespace "$ns" >/dev/null
  {
    for ((s = 0; s < sts; s++)); do
      printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: mounted-%d}\ndata: {v: "1"}\n' "$s"
      printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: env-%d}\ndata: {V: "1"}\n' "$s"
      printf -- '---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: sts-%d}\n' "$s"
      printf 'spec:\n  replicas: 0\n  serviceName: sts-%d\n  selector: {matchLabels: {app: sts-%d}}\n' "$s" "$s"
      printf '  template:\n    metadata: {labels: {app: sts-%d}}\n    spec:\n' "$s"
      printf '      volumes: [{name: config, configMap: {name: mounted-%d}}]\n' "$s"
      printf '      containers:\n        - name: app\n          image: registry.invalid/app:1\n'
      printf '          envFrom: [{configMapRef: {name: env-%d}}]\n' "$s"
    done
  } >"$work/$ns.yaml"
  k -n "$ns" create -f "$work/$ns.yaml" >/dev/null
}

# count NS JSONPATH-TEST: StatefulSets of NS for which jq's TEST holds.
count() { k -n "$1" get statefulsets -o json | jq "[.items[] | select($2)] | length"; }

# run NAME NS DONE-TEST [FLAGS...]
run() {
  local name=$1 ns=$2 done_test=$3 t0 took
  shift 3
  populate "$ns"
  "$cluster" exec -- bash -c "exec '$bin' serve-controller --namespace '$ns' --debounce 0 \
    --max-writes-per-second 1000 --write-burst 1000 --leader-elect=false $* \
    --metrics-bind-address 127.0.0.1:18092 --health-probe-bind-address 127.0.0.1:18093 >'$work/$name.log' 2>&1" &
  pid=$!
  bench_wait_synced "$work/$name.log" "$pid"
  t0=$(date +%s%N)
  k -n "$ns" label statefulsets --all restarter.stackable.tech/enabled=true >/dev/null
  all_done() { [[ $(count "$ns" "$done_test") == "$sts" ]]; }
  bench_until "$name: every StatefulSet of $ns done" all_done
  took=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "$name: $sts StatefulSets opted in, done after $took ms (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  echo "$name: generation moved (restarts): $(count "$ns" '.metadata.generation > 1') of $sts;" \
       "applies: $(metric 'restarter_controller_writes_total{resource="statefulsets",operation="apply"}');" \
       "events: $(metric 'restarter_controller_writes_total{resource="events",operation="create"}')"
  stop_controller
}

echo "== $sts running StatefulSets labeled at once; load: $(uptime)"
run baseline restarter-opt-in-bench-baseline '.metadata.annotations["restarter.stackable.tech/baseline"] // "" | length > 0'
run roll-on-opt-in restarter-opt-in-bench-roll \
  '.spec.template.metadata.annotations["configmap.restarter.stackable.tech/env-" + (.metadata.name | ltrimstr("sts-"))] // "" | length > 0' \
  --roll-on-opt-in
echo "(namespaces left in place; logs: $work)"
