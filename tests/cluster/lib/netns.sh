# shellcheck shell=bash
# The control plane's network namespace and the processes started in it (lib/run.sh's components,
# lib/node.sh's): entering the namespace, starting a process detached with its PID recorded,
# stopping it by that record, and waiting for a readiness probe while watching that none has
# died. Sourced, never executed. Uses common.sh and run.sh.

# Bound on each readiness wait. Measured on 2 cores: /readyz ~3 s, default ServiceAccount ~6 s,
# also with three CPU hogs running; the bound is for a machine far busier than that.
WAIT_SECONDS=${RESTARTER_CLUSTER_WAIT_SECONDS:-180}

netns_exists() { [[ -e /run/netns/$NETNS ]]; }

# Set NETNS_ARGV to the command prefix that runs a command inside the cluster's network namespace
# as the calling user, with the caller's environment and working directory.
netns_argv() {
  if [[ $(id -u) -eq 0 ]]; then
    NETNS_ARGV=(ip netns exec "$NETNS")
  else
    # Entering a namespace needs root; drop back to the caller right after. sudo may reset PATH.
    NETNS_ARGV=(sudo --preserve-env ip netns exec "$NETNS"
      sudo --preserve-env -u "#$(id -u)" -g "#$(id -g)" -- env PATH="$PATH")
  fi
}

# Run a command inside the cluster's network namespace, as the calling user.
in_netns() {
  netns_argv
  "${NETNS_ARGV[@]}" "$@"
}

# Create the namespace with only loopback up, and NODE_IP on it (idempotent).
create_netns() {
  netns_exists || as_root ip netns add "$NETNS"
  as_root ip netns exec "$NETNS" ip link set lo up
  as_root ip netns exec "$NETNS" ip addr replace "$NODE_IP/32" dev lo
}

# Admin kubectl inside the namespace.
kctl() { in_netns "$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_FILE" --request-timeout=10s "$@"; }

# --- processes --------------------------------------------------------------------------------

# The PID files hold "<pid> <start time>" (tests/lib/process.sh), so that `down` never signals a
# recycled PID. The components run as root (sudo when we are not).
# shellcheck source=SCRIPTDIR/../../lib/process.sh
source "$CLUSTER_DIR/../lib/process.sh"
proc_kill=(as_root kill)
proc_log=(log)

# Is the recorded process of <component> still the one we started, and alive?
component_alive() { proc_alive "$RUN_DIR/$1.pid"; }

# Start <component> detached (own session, survives the script) inside the namespace.
#   start_component <component> <args...>     the binary is $BIN_DIR/<component>
start_component() {
  local name=$1
  shift
  start_process "$name" ip netns exec "$NETNS" "$BIN_DIR/$name" "$@"
}

# Start <command> as root, detached, as <component>: output to logs/<component>.log, PID recorded.
#   start_process <component> <command...>
start_process() {
  local name=$1 pid
  shift
  mkdir -p "$RUN_DIR" "$LOG_DIR"
  # setsid: a new session, so the process is immune to the caller's terminal and job control.
  # Not a process-group leader here (no job control), so setsid execs without forking, and so
  # do `ip netns exec`, `nsenter --net` and `unshare --mount` (lib/node.sh): $! is the component.
  # 8>&-: the cluster lock stays with this script, or a later up/down would wait forever.
  if [[ $(id -u) -eq 0 ]]; then
    setsid "$@" </dev/null >>"$LOG_DIR/$name.log" 2>&1 8>&- &
  else
    setsid sudo "$@" </dev/null >>"$LOG_DIR/$name.log" 2>&1 8>&- &
  fi
  pid=$!
  proc_record "$pid" "$RUN_DIR/$name.pid"
  log "started $name (pid $pid, log $LOG_DIR/$name.log)"
}

# Stop the given components by their recorded PIDs: SIGTERM, SIGKILL after <grace> seconds, and
# give up (with a warning) if a process survives SIGKILL for 5 s more (proc_stop).
#   stop_components <grace seconds> <component...>
stop_components() {
  local grace=$1 name files=()
  shift
  for name in "$@"; do files+=("$RUN_DIR/$name.pid"); done
  proc_stop "$grace" "${files[@]}" || true
  rm -f "${files[@]}"
}

# Print the last lines of a component's log to stderr.
log_tail() {
  local file="$LOG_DIR/$1.log"
  [[ -f $file ]] || return 0
  printf -- '----- last lines of %s -----\n' "$file" >&2
  tail -n "${2:-30}" "$file" >&2
  printf -- '----- end of %s -----\n' "$file" >&2
}

# Die if any component that has been started has exited, showing its log tail.
check_components_alive() {
  local name
  for name in "${COMPONENTS[@]}" "${NODE_COMPONENTS[@]}"; do
    [[ -f $RUN_DIR/$name.pid ]] || continue
    if ! component_alive "$name"; then
      log_tail "$name" 40
      die "$name exited during start (log: $LOG_DIR/$name.log)"
    fi
  done
}

# Poll <command> every 0.5 s until it succeeds, for at most WAIT_SECONDS. Fails as soon as a
# started component dies; on timeout, shows the log tails of <components to blame>.
#   wait_for "<description>" "<components to blame>" <command...>
wait_for() {
  local what=$1 blame=$2 deadline=$((SECONDS + WAIT_SECONDS)) start=$SECONDS name
  shift 2
  until "$@" >/dev/null 2>&1; do
    check_components_alive
    if ((SECONDS >= deadline)); then
      for name in $blame; do log_tail "$name" 30; done
      die "timed out after ${WAIT_SECONDS}s waiting for $what"
    fi
    sleep 0.5
  done
  log "ready: $what ($((SECONDS - start))s)"
}
