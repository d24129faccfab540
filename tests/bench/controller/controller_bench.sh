#!/usr/bin/env bash
# Benchmark of serve-controller on the local control plane:
#   1,000 labeled StatefulSets (1 replica each, pods faked by kwok), 10,000 ConfigMaps and 10,000
#   Secrets (each StatefulSet references 10 of each through envFrom), one namespace.
#   (a) latency from a ConfigMap update to the new template annotation, over UPDATES updates;
#   (b) API writes (the apiserver's apiserver_request_total) per change and at idle;
#   (c) the controller's steady-state RSS and CPU.
# A measurement, not a test: it prints figures, and fails (non-zero) only when it cannot measure.
#
# Usage (the cluster must be up: tests/cluster/cluster.sh up):
#   tests/bench/controller/controller_bench.sh [BUILD_DIR] [UPDATES] [IDLE_SECONDS]
# Defaults: build/bench (configured RelWithDebInfo if missing), 200 updates, 60 s idle.
# The cluster as an install leaves it: the namespace restarter-system is created when missing
# (an install creates it; serve-controller keeps its digest key there by default and creates the
# Secret at its first start; without the namespace it never becomes ready). Flags: the controller
# runs with the defaults a user gets except --debounce 0 (the default 1s window exists to merge a
# burst of changes into one rollout, so with it every latency is 1 s plus the figure measured here),
# --leader-elect=false and endpoints on fixed ports. So it records a baseline at first look: the
# StatefulSets are created unannotated and no webhook runs, which the controller cannot tell from
# running workloads being opted in, so it writes the versions their pods run with into the
# metadata annotation restarter.stackable.tech/baseline (one write each, nothing rolled) and
# no template annotation. "Synced and settled" is therefore: caches synced, then every StatefulSet
# has each of its references recorded, in its baseline or (once rolled) its template annotations
# (controller_bench wait-settled). The latency phase then measures the first change of each
# updated StatefulSet, which rolls it: the baseline is emptied and every template annotation
# written, the changed one with its new version. The default rollout hold (--min-rollout-interval
# 5m, with a 10 s floor after a rollout) holds a second change of a StatefulSet rolled moments
# before, so each update goes to another StatefulSet (a prime stride): UPDATES may not exceed the
# StatefulSets unless BENCH_CONTROLLER_FLAGS sets --min-rollout-interval (0 measures repeated
# changes without the hold). Each wait (caches synced, settled) is bounded by
# BENCH_WAIT_SECONDS (default 1800): a controller that never gets there fails the run. Updates are
# paced at one every BENCH_UPDATE_INTERVAL_MS (default 200: 5 changes/s, below the default write
# limit of 10/s; back-to-back updates would measure the limiter's spacing, not latency; 0 sends
# the next one as soon as the previous one is seen). Scale with env BENCH_STATEFULSETS /
# BENCH_CONFIGMAPS / BENCH_SECRETS; BENCH_SKIP_POPULATE=1 reuses the objects of an earlier run;
# BENCH_CONTROLLER_FLAGS adds controller flags (e.g. --max-writes-per-second 1000, to record the
# baselines of a large fresh population quickly: one write per StatefulSet at the default 10/s);
# RESTARTER_BIN runs that binary instead of building one.
# RESTARTER_CLUSTER selects the cluster, BENCH_NAMESPACE the namespace (default
# restarter-controller-bench). BENCH_OBJECT_BYTES sets the size of each ConfigMap's and
# Secret's one key (default 1024), BENCH_REPLICAS the replicas of each StatefulSet (default 1),
# BENCH_READS=keys makes the StatefulSets read that key through env key refs (key-level records)
# instead of envFrom (use another BENCH_NAMESPACE: a population keeps the StatefulSets it has).
# BENCH_CM_REFS and BENCH_SECRET_REFS: the ConfigMaps and Secrets each StatefulSet references
# (default: all of them shared out); the others are referenced by none (scale.sh's realistic
# population).
# BENCH_RESULTS=FILE also writes the figures and every latency as JSON (tests/bench/record.py),
# the input of tests/bench/plot.py; tests/bench/scale.sh runs this at three sizes.
# BENCH_TOOL=reloader measures Stakater's Reloader instead, on the same population, with its
# default flags (tests/bench/reloader/build.sh builds it from its Go module; BENCH_RELOADER_BIN
# runs another build): every StatefulSet carries its opt-in annotation reloader.stakater.com/auto.
# Reloader writes nothing at start and logs nothing when its caches are synced, so "start to
# caches synced" is its start to its first reload (controller_bench wait-reloading: a ConfigMap
# updated once a second until the StatefulSet referencing it changes; an upper bound, by at most
# one reload), and it has settled once that StatefulSet has not changed for 10 s (controller_bench
# wait-quiet: it has answered every one of those updates); the latency is to the StatefulSet's next metadata.generation (its default
# strategy changes an env var of the pod template, no annotation). It runs in a memory cgroup of
# BENCH_RELOADER_MEMORY bytes (default 8 GiB, so a run at a million objects cannot take the
# machine's memory from the control plane): when the kernel kills it there, or it never reloads,
# the run says so, records the figures up to that point (a results file with "failed") and exits
# 3; any other failure to measure exits 1. Reloader does not hold a second change of one
# StatefulSet, so UPDATES is not bounded by the StatefulSets.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$repo/build/bench}
updates=${2:-200}
idle=${3:-60}
sts=${BENCH_STATEFULSETS:-1000}
cms=${BENCH_CONFIGMAPS:-10000}
secrets=${BENCH_SECRETS:-10000}
ns=${BENCH_NAMESPACE:-restarter-controller-bench}
wait_seconds=${BENCH_WAIT_SECONDS:-1800}
cluster="$repo/tests/cluster/cluster.sh"
tool=${BENCH_TOOL:-restarter}
case $tool in
  restarter | reloader) ;;
  *) echo "bench: BENCH_TOOL is restarter or reloader, not '$tool'" >&2; exit 2 ;;
esac
# shellcheck source=SCRIPTDIR/../lib.sh
source "$repo/tests/bench/lib.sh"

if [[ $tool == restarter ]] && ((updates > sts)) && [[ " ${BENCH_CONTROLLER_FLAGS:-} " != *" --min-rollout-interval"* ]]; then
  echo "bench: $updates updates over $sts StatefulSets would change some twice, and the default rollout hold" \
    "would hold the second change (use at most $sts updates, or set --min-rollout-interval in BENCH_CONTROLLER_FLAGS)" >&2
  exit 2
fi
if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
targets=(controller_bench)
[[ -n ${RESTARTER_BIN:-} || $tool == reloader ]] || targets+=(restarter)
cmake --build "$build" --target "${targets[@]}" >/dev/null
bench="$build/tests/bench/controller/controller_bench"
restarter=${RESTARTER_BIN:-$build/cmd/restarter/restarter}
reloader=
[[ $tool == restarter ]] || reloader=${BENCH_RELOADER_BIN:-$("$repo/tests/bench/reloader/build.sh")}
work=$(mktemp -d)
load_at_start=$(cut -d' ' -f1 /proc/loadavg)

bench_install_namespace "$cluster" exec -- kubectl

if [[ -z ${BENCH_SKIP_POPULATE:-} ]]; then
  echo "== populate: $sts StatefulSets, $cms ConfigMaps, $secrets Secrets in $ns"
  start=$SECONDS
  "$cluster" exec -- "$bench" populate "$ns" "$sts" "$cms" "$secrets"
  echo "populated in $((SECONDS - start)) s"
fi

cm_refs=${BENCH_CM_REFS:-$((cms / sts))}
secret_refs=${BENCH_SECRET_REFS:-$((secrets / sts))}
if [[ $tool == restarter ]]; then
  echo "== controller: start, initial sync, and each StatefulSet's references recorded (baseline by default)"
  started_ns=$(date +%s%N)
  "$cluster" exec -- bash -c "'$restarter' serve-controller --namespace '$ns' --debounce 0 \
    --leader-elect=false --metrics-bind-address 127.0.0.1:18080 --health-probe-bind-address 127.0.0.1:18081 \
    ${BENCH_CONTROLLER_FLAGS:-} >'$work/controller.log' 2>&1 & echo \$! >'$work/pid'; wait" &
else
  echo "== Reloader ($reloader): start with its default flags, until its first reload"
  memcg=/sys/fs/cgroup/memory/restarter-bench-reloader
  rmdir "$memcg" 2>/dev/null || true
  mkdir -p "$memcg"
  echo "${BENCH_RELOADER_MEMORY:-8589934592}" >"$memcg/memory.limit_in_bytes"
  started_ns=$(date +%s%N)
  "$cluster" exec -- bash -c "'$reloader' >'$work/controller.log' 2>&1 & echo \$! >'$work/pid'; wait" &
fi
wrapper=$!
# On exit: stop the tool, and remove Reloader's memory cgroup once its process has left it.
stop_tool() {
  kill -TERM "$(cat "$work/pid" 2>/dev/null)" 2>/dev/null || true
  wait "$wrapper" 2>/dev/null || true
  [[ -z ${memcg:-} ]] || rmdir "$memcg" 2>/dev/null || true
}
trap stop_tool EXIT
until [[ -s $work/pid ]]; do sleep 0.01; done
pid=$(cat "$work/pid")
# Into the memory cgroup from here: cluster.sh exec's network namespace has its own /sys.
[[ $tool == restarter ]] || echo "$pid" >"$memcg/cgroup.procs"
# The figures so far, written when the tool cannot go on (Reloader killed by its memory cgroup).
record_failure() {
  echo "bench: $tool $1; last log lines:" >&2
  tail -5 "$work/controller.log" >&2 || true
  local peak_kb=0
  if [[ $tool == reloader ]]; then
    peak_kb=$(($(cat "$memcg/memory.max_usage_in_bytes") / 1024))
    echo "memory cgroup: peak $peak_kb kB, failcnt $(cat "$memcg/memory.failcnt")," \
      "OOM kills: $(awk '$1 == "oom_kill" {print $2}' "$memcg/memory.oom_control")" >&2
  fi
  if [[ -n ${BENCH_RESULTS:-} ]]; then
    "$repo/tests/bench/record.py" "$BENCH_RESULTS" controller --load-at-start "$load_at_start" tool="$tool" \
      statefulsets="$sts" configmaps="$cms" secrets="$secrets" cached_objects=$((sts + cms + secrets)) \
      referenced_objects=$((sts * (cm_refs + secret_refs))) failed="$1" \
      seconds_until_failure=$((($(date +%s%N) - started_ns) / 1000000000)) peak_rss_kb="$peak_kb"
    echo "results (failure): $BENCH_RESULTS"
  fi
  exit 3
}
if [[ $tool == restarter ]]; then
  BENCH_WAIT_SECONDS=$wait_seconds bench_wait_synced "$work/controller.log" "$pid"
  synced_ms=$((($(date +%s%N) - started_ns) / 1000000))
  echo "caches synced ${synced_ms} ms after start (includes process start)"
  "$cluster" exec -- "$bench" wait-settled "$ns" "$sts" $((cm_refs + secret_refs)) "$wait_seconds"
  settled_ms=$((($(date +%s%N) - started_ns) / 1000000))
  echo "settled ${settled_ms} ms after start"
  grep -E 'caches synced' "$work/controller.log" || true
else
  if ! "$cluster" exec -- "$bench" wait-reloading "$ns" "$wait_seconds"; then
    kill -0 "$pid" 2>/dev/null || record_failure "exited before its first reload"
    record_failure "did not reload within $wait_seconds s"
  fi
  synced_ms=$((($(date +%s%N) - started_ns) / 1000000))
  echo "first reload ${synced_ms} ms after start (includes process start; an upper bound of its caches synced)"
  # It answers each update wait-reloading sent, one after the other: at 50,000 StatefulSets a
  # change takes it seconds, so the idle and latency phases start once it has worked them off.
  "$cluster" exec -- "$bench" wait-quiet "$ns" 10 "$wait_seconds" || record_failure "never stopped reloading"
  settled_ms=$((($(date +%s%N) - started_ns) / 1000000))
  echo "caught up ${settled_ms} ms after start"
fi

rss() { awk '/VmRSS/ {print $2 " kB"}' "/proc/$pid/status"; }
rss_kb() { awk -v f="$1:" '$1 == f {print $2}' "/proc/$pid/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }

echo "== (b) writes at idle over ${idle} s, (c) RSS and CPU"
"$cluster" exec -- "$bench" requests >"$work/w0"
t0=$(cpu_ticks)
sleep "$idle"
t1=$(cpu_ticks)
"$cluster" exec -- "$bench" requests >"$work/w1"
echo "idle requests (apiserver_request_total delta):"
join -a1 -a2 -e 0 -o 0,1.2,2.2 <(awk '{print $1":"$2, $3}' "$work/w0" | sort) \
  <(awk '{print $1":"$2, $3}' "$work/w1" | sort) | awk '{print "  " $1 " " ($3 - $2)}'
hz=$(getconf CLK_TCK)
if [[ $tool == restarter ]]; then
  echo "restarter_controller_writes_total (cumulative since start):"
  "$cluster" exec -- curl -fsS http://127.0.0.1:18080/metrics | grep '^restarter_controller_writes_total' || true
fi
steady_kb=$(rss_kb VmRSS)
echo "steady-state RSS: $(rss); CPU at idle: $(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s="$idle" 'BEGIN {printf "%.2f%% of one core", (b - a) / hz / s * 100}')"

interval=${BENCH_UPDATE_INTERVAL_MS:-200}
echo "== (a) latency over $updates ConfigMap updates, one at a time, at most one every ${interval} ms; (b) writes per change"
"$cluster" exec -- "$bench" requests >"$work/w2"
t2=$(cpu_ticks)
latency_of=annotation
[[ $tool == restarter ]] || latency_of=generation
if ! "$cluster" exec -- env BENCH_SAMPLES="$work/latency" BENCH_LATENCY_OF=$latency_of "$bench" latency "$ns" "$updates" "$cm_refs" "$interval"; then
  kill -0 "$pid" 2>/dev/null || record_failure "exited during the updates"
  record_failure "missed an update (above)"
fi
t3=$(cpu_ticks)
"$cluster" exec -- "$bench" requests >"$work/w3"
echo "requests during the updates (apiserver_request_total delta; $updates changes, one PATCH each and one LIST by this benchmark):"
join -a1 -a2 -e 0 -o 0,1.2,2.2 <(awk '{print $1":"$2, $3}' "$work/w2" | sort) \
  <(awk '{print $1":"$2, $3}' "$work/w3" | sort) >"$work/requests"
awk -v n="$updates" '{d = $3 - $2; if (d) printf "  %s %d (%.2f per change)\n", $1, d, d / n}' "$work/requests"
# Every request counted but the benchmark's own: a PATCH of each updated ConfigMap and the one
# LIST of StatefulSets its watch starts from.
requests_per_change=$(awk -v n="$updates" '{d += $3 - $2} END {printf "%.2f", (d - n - 1) / n}' "$work/requests")
cpu_ms_per_change=$(awk -v t="$((t3 - t2))" -v hz="$hz" -v n="$updates" 'BEGIN {printf "%.2f", t * 1000 / hz / n}')
echo "apiserver requests per change (the benchmark's own not counted): $requests_per_change"
echo "RSS after the updates: $(rss); CPU during the updates: $((t3 - t2)) ticks of 1/$hz s, ${cpu_ms_per_change} ms per change"
[[ $tool != restarter ]] || echo "controller restarts logged: $(grep -c 'restart triggered' "$work/controller.log")"
if [[ -n ${BENCH_RESULTS:-} ]]; then
  flags="--debounce 0 ${BENCH_CONTROLLER_FLAGS:-}"
  [[ $tool == restarter ]] || flags="(its defaults)"
  "$repo/tests/bench/record.py" "$BENCH_RESULTS" controller --load-at-start "$load_at_start" tool="$tool" \
    statefulsets="$sts" replicas="${BENCH_REPLICAS:-1}" configmaps="$cms" secrets="$secrets" object_bytes="${BENCH_OBJECT_BYTES:-1024}" \
    cached_objects=$((sts + cms + secrets)) referenced_objects=$((sts * (cm_refs + secret_refs))) flags="$flags" \
    caches_synced_ms="$synced_ms" settled_ms="$settled_ms" steady_rss_kb="$steady_kb" peak_rss_kb="$(rss_kb VmHWM)" \
    update_interval_ms="$interval" requests_per_change="$requests_per_change" cpu_ms_per_change="$cpu_ms_per_change" \
    --samples latency_ms="$work/latency"
  echo "results: $BENCH_RESULTS"
fi
echo "(namespace $ns is left in place; delete it with kubectl delete namespace $ns; log: $work/controller.log)"
