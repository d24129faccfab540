#!/usr/bin/env bash
# Run `restarter serve-controller` as a host process for one kuttl test (its own namespace only,
# so tests running in parallel never see each other's objects).
#
# Usage (in TestStep scripts; kuttl sets NAMESPACE and KUBECONFIG):
#   controller.sh start [--name N] [-- extra flags]  start instance N (default "controller") in the
#                               background and wait (bounded) until its caches have synced.
#                               Defaults: --namespace $NAMESPACE, --leader-elect=false,
#                               --debounce 200ms, --min-rollout-interval 0 (suites change a
#                               workload's objects in turn and expect each change rolled at
#                               once; controller-rollout-interval gives its own, a later flag
#                               wins), --roll-on-opt-in (the suites written before the
#                               baseline create labeled workloads without the webhook and read the
#                               template annotations the controller then writes; controller-baseline
#                               and webhook-baseline pass --roll-on-opt-in=false, the default of a
#                               real install), endpoints on 127.0.0.1:0 (free ports).
#   controller.sh start --unready [--name N] [-- flags]  the same, but wait only until /readyz is
#                               served (for a controller that cannot become ready: no digest key)
#   controller.sh stop [N]      SIGTERM, wait (bounded) for a clean exit ("stopped" logged)
#   controller.sh kill [N]      SIGKILL (no clean-up: to prove a hand-over without release)
#   controller.sh exit-code [N] [SECONDS]  wait (bounded) until N has exited by itself; print its
#                               exit status
#   controller.sh log [N]       print its log
#   controller.sh wait-log PATTERN [N] [SECONDS]  wait until its log matches PATTERN (grep -E)
#   controller.sh count PATTERN [N]               lines of its log matching PATTERN
#   controller.sh metrics [N]   print its /metrics
#   controller.sh health [N]    HOST:PORT of its /healthz and /readyz
#   controller.sh readyz [N]    its /readyz: the HTTP status, a space, the body
#   controller.sh dir           the directory holding PIDs and logs of this test's controllers
#
# Binary: $RESTARTER_BIN, default build/ci/cmd/restarter/restarter of this repository (what
# tests/run.sh builds). Identity: $RESTARTER_CONTROLLER_KUBECONFIG when set (tests/run.sh points it
# at a token of the manifests' restarter-controller ServiceAccount, kuttl/lib/identity.sh, so every
# suite proves that account's RBAC sufficient), else kuttl's admin $KUBECONFIG.
# A failed test never reaches its stop step, so: every instance runs under `timeout`
# (RESTARTER_CONTROLLER_WATCHDOG seconds, default 600), and `start` first stops the instances left
# behind by earlier tests whose namespace kuttl has deleted since. State lives per cluster
# ($RESTARTER_CLUSTER, as cluster.sh names it): a kuttl run against another cluster on the same
# machine must never take this cluster's namespaces for deleted ones. PID files hold the PID and
# start time of each instance's watchdog (tests/lib/process.sh), so a recycled PID is never
# signalled.
set -euo pipefail

die() { printf 'controller.sh: %s\n' "$*" >&2; exit 1; }

: "${NAMESPACE:?NAMESPACE must be set (kuttl sets it)}"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=SCRIPTDIR/../../tests/lib/process.sh
source "$repo/tests/lib/process.sh"
# `stop`: how long serve-controller may take to finish its in-flight writes and release its Lease
# after SIGTERM before SIGKILL (and a failed step).
stop_grace=60
bin=${RESTARTER_BIN:-$repo/build/ci/cmd/restarter/restarter}
watchdog=${RESTARTER_CONTROLLER_WATCHDOG:-600}
root=${TMPDIR:-/tmp}/restarter-kuttl/${RESTARTER_CLUSTER:-default}
dir=$root/$NAMESPACE
mkdir -p "$dir"

# Instances of namespaces that no longer exist (a failed test's leftovers): SIGTERM by recorded PID
# (only if it is still that namespace's watchdog: PIDs are recycled, possibly into another test's
# serve-controller, which must be left alone).
reap_leftovers() {
  local pidfile ns
  for pidfile in "$root"/*/*.pid; do
    [[ -f $pidfile ]] || continue
    ns=$(basename "$(dirname "$pidfile")")
    [[ $ns == "$NAMESPACE" ]] && continue
    if ! kubectl get namespace "$ns" >/dev/null 2>&1; then
      proc_signal "$pidfile" TERM || true
      rm -f "$pidfile"
    fi
  done
}

start() {
  local name=controller ready='caches synced'
  if [[ ${1:-} == --unready ]]; then ready='serving /healthz and /readyz'; shift; fi
  if [[ ${1:-} == --name ]]; then name=$2; shift 2; fi
  [[ ${1:-} == -- ]] && shift
  [[ -x $bin ]] || die "no restarter binary at $bin (build it, or set RESTARTER_BIN)"
  local log=$dir/$name.log
  if proc_alive "$dir/$name.pid"; then die "$name is already running"; fi
  reap_leftovers
  : >"$log"
  rm -f "$dir/$name.pid" "$dir/$name.rc"
  local identity=()
  [[ -n ${RESTARTER_CONTROLLER_KUBECONFIG:-} ]] && identity=(--kubeconfig "$RESTARTER_CONTROLLER_KUBECONFIG")
  # The key of content digests lives in the test's namespace (each test its own; --digest-key-namespace
  # below): under the ServiceAccount, the manifests' rules for it are granted there.
  if [[ -n ${RESTARTER_CONTROLLER_KUBECONFIG:-} ]]; then
    "$repo/kuttl/lib/identity.sh" grant role restarter-controller-digest-key "$NAMESPACE" restarter-controller >/dev/null
  fi
  # setsid + closed stdio: kuttl's script step must not wait for the background process. The
  # session's shell records the watchdog's PID and start time (signals go to it; it forwards TERM)
  # and, once it ends, the exit status, for `exit-code`.
  # shellcheck disable=SC2016  # the inner bash expands these, not this one
  RESTARTER_PIDFILE=$dir/$name.pid RESTARTER_RCFILE=$dir/$name.rc RESTARTER_PROCESS_LIB=$repo/tests/lib/process.sh \
    setsid bash -c 'source "$RESTARTER_PROCESS_LIB"; timeout -s TERM "$0" "$@" & proc_record $! "$RESTARTER_PIDFILE"; wait $!; echo $? >"$RESTARTER_RCFILE"' \
    "$watchdog" "$bin" serve-controller "${identity[@]}" --namespace "$NAMESPACE" \
    --leader-elect=false --debounce 200ms --min-rollout-interval 0 --roll-on-opt-in \
    --health-probe-bind-address 127.0.0.1:0 --metrics-bind-address 127.0.0.1:0 \
    --digest-key-namespace "$NAMESPACE" "$@" \
    </dev/null >"$log" 2>&1 &
  local deadline=$((SECONDS + 10))
  until [[ -s $dir/$name.pid ]]; do
    ((SECONDS < deadline)) || die "$name did not start"
    sleep 0.1
  done
  wait_log "$ready" "$name" 60
  echo "$name started (pid $(cat "$dir/$name.pid"), log $log)"
}

pid_of() {
  proc_pid "$dir/$1.pid" || die "no instance $1 was started"
}

stop() {
  local name=${1:-controller}
  pid_of "$name" >/dev/null
  proc_stop "$stop_grace" "$dir/$name.pid" || die "$name did not stop within ${stop_grace}s"
  grep -q 'INFO stopped' "$dir/$name.log" || { tail -20 "$dir/$name.log" >&2; die "$name did not stop cleanly"; }
  echo "$name stopped"
}

kill_now() {
  local name=${1:-controller} pid
  pid=$(pid_of "$name")
  # The watchdog `timeout` forwards TERM but not KILL: kill its child first, then it.
  if proc_alive "$dir/$name.pid"; then pkill -KILL -P "$pid" 2>/dev/null || true; fi
  proc_signal "$dir/$name.pid" KILL || true
  echo "$name killed"
}

exit_code() {
  local name=${1:-controller} seconds=${2:-60} deadline
  deadline=$((SECONDS + seconds))
  until [[ -s $dir/$name.rc ]]; do
    ((SECONDS < deadline)) || { tail -20 "$dir/$name.log" >&2; die "$name did not exit within ${seconds}s"; }
    sleep 0.2
  done
  cat "$dir/$name.rc"
}

wait_log() {
  local pattern=$1 name=${2:-controller} seconds=${3:-90} deadline
  local log=$dir/$name.log
  deadline=$((SECONDS + seconds))
  until grep -Eq -- "$pattern" "$log" 2>/dev/null; do
    if [[ -f $dir/$name.pid ]] && ! proc_alive "$dir/$name.pid"; then
      tail -30 "$log" >&2
      die "$name exited before logging /$pattern/"
    fi
    ((SECONDS < deadline)) || { tail -30 "$log" >&2; die "$name did not log /$pattern/ within ${seconds}s"; }
    sleep 0.2
  done
}

metrics() {
  local name=${1:-controller} address
  address=$(grep -Eo 'serving /metrics address=[0-9.:]+' "$dir/$name.log" | head -1 | sed 's/.*address=//')
  [[ -n $address ]] || die "$name logged no metrics address"
  curl -fsS "http://$address/metrics"
}

health() {
  local address
  address=$(grep -Eo 'serving /healthz and /readyz address=[0-9.:]+' "$dir/${1:-controller}.log" | head -1 | sed 's/.*address=//')
  [[ -n $address ]] || die "${1:-controller} logged no health address"
  echo "$address"
}

readyz() {
  local address
  address=$(health "${1:-controller}")
  curl -sS -o "$dir/readyz.body" -w '%{http_code}' "http://$address/readyz"
  printf ' %s\n' "$(cat "$dir/readyz.body")"
}

case ${1:-} in
  start) shift; start "$@" ;;
  readyz) readyz "${2:-controller}" ;;
  stop) stop "${2:-controller}" ;;
  kill) kill_now "${2:-controller}" ;;
  log) cat "$dir/${2:-controller}.log" ;;
  wait-log) [[ -n ${2:-} ]] || die "usage: wait-log PATTERN [NAME] [SECONDS]"; wait_log "$2" "${3:-controller}" "${4:-90}" ;;
  count) grep -Ec -- "$2" "$dir/${3:-controller}.log" || true ;;
  metrics) metrics "${2:-controller}" ;;
  health) health "${2:-controller}" ;;
  exit-code) exit_code "${2:-controller}" "${3:-60}" ;;
  dir) echo "$dir" ;;
  *) die "usage: controller.sh start|stop|kill|exit-code|log|wait-log|count|metrics|health|readyz|dir" ;;
esac
