# shellcheck shell=bash
# shellcheck disable=SC2154,SC2317  # cmd/demo.sh's variables; the functions run from traps and wait_until
# The demo's life cycle (cmd/demo.sh): stopping what it started (the servers by their PID records,
# tests/lib/process.sh; the control plane) once, on any exit, SIGINT or SIGTERM, and waiting for a
# condition while watching the server that should make it true. Sourced by cmd/demo.sh before its
# tour, in its shell: it installs the traps. Never executed.

cluster_started=0 webhook_pid="" controller_pid="" cleaned=0
# How long a server may take after SIGTERM before SIGKILL (serve-controller finishes its in-flight
# writes and releases its Lease first).
stop_grace_seconds=30
# shellcheck disable=SC2034  # read by tests/lib/process.sh
proc_log=(demo_log)
demo_log() { echo "demo: $1"; }

# Stop one process we started (recorded in $state/NAME.pid, tests/lib/process.sh): SIGTERM, SIGKILL
# after stop_grace_seconds. Reaps it.
stop_process() {
  local name=$1 pid=$2
  proc_stop "$stop_grace_seconds" "$state/$name.pid"
  rm -f "$state/$name.pid"
  wait "$pid" 2>/dev/null
  echo "demo: stopped $name (pid $pid)"
}

# The demo's own stdout and stderr, for the traps: a signal can be handled while a command whose
# output is redirected (a readiness probe's, to /dev/null) is running, and the trap would inherit that.
exec 3>&1 4>&2

# Runs once, on any exit: the end of the tour, an error, SIGINT or SIGTERM.
cleanup() {
  ((cleaned)) && return 0
  cleaned=1
  set +e
  trap '' INT TERM   # a second Ctrl-C must not cut the clean-up short
  echo
  [[ -n $controller_pid ]] && stop_process serve-controller "$controller_pid"
  [[ -n $webhook_pid ]] && stop_process serve-webhook "$webhook_pid"
  if ((cluster_started)); then
    if ((keep_cluster)); then
      # Nothing serves it any more: left behind, it would make every labeled create fail open.
      r install-mwc --name "$mwc" --delete >/dev/null 2>&1
      echo "demo: the control plane '$RESTARTER_CLUSTER' stays up (--keep-cluster); stop it with:"
      echo "  RESTARTER_CLUSTER=$RESTARTER_CLUSTER $cluster_sh down"
    else
      "$cluster_sh" down 2>&1 | sed 's/^/demo: /'
    fi
  fi
  echo "demo: logs are in $state"
}
on_exit() {
  local rc=$?
  cleanup >&3 2>&4
  exit "$rc"
}
on_signal() {
  printf '\ndemo: %s received, stopping everything\n' "$1" >&3
  cleanup >&3 2>&4
  trap - EXIT
  exit "$2"
}
trap on_exit EXIT
trap 'on_signal SIGINT 130' INT
trap 'on_signal SIGTERM 143' TERM

# Poll "$@" until it succeeds; fail after wait_seconds, or at once when the process NAME we started
# has exited.
#   wait_until DESCRIPTION NAME CMD...
wait_until() {
  local what=$1 name=$2 rc=0
  shift 2
  proc_wait_until "$wait_seconds" "$state/$name.pid" quietly "$@" || rc=$?
  case $rc in
    0) ;;
    1) tail -n 20 "$state/$name.log" | indent >&2
       die "$name exited while waiting for $what (log: $state/$name.log)" ;;
    *) die "timed out after ${wait_seconds}s waiting for $what" ;;
  esac
}
quietly() { "$@" >/dev/null 2>&1; }
ready() { "$cluster_sh" exec -- curl -fsS "http://$1/readyz"; }

