#!/usr/bin/env bash
# serve-controller with --content-aware=all next to --content-aware=off in the same run,
# on the local control plane, smaller than controller/controller_bench.sh so it fits a shared
# 2-core machine: STATEFULSETS labeled StatefulSets (replicas 0: revisions without pods), each
# referencing 10 ConfigMaps and 10 Secrets through envFrom, of OBJECTS ConfigMaps and OBJECTS
# Secrets of 1 KiB each, one namespace. A measurement, not a test: it prints figures.
#   1. all, fresh population: time from start to "caches synced", the record of every StatefulSet
#      (with the default flags a baseline and the content record, one metadata-only write each:
#      created unannotated without the webhook, they are taken as opted in), RSS after IDLE
#      seconds once the controller is quiet (settle);
#   2. METADATA metadata-only updates (a label on that many ConfigMaps): API writes by the
#      controller (restarter_controller_writes_total) before and after, and how many it counted
#      as content unchanged;
#   3. off, same objects: time to "caches synced", RSS after IDLE seconds (and, as off does, the
#      writes the relabels of step 2 now cause).
#
# Usage (the cluster must be up: tests/cluster/cluster.sh up):
#   tests/bench/content_aware.sh [RESTARTER_BIN] [STATEFULSETS] [OBJECTS] [METADATA] [IDLE]
# Defaults: build/ci/cmd/restarter/restarter, 200, 2000, 200, 20. RESTARTER_CLUSTER selects the
# cluster. The namespace restarter-content-bench is deleted first and left in place after; the
# namespace restarter-system is created when missing, as an install does (the digest key's).
# BENCH_WAIT_SECONDS (default 1800) bounds each wait: a controller that never syncs fails the run.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$repo/build/ci/cmd/restarter/restarter}
sts=${2:-200}
objects=${3:-2000}
metadata=${4:-200}
idle=${5:-20}
ns=restarter-content-bench
cluster="$repo/tests/cluster/cluster.sh"
k() { "$cluster" exec -- kubectl "$@"; }
work=$(mktemp -d)
# shellcheck source=SCRIPTDIR/lib.sh
source "$repo/tests/bench/lib.sh"
bench_install_namespace k

echo "== populate: $sts StatefulSets, $objects ConfigMaps and $objects Secrets of 1 KiB in $ns; load: $(uptime)"
k delete namespace "$ns" --ignore-not-found --wait=true >/dev/null
k create namespace "$ns" >/dev/null
kib=$(head -c 768 /dev/urandom | base64 -w0 | head -c 1024)
{
  for ((i = 0; i < objects; i++)); do
    printf -- '---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%d}\ndata: {v: "%s"}\n' "$i" "$kib"
    printf -- '---\napiVersion: v1\nkind: Secret\nmetadata: {name: secret-%d}\nstringData: {v: "%s"}\n' "$i" "$kib"
  done
} >"$work/objects.yaml"
per=$((objects / sts))
{
  for ((s = 0; s < sts; s++)); do
    printf -- '---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: sts-%d, labels: {restarter.stackable.tech/enabled: "true"}}\n' "$s"
    printf 'spec:\n  replicas: 0\n  serviceName: sts-%d\n  selector: {matchLabels: {app: sts-%d}}\n' "$s" "$s"
    printf '  template:\n    metadata: {labels: {app: sts-%d}}\n    spec:\n      containers:\n        - name: app\n          image: registry.invalid/app:1\n          envFrom:\n' "$s"
    for ((j = 0; j < 10; j++)); do
      printf '            - configMapRef: {name: cm-%d}\n            - secretRef: {name: secret-%d}\n' \
        $(((s * per + j) % objects)) $(((s * per + j) % objects))
    done
  done
} >"$work/statefulsets.yaml"
start=$SECONDS
k -n "$ns" create -f "$work/objects.yaml" >/dev/null
k -n "$ns" create -f "$work/statefulsets.yaml" >/dev/null
echo "populated in $((SECONDS - start)) s"

pid=
stop_controller() {
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  pid=
}
trap stop_controller EXIT
metric() { "$cluster" exec -- curl -fsS http://127.0.0.1:18090/metrics | awk -v m="$1" 'index($0, m) == 1 {print $2; f=1} END {if (!f) print 0}'; }
# start MODE: runs the controller, prints the time to "caches synced"
start_controller() {
  local mode=$1 t0
  t0=$(date +%s%N)
  "$cluster" exec -- bash -c "exec '$bin' serve-controller --namespace '$ns' --content-aware=$mode --debounce 0 \
    --min-rollout-interval 0 --max-writes-per-second 1000 --write-burst 1000 --leader-elect=false \
    --metrics-bind-address 127.0.0.1:18090 --health-probe-bind-address 127.0.0.1:18091 >'$work/$mode.log' 2>&1" &
  pid=$!
  bench_wait_synced "$work/$mode.log" "$pid"
  echo "$mode: caches synced after $(( ($(date +%s%N) - t0) / 1000000 )) ms (includes process start)"
}
rss() { awk '/VmRSS|VmHWM/ {printf "%s %s kB  ", $1, $2}' "/proc/$(pgrep -f "serve-controller --namespace $ns" | head -1)/status"; echo; }
reconciles() {
  "$cluster" exec -- curl -fsS http://127.0.0.1:18090/metrics \
    | awk 'index($0, "restarter_controller_reconciles_total") == 1 {s += $2} END {print s + 0}'
}
# Wait until the controller is quiet: queue empty, no write and no reconcile for 4 s. Its own
# writes are not the end of the work: the StatefulSet controller then updates the status of every
# rolled StatefulSet (at kube-controller-manager's own client rate), and each update is a
# reconcile of the OnDelete roll; the memory a burst of work frees is returned once it is over
# (runtime/trim_schedule.hpp). Bounded: 600 s.
settle() {
  local last=-1 now started=$SECONDS
  while ((SECONDS - started < 600)); do
    now="$(metric 'restarter_controller_writes_total{resource="statefulsets",operation="apply"}') $(reconciles)"
    [[ $now == "$last" && $(metric restarter_controller_queue_depth) == 0 ]] && break
    last=$now
    sleep 4
  done
  echo "quiet after $((SECONDS - started)) s (reconciles so far: $(reconciles))"
}

echo "== 1. --content-aware=all"
start_controller all
settle
echo "all: applies at start: $(metric 'restarter_controller_writes_total{resource="statefulsets",operation="apply"}')"
sleep "$idle"
echo "all: after ${idle} s idle: $(rss)"
echo "== 2. $metadata metadata-only updates (a label on cm-0..cm-$((metadata - 1)))"
before=$(metric 'restarter_controller_writes_total{resource="statefulsets",operation="apply"}')
names=$(for ((i = 0; i < metadata; i++)); do printf 'cm-%d ' "$i"; done)
# shellcheck disable=SC2086
k -n "$ns" label configmap $names bench=relabeled --overwrite >/dev/null
unchanged_counted() { [[ $(metric 'restarter_controller_content_unchanged_total{resource="configmaps"}') -ge $metadata ]]; }
bench_until "$metadata metadata-only updates counted as content unchanged" unchanged_counted
settle
after=$(metric 'restarter_controller_writes_total{resource="statefulsets",operation="apply"}')
echo "all: content unchanged counted: $(metric 'restarter_controller_content_unchanged_total{resource="configmaps"}'); applies caused by the updates: $((after - before)); restarts logged in total: $(grep -c 'restart triggered' "$work/all.log")"
echo "all: after the updates: $(rss)"
stop_controller
echo "== 3. --content-aware=off"
start_controller off
settle
echo "off: applies at start (the relabels of step 2 now roll, as commons-operator): $(metric 'restarter_controller_writes_total{resource="statefulsets",operation="apply"}')"
sleep "$idle"
echo "off: after ${idle} s idle: $(rss)"
stop_controller
echo "(namespace $ns left in place; logs: $work)"
