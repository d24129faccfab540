#!/usr/bin/env bash
# What the benchmarks share (the webhook's: webhook.sh, webhook_amplifier.sh, webhook_limits.sh,
# fair_admission.sh; the controller's use bench_install_namespace alone): sourced after
# `set -euo pipefail`, never run. Everything it starts talks to 127.0.0.1 only.
#
#   bench_install_namespace KUBECTL...
#                           the namespace restarter-system created when missing, as an install
#                           does (KUBECTL: how to run kubectl, e.g. `cluster.sh exec -- kubectl`):
#                           serve-controller keeps its digest key there by default and creates the
#                           Secret at its first start, but without the namespace it never becomes
#                           ready, so a benchmark of the default flags needs it on a fresh cluster
#   bench_wait_synced LOG PID
#                           waits until serve-controller's LOG says "caches synced"; fails,
#                           printing the log's tail, when PID has exited or after
#                           $BENCH_WAIT_SECONDS (default 1800): a benchmark that cannot start fails
#   bench_scale_controller NS LOG METRICS_PORT HEALTH_PORT PREFIX [FLAGS...]
#                           serve-controller ($bin) over namespace NS inside the cluster's network
#                           namespace, with scale.sh's flags (--debounce 0 --max-writes-per-second
#                           1000 --write-burst 1000, no leader election) and FLAGS, its output in
#                           LOG, run under PREFIX when not empty (e.g. "heaptrack -o FILE"); sets
#                           $pid once it runs (fails, printing LOG, if it exits first) and
#                           $controller_wrapper (the cluster.sh exec that runs it; it ends when
#                           PREFIX does); both tracked
#   bench_until WHAT CMD... runs CMD every 0.2 s until it succeeds; fails naming WHAT after
#                           $BENCH_WAIT_SECONDS (default 1800)
#   bench_init BIN TOOL...  sets repo (the checkout) and bin (BIN, else $RESTARTER_BIN, else
#                           build/ci's restarter); exits 1 naming the first TOOL not on PATH, or
#                           when there is no binary; makes $work, a scratch directory, and the
#                           exit trap that stops every tracked process and removes $work
#   bench_track PID         a process to stop (SIGTERM, then wait) on exit
#   bench_on_exit CMD...    one more command for the exit trap (run after the processes stopped)
#   stats                   "median (min-max)" of the numbers on stdin
#   load                    the load average (1, 5, 15 min): the machine may be shared
#   metric PORT PREFIX      the sum of the series on http://127.0.0.1:PORT/metrics whose line
#                           starts with PREFIX (0 when none)
#   webhook_alone PORT HEALTH_PORT [FLAGS...]
#                           gen-certs into $work/certs (once) and serve-webhook with them and a
#                           kubeconfig naming a closed loopback port (a webhook with no cluster:
#                           only unlabeled reviews are answered without a lookup); tracked; its
#                           pid in $webhook_pid; returns once /readyz answers (bounded, 10 s;
#                           else prints its log and fails)
#   webhook_in_cluster NS MWC PORT METRICS_PORT HEALTH [FLAGS...]
#                           the namespace NS made anew (a previous run's may still terminate)
#                           with a digest key Secret (serve-webhook --digest-key-namespace NS),
#                           serve-webhook on the cluster of $KUBECONFIG with gen-certs
#                           certificates (HEALTH: its --health-probe-bind-address, 0 for none), and the webhook configuration MWC calling it for NS only;
#                           the configuration and NS deleted on exit; tracked; its pid in
#                           $webhook_pid; returns once it answers (bounded, 10 s; else prints
#                           its log and fails)

bench_pids=()
bench_exit=()

bench_init() {
  local tool
  repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  bin=${1:-${RESTARTER_BIN:-$repo/build/ci/cmd/restarter/restarter}}
  shift
  for tool in "$@"; do command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 1; }; done
  [[ -x $bin ]] || { echo "no restarter binary at $bin" >&2; exit 1; }
  work=$(mktemp -d)
  trap bench_cleanup EXIT
}

bench_install_namespace() {
  "$@" get namespace restarter-system >/dev/null 2>&1 && return 0
  "$@" create namespace restarter-system >/dev/null
  echo "created namespace restarter-system (as an install does: serve-controller keeps its digest key there)"
}

bench_wait_synced() {
  local log=$1 pid=$2 deadline=$((SECONDS + ${BENCH_WAIT_SECONDS:-1800}))
  until grep -q 'caches synced' "$log" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 20 "$log" >&2
      echo "bench: serve-controller exited before its caches synced (log: $log)" >&2
      return 1
    fi
    if ((SECONDS >= deadline)); then
      tail -n 20 "$log" >&2
      echo "bench: serve-controller's caches did not sync within ${BENCH_WAIT_SECONDS:-1800} s (log: $log)" >&2
      return 1
    fi
    sleep 0.05
  done
}

bench_until() {
  local what=$1 deadline=$((SECONDS + ${BENCH_WAIT_SECONDS:-1800}))
  shift
  until "$@"; do
    ((SECONDS < deadline)) || { echo "bench: $what: not within ${BENCH_WAIT_SECONDS:-1800} s" >&2; return 1; }
    sleep 0.2
  done
}

bench_scale_controller() {
  local ns=$1 log=$2 metrics_port=$3 health_port=$4 prefix=$5
  shift 5
  "$repo/tests/cluster/cluster.sh" exec -- bash -c "$prefix '$bin' serve-controller --namespace '$ns' --debounce 0 \
    --leader-elect=false --metrics-bind-address 127.0.0.1:$metrics_port \
    --health-probe-bind-address 127.0.0.1:$health_port --max-writes-per-second 1000 --write-burst 1000 \
    $* >'$log' 2>&1" &
  controller_wrapper=$!
  bench_track "$controller_wrapper"
  pid=
  until pid=$(pgrep -f -n "^$bin serve-controller --namespace $ns ") && [[ -n $pid ]]; do
    kill -0 "$controller_wrapper" 2>/dev/null || { cat "$log" >&2; return 1; }
    sleep 0.1
  done
  bench_track "$pid" # the wrapper's end does not end the controller inside the cluster's namespace
}

bench_track() { bench_pids+=("$1"); }
bench_on_exit() { bench_exit+=("$*"); }

bench_cleanup() {
  local pid cmd
  for pid in "${bench_pids[@]}"; do
    if kill "$pid" 2>/dev/null; then wait "$pid" 2>/dev/null || true; fi
  done
  for cmd in "${bench_exit[@]}"; do eval "$cmd" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}

stats() {
  sort -g | awk '{ v[NR] = $1 } END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%g (%g-%g)", m, v[1], v[NR] }'
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

metric() {
  curl -sf "http://127.0.0.1:$1/metrics" | awk -v p="$2" 'index($0, p) == 1 { s += $NF } END { printf "%d\n", s }'
}

bench_certs() {
  [[ -f $work/certs/ca.crt ]] || "$bin" gen-certs --out-dir "$work/certs" --ip 127.0.0.1 >/dev/null 2>&1
}

webhook_alone() {
  local port=$1 health=$2
  shift 2
  bench_certs
  cat >"$work/closed.kubeconfig" <<'YAML'
apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:9", insecure-skip-tls-verify: true}}]
users: [{name: none, user: {token: none}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
YAML
  "$bin" serve-webhook --kubeconfig "$work/closed.kubeconfig" --cert-dir "$work/certs" --bind-address 127.0.0.1 \
    --port "$port" --metrics-bind-address 0 --health-probe-bind-address "127.0.0.1:$health" \
    --log-level error "$@" >"$work/webhook.log" 2>&1 &
  webhook_pid=$!
  bench_track "$webhook_pid"
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$health/readyz" && return 0; sleep 0.1; done
  echo "the webhook did not become ready:" >&2
  cat "$work/webhook.log" >&2
  return 1
}

webhook_in_cluster() {
  local ns=$1 mwc=$2 port=$3 metrics=$4 health=$5
  shift 5
  bench_certs
  kubectl delete namespace "$ns" --ignore-not-found --timeout=180s >/dev/null
  kubectl create namespace "$ns" >/dev/null
  # The digest key, made as serve-controller would (32 random bytes): without it the webhook
  # patches no review that references what --content-aware reads.
  head -c 32 /dev/urandom >"$work/digest.key"
  kubectl -n "$ns" create secret generic restarter-digest-key --from-file=key="$work/digest.key" >/dev/null
  "$bin" serve-webhook --cert-dir "$work/certs" --bind-address 127.0.0.1 --port "$port" \
    --digest-key-namespace "$ns" \
    --metrics-bind-address "127.0.0.1:$metrics" --health-probe-bind-address "$health" --log-level warn \
    "$@" >"$work/webhook.log" 2>&1 &
  webhook_pid=$!
  bench_track "$webhook_pid"
  bench_on_exit "\"$bin\" install-mwc --name \"$mwc\" --delete"
  bench_on_exit kubectl delete namespace "$ns" --wait=false
  "$bin" install-mwc --name "$mwc" --webhook-url "https://127.0.0.1:$port/mutate" \
    --ca-bundle-file "$work/certs/ca.crt" --only-namespace "$ns" >/dev/null 2>&1
  for _ in $(seq 100); do curl -sk -o /dev/null "https://127.0.0.1:$port/mutate" -d x && return 0; sleep 0.1; done
  echo "the webhook did not answer:" >&2
  cat "$work/webhook.log" >&2
  return 1
}
