#!/usr/bin/env bash
# Benchmark of serve-controller on the local control plane:
#   1,000 labeled StatefulSets (1 replica each, pods faked by kwok), 10,000 ConfigMaps and 10,000
#   Secrets (each StatefulSet references 10 of each through envFrom), one namespace.
#   (a) latency from a ConfigMap update to the new template annotation, over UPDATES updates;
#   (b) API writes (the apiserver's apiserver_request_total) per change and at idle;
#   (c) the controller's steady-state RSS and CPU.
# A measurement, not a test: it prints figures.
#
# Usage (the cluster must be up: tests/cluster/cluster.sh up):
#   tests/bench/controller/controller_bench.sh [BUILD_DIR] [UPDATES] [IDLE_SECONDS]
# Defaults: build/bench (configured RelWithDebInfo if missing), 200 updates, 60 s idle.
# Flags: the controller runs with the defaults a user gets except --debounce 0 (the default 1s
# window exists to merge a burst of changes into one rollout, so with it every latency is 1 s
# plus the figure measured here), --min-rollout-interval 0 (every StatefulSet is annotated, so
# rolled, at start: the default interval would hold each first change for up to 5 minutes) and
# --leader-elect=false, endpoints on fixed ports, the digest key in the benchmark's namespace
# (--digest-key-namespace: the default restarter-system does not exist there) and --roll-on-opt-in
# (the StatefulSets are created unannotated: the default would record a baseline for each instead
# of annotating it, and the latency phase watches the template annotations). Updates are
# paced at one every BENCH_UPDATE_INTERVAL_MS (default 200: 5 changes/s, below the default write
# limit of 10/s; back-to-back updates would measure the limiter's spacing, not latency; 0 sends
# the next one as soon as the previous one is seen). Scale with env BENCH_STATEFULSETS /
# BENCH_CONFIGMAPS / BENCH_SECRETS; BENCH_SKIP_POPULATE=1 reuses the objects of an earlier run;
# BENCH_CONTROLLER_FLAGS adds controller flags (e.g. --max-writes-per-second 1000, to annotate a
# fresh population quickly); RESTARTER_BIN runs that binary instead of building one.
# RESTARTER_CLUSTER selects the cluster, BENCH_NAMESPACE the namespace (default
# restarter-controller-bench). BENCH_OBJECT_BYTES sets the size of each ConfigMap's and
# Secret's one key (default 1024), BENCH_REPLICAS the replicas of each StatefulSet (default 1),
# BENCH_READS=keys makes the StatefulSets read that key through env key refs (key-level records)
# instead of envFrom (use another BENCH_NAMESPACE: a population keeps the StatefulSets it has).
# BENCH_RESULTS=FILE also writes the figures and every latency as JSON (tests/bench/record.py),
# the input of tests/bench/plot.py; tests/bench/scale.sh runs this at three sizes.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:-$repo/build/bench}
updates=${2:-200}
idle=${3:-60}
sts=${BENCH_STATEFULSETS:-1000}
cms=${BENCH_CONFIGMAPS:-10000}
secrets=${BENCH_SECRETS:-10000}
ns=${BENCH_NAMESPACE:-restarter-controller-bench}
cluster="$repo/tests/cluster/cluster.sh"

if [[ ! -f $build/build.ninja ]]; then
  cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
targets=(controller_bench)
[[ -n ${RESTARTER_BIN:-} ]] || targets+=(restarter)
cmake --build "$build" --target "${targets[@]}" >/dev/null
bench="$build/tests/bench/controller/controller_bench"
restarter=${RESTARTER_BIN:-$build/cmd/restarter/restarter}
work=$(mktemp -d)
load_at_start=$(cut -d' ' -f1 /proc/loadavg)

if [[ -z ${BENCH_SKIP_POPULATE:-} ]]; then
  echo "== populate: $sts StatefulSets, $cms ConfigMaps, $secrets Secrets in $ns"
  start=$SECONDS
  "$cluster" exec -- "$bench" populate "$ns" "$sts" "$cms" "$secrets"
  echo "populated in $((SECONDS - start)) s"
fi

echo "== controller: start, initial sync and annotation of every StatefulSet"
started_ns=$(date +%s%N)
"$cluster" exec -- bash -c "'$restarter' serve-controller --namespace '$ns' --debounce 0 --min-rollout-interval 0 \
  --leader-elect=false --metrics-bind-address 127.0.0.1:18080 --health-probe-bind-address 127.0.0.1:18081 \
  --digest-key-namespace '$ns' --roll-on-opt-in \
  ${BENCH_CONTROLLER_FLAGS:-} >'$work/controller.log' 2>&1 & echo \$! >'$work/pid'; wait" &
wrapper=$!
trap 'kill -TERM "$(cat "$work/pid" 2>/dev/null)" 2>/dev/null || true; wait "$wrapper" 2>/dev/null || true' EXIT
until [[ -s $work/pid ]]; do sleep 0.1; done
pid=$(cat "$work/pid")
until grep -q 'caches synced' "$work/controller.log" 2>/dev/null; do
  kill -0 "$pid" 2>/dev/null || { cat "$work/controller.log"; echo "bench: the controller exited" >&2; exit 1; }
  sleep 0.05
done
synced_ms=$((($(date +%s%N) - started_ns) / 1000000))
echo "caches synced ${synced_ms} ms after start (includes process start)"
"$cluster" exec -- "$bench" wait-annotated "$ns" "$sts" $(((cms + secrets) / sts)) 1800
grep -E 'caches synced' "$work/controller.log" || true

rss() { awk '/VmRSS/ {print $2 " kB"}' "/proc/$pid/status"; }
rss_kb() { awk -v f="$1:" '$1 == f {print $2}' "/proc/$pid/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }

echo "== (b) writes at idle over ${idle} s, (c) RSS and CPU"
"$cluster" exec -- "$bench" writes >"$work/w0"
t0=$(cpu_ticks)
sleep "$idle"
t1=$(cpu_ticks)
"$cluster" exec -- "$bench" writes >"$work/w1"
echo "idle writes (apiserver_request_total delta):"
join -a1 -a2 -e 0 -o 0,1.2,2.2 <(awk '{print $1":"$2, $3}' "$work/w0" | sort) \
  <(awk '{print $1":"$2, $3}' "$work/w1" | sort) | awk '{print "  " $1 " " ($3 - $2)}'
hz=$(getconf CLK_TCK)
echo "restarter_controller_writes_total (cumulative since start):"
"$cluster" exec -- curl -fsS http://127.0.0.1:18080/metrics | grep '^restarter_controller_writes_total' || true
steady_kb=$(rss_kb VmRSS)
echo "steady-state RSS: $(rss); CPU at idle: $(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s="$idle" 'BEGIN {printf "%.2f%% of one core", (b - a) / hz / s * 100}')"

interval=${BENCH_UPDATE_INTERVAL_MS:-200}
echo "== (a) latency over $updates ConfigMap updates, one at a time, at most one every ${interval} ms; (b) writes per change"
"$cluster" exec -- "$bench" writes >"$work/w2"
t2=$(cpu_ticks)
"$cluster" exec -- env BENCH_SAMPLES="$work/latency" "$bench" latency "$ns" "$updates" $((cms / sts)) "$interval"
t3=$(cpu_ticks)
"$cluster" exec -- "$bench" writes >"$work/w3"
echo "writes during the updates (apiserver_request_total delta; $updates changes):"
join -a1 -a2 -e 0 -o 0,1.2,2.2 <(awk '{print $1":"$2, $3}' "$work/w2" | sort) \
  <(awk '{print $1":"$2, $3}' "$work/w3" | sort) | awk -v n="$updates" '{d = $3 - $2; printf "  %s %d (%.2f per change)\n", $1, d, d / n}'
echo "RSS after the updates: $(rss); CPU during the updates: $((t3 - t2)) ticks of 1/$hz s"
echo "controller restarts logged: $(grep -c 'restart triggered' "$work/controller.log")"
if [[ -n ${BENCH_RESULTS:-} ]]; then
  "$repo/tests/bench/record.py" "$BENCH_RESULTS" controller --load-at-start "$load_at_start" \
    statefulsets="$sts" replicas="${BENCH_REPLICAS:-1}" configmaps="$cms" secrets="$secrets" object_bytes="${BENCH_OBJECT_BYTES:-1024}" \
    cached_objects=$((sts + cms + secrets)) flags="--debounce 0 --min-rollout-interval 0 ${BENCH_CONTROLLER_FLAGS:-}" \
    caches_synced_ms="$synced_ms" steady_rss_kb="$steady_kb" peak_rss_kb="$(rss_kb VmHWM)" \
    update_interval_ms="$interval" --samples latency_ms="$work/latency"
  echo "results: $BENCH_RESULTS"
fi
echo "(namespace $ns is left in place; delete it with kubectl delete namespace $ns; log: $work/controller.log)"
