#!/usr/bin/env bash
# serve-controller across a kube-apiserver restart at scale (issue-level bad input: "an apiserver
# restart while synced: no object lost, no restart the pods did not need, memory bounded"), over a
# population a benchmark left in place (scale.sh's million, say). Starts serve-controller with
# scale.sh's flags, waits for "caches synced" and IDLE seconds (what it writes then is the
# settling of the population, not counted), takes its figures, restarts kube-apiserver (SIGTERM,
# then started again with the same command line, environment and directory, as
# tests/integration/support.cpp's restartApiserver does), waits until the apiserver is ready, until
# every cache has re-watched or relisted (restarter_controller_watch_restarts_total grew for each
# resource it caches) and IDLE seconds more, and takes them again. Prints both, and fails when the
# controller wrote anything across the restart (a restart no pod needed, or a record written
# again), when its caches hold other counts than before (an object lost, or one counted twice), or
# when it exited.
# A check at a size no CI stage reaches (tests/integration/restart_test.cpp proves the same at a
# few objects in CI): it fails when it cannot measure or when the controller misbehaved.
#
# Usage (the cluster must be up and hold the population):
#   tests/bench/apiserver_restart.sh NAMESPACE [IDLE] [FLAGS...]
# IDLE defaults to 60; FLAGS are added to serve-controller's (scale.sh's: --debounce 0
# --max-writes-per-second 1000 --write-burst 1000). RESTARTER_BIN, RESTARTER_CLUSTER and
# BENCH_WAIT_SECONDS (default 1800) as for the other benchmarks.
set -euo pipefail
ns=${1:?usage: apiserver_restart.sh NAMESPACE [IDLE] [FLAGS...]}
idle=${2:-60}
shift $(($# < 2 ? $# : 2))
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
bench_init ""
cluster="$repo/tests/cluster/cluster.sh"
metrics_port=18086
# The sum of the controller's series starting with $1 (0 when none).
controller_metric() {
  "$cluster" exec -- curl -sf "http://127.0.0.1:$metrics_port/metrics" |
    awk -v p="$1" 'index($0, p) == 1 { s += $NF } END { printf "%d\n", s }'
}
# The controller's series starting with $1, one "labels value" a line (none: a counter with labels
# has no series until it first counts).
controller_series() {
  "$cluster" exec -- curl -sf "http://127.0.0.1:$metrics_port/metrics" | { grep "^$1" || true; } | sort
}
figures() {  # figures LABEL
  echo "$1: writes $(controller_metric restarter_controller_writes_total)," \
    "cached objects $(controller_metric 'restarter_controller_cache_objects{')," \
    "of them unloaded $(controller_metric 'restarter_controller_cache_unloaded_objects{')," \
    "RSS $(awk '/VmRSS/ {print $2}' "/proc/$pid/status") kB, peak $(awk '/VmHWM/ {print $2}' "/proc/$pid/status") kB"
}

echo "== serve-controller over namespace $ns; load: $(load)"
bench_scale_controller "$ns" "$work/controller.log" "$metrics_port" 18087 "" "$@"
bench_wait_synced "$work/controller.log" "$pid"
sleep "$idle"
figures before | tee "$work/before"
controller_series 'restarter_controller_cache_objects{' >"$work/objects-before"
restarts_before=$(controller_series restarter_controller_watch_restarts_total)

echo "== kube-apiserver restarted; load: $(load)"
restarted_at=$SECONDS
# shellcheck disable=SC2016 # expanded by the shell inside the cluster's namespace, not this one
"$cluster" exec -- bash -c '
  set -euo pipefail
  read -r pid start <"$RESTARTER_CLUSTER_STATE_DIR/run/kube-apiserver.pid"
  mapfile -d "" -t argv <"/proc/$pid/cmdline"
  mapfile -d "" -t envv <"/proc/$pid/environ"
  dir=$(readlink "/proc/$pid/cwd")
  [[ ${argv[0]} == *kube-apiserver ]] || { echo "pid $pid is not kube-apiserver" >&2; exit 1; }
  kill -TERM "$pid"
  for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; sleep 1; fi
  cd "$dir"
  setsid env -i "${envv[@]}" "${argv[@]}" </dev/null >>"$RESTARTER_CLUSTER_STATE_DIR/logs/kube-apiserver.log" 2>&1 &
  new=$!
  echo "$new $(cut -d" " -f22 "/proc/$new/stat")" >"$RESTARTER_CLUSTER_STATE_DIR/run/kube-apiserver.pid"
  echo "kube-apiserver: pid $pid stopped, pid $new started"'
# shellcheck disable=SC2317 # called by bench_until
apiserver_ready() { "$cluster" exec -- kubectl get --raw /readyz >/dev/null 2>&1; }
bench_until "kube-apiserver ready again" apiserver_ready
echo "kube-apiserver ready $((SECONDS - restarted_at)) s after the restart began"
# Until every resource the controller caches counted a failed watch (re-watched or relisted since
# the restart), or 300 s: a watch the apiserver ended cleanly at its shutdown is resumed without
# counting one, so the wait is bounded and the counts are printed either way.
for ((waited = 0; waited < 1500; ++waited)); do
  restarts_now=$(controller_series restarter_controller_watch_restarts_total)
  python3 - "$restarts_before" "$restarts_now" <<'COMPARE' && break
import sys
def parse(text):
    return {l.rsplit(" ", 1)[0]: float(l.rsplit(" ", 1)[1]) for l in text.splitlines() if l.strip()}
before, now = parse(sys.argv[1]), parse(sys.argv[2])
sys.exit(0 if now and all(v > before.get(k, 0) for k, v in now.items()) else 1)
COMPARE
  sleep 0.2
done
echo "$((SECONDS - restarted_at)) s after the restart began, the caches' failed watches (before -> now):"
join -a2 <(printf '%s\n' "$restarts_before") <(printf '%s\n' "$restarts_now") | sed 's/^/  /'
sleep "$idle"
kill -0 "$pid" 2>/dev/null || { echo "apiserver_restart: serve-controller exited" >&2; tail -20 "$work/controller.log" >&2; exit 1; }
figures after | tee "$work/after"
controller_series 'restarter_controller_cache_objects{' >"$work/objects-after"

failed=0
writes_before=$(sed 's/.*writes \([0-9]*\),.*/\1/' "$work/before")
writes_after=$(sed 's/.*writes \([0-9]*\),.*/\1/' "$work/after")
if ((writes_after != writes_before)); then
  echo "apiserver_restart: the controller wrote $((writes_after - writes_before)) times across the restart:" >&2
  controller_series restarter_controller_writes_total >&2
  failed=1
fi
if ! diff "$work/objects-before" "$work/objects-after" >&2; then
  echo "apiserver_restart: the caches hold other counts after the restart (above: before <, after >)" >&2
  failed=1
fi
((failed)) || echo "no write and the same cached objects across the restart"
exit "$failed"
