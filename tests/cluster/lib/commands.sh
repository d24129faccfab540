# shellcheck shell=bash
# cluster.sh's commands: up (start in order, tear down what was started when a step fails), down,
# status, env and exec, and the lock that serialises up and down of one cluster. Sourced, never
# executed. Uses common.sh, build.sh, pki.sh, run.sh, netns.sh, node.sh and netpol.sh.

# Grace periods of `down` before SIGKILL: the apiserver's clients and the apiserver may take a while
# to close their connections; etcd has only to flush.
STOP_GRACE_SECONDS=20
ETCD_STOP_GRACE_SECONDS=10

# True when every component runs, from the binaries of the current versions, and the apiserver
# is ready.
cluster_healthy() {
  local name
  netns_exists || return 1
  [[ -f $STATE_DIR/versions && $(<"$STATE_DIR/versions") == "$VERSIONS_KEY" ]] || return 1
  for name in "${COMPONENTS[@]}"; do component_alive "$name" || return 1; done
  apiserver_ready
}

# Stop what `up` started (by PID only) and delete the namespace. Safe when nothing runs.
stop_cluster() {
  # The real node first (lib/node.sh; nothing to do when it never ran): its kubelet and
  # kube-proxy are clients of the apiserver, its containers live in the namespace.
  stop_node netns-goes
  # Clients first, then the apiserver (so it can close its etcd connections), then etcd.
  stop_components "$STOP_GRACE_SECONDS" kwok kube-scheduler kube-controller-manager kube-apiserver
  stop_components "$ETCD_STOP_GRACE_SECONDS" etcd
  if netns_exists; then as_root ip netns delete "$NETNS"; fi
}

UP_DONE=0
# EXIT trap of `up`: an `up` that did not finish tears down what it started.
on_up_exit() {
  ((UP_DONE)) && return 0
  log "up failed; stopping what was started (logs stay in $LOG_DIR)"
  stop_cluster
}

# Serialise up and down of one cluster (fd 8, released at exit). Components must not inherit it:
# start_component closes it for them.
lock_cluster() {
  mkdir -p "$(dirname "$STATE_DIR")"
  exec 8>"$STATE_DIR.lock"
  flock -w 600 8 || die "another up/down of cluster '$CLUSTER_NAME' holds $STATE_DIR.lock"
}

cmd_up() {
  build_all >/dev/null
  want_real_node && build_node >/dev/null
  want_network_policy && build_netpol >/dev/null
  lock_cluster
  if cluster_healthy; then
    # Asked for the real node on a cluster that runs without it (or whose node died): start it
    # alone; a failure stops the node and leaves the control plane as it was.
    if want_real_node && ! node_healthy; then
      stop_node netns-stays
      trap on_node_up_exit EXIT
      start_node
      trap - EXIT
    fi
    # Likewise the policy controller (lib/netpol.sh), asked for on a node that runs without it.
    if want_network_policy && ! netpol_running; then
      trap 'stop_netpol netns-stays' EXIT
      start_netpol
      trap - EXIT
    fi
    log "cluster '$CLUSTER_NAME' is already up"
    print_kubeconfig
    return 0
  fi
  stop_cluster          # leftovers of a half-dead cluster
  local start=$SECONDS
  trap on_up_exit EXIT
  # Fresh state, but keep the previous run's logs for debugging.
  mkdir -p "$STATE_DIR"
  if [[ -d $LOG_DIR ]]; then rm -rf "$STATE_DIR/logs.prev"; mv "$LOG_DIR" "$STATE_DIR/logs.prev"; fi
  rm -rf "$PKI_DIR" "$STATE_DIR/etcd" "$RUN_DIR" "$STATE_DIR/kwok-home" "$STATE_DIR/kwok-stages.yaml" \
    "$KUBECONFIG_FILE"
  mkdir -p "$LOG_DIR" "$RUN_DIR"
  echo "$VERSIONS_KEY" >"$STATE_DIR/versions"

  make_pki "$PKI_DIR"
  local server="https://127.0.0.1:$APISERVER_PORT" user
  for user in kube-controller-manager kube-scheduler kwok; do
    make_kubeconfig "$PKI_DIR" "$user" "$server" "$PKI_DIR/$user.kubeconfig"
  done
  make_kubeconfig "$PKI_DIR" admin "$server" "$KUBECONFIG_FILE"
  create_netns

  start_etcd
  start_apiserver
  wait_for "kube-apiserver /readyz ok" "etcd kube-apiserver" apiserver_ready
  start_controller_manager
  start_scheduler
  start_kwok
  wait_for "Nodes created" "kube-apiserver" apply_nodes
  wait_for "ServiceAccount default/default present" "kube-controller-manager" default_sa_exists
  wait_for "Nodes Ready" "kwok kube-controller-manager" nodes_ready
  want_real_node && start_node
  want_network_policy && start_netpol
  UP_DONE=1
  trap - EXIT
  log "cluster '$CLUSTER_NAME' is up in $((SECONDS - start))s"
  print_kubeconfig
}

print_kubeconfig() {
  log "kubeconfig: $KUBECONFIG_FILE (use it inside netns $NETNS: cluster.sh exec -- CMD)"
  echo "$KUBECONFIG_FILE"
}

cmd_down() {
  lock_cluster
  stop_cluster
  log "cluster '$CLUSTER_NAME' is down (logs: $LOG_DIR)"
}

# Exit 0 when the cluster is up and ready, 1 otherwise.
cmd_status() {
  local name ok=0 pid
  echo "cluster:    $CLUSTER_NAME"
  echo "netns:      $NETNS ($(netns_exists && echo present || echo absent))"
  echo "state:      $STATE_DIR"
  echo "bin:        $BIN_DIR"
  echo "versions:   $( [[ -f $STATE_DIR/versions ]] && cat "$STATE_DIR/versions" || echo none) (current: $VERSIONS_KEY)"
  for name in "${COMPONENTS[@]}"; do
    if component_alive "$name"; then
      pid=$(proc_pid "$RUN_DIR/$name.pid")
      printf '%-24s running (pid %s)\n' "$name:" "$pid"
    else
      printf '%-24s not running\n' "$name:"
      ok=1
    fi
  done
  node_status || ok=1
  if ((ok == 0)) && apiserver_ready; then
    echo "readyz:     ok"
    echo "kubeconfig: $KUBECONFIG_FILE"
  else
    echo "readyz:     not ready"
    ok=1
  fi
  return "$ok"
}

# What `exec` sets, as shell code to eval (inside the namespace).
cmd_env() {
  printf 'export KUBECONFIG=%q\n' "$KUBECONFIG_FILE"
  # shellcheck disable=SC2016  # $PATH is expanded by whoever evaluates this
  printf 'export PATH=%q:"$PATH"\n' "$BIN_DIR"
  printf 'export RESTARTER_CLUSTER=%q\n' "$CLUSTER_NAME"
  printf 'export RESTARTER_CLUSTER_NETNS=%q\n' "$NETNS"
  printf 'export RESTARTER_CLUSTER_STATE_DIR=%q\n' "$STATE_DIR"
  printf 'export RESTARTER_CLUSTER_AUDIT_LOG=%q\n' "$LOG_DIR/audit.log"
  # The real node's containerd (lib/node.sh), for ctr (on PATH; root only): the images, containers
  # and tasks of the pods are in its k8s.io namespace. Without containerd's warning at every call
  # that cgroup v1 is deprecated (this kernel has no other).
  printf 'export CONTAINERD_ADDRESS=%q\n' "$CONTAINERD_SOCK"
  printf 'export CONTAINERD_NAMESPACE=k8s.io CONTAINERD_SUPPRESS_DEPRECATION_WARNINGS=1\n'
  # The real node's registry (lib/registry.sh) and the CA its certificate is signed by.
  printf 'export RESTARTER_CLUSTER_REGISTRY=%q RESTARTER_CLUSTER_REGISTRY_CA=%q\n' "$REGISTRY_ADDR" "$PKI_DIR/ca.crt"
  printf '# Clients must run inside the network namespace: ip netns exec %s CMD, or cluster.sh exec -- CMD\n' "$NETNS"
}

# Run CMD inside the namespace with the environment of `env`; exits with CMD's status.
cmd_exec() {
  [[ ${1:-} == -- ]] && shift
  (($#)) || die "usage: cluster.sh exec -- CMD [ARGS...]"
  netns_exists || die "cluster '$CLUSTER_NAME' is not up (no network namespace $NETNS); run: cluster.sh up"
  [[ -f $KUBECONFIG_FILE ]] || die "cluster '$CLUSTER_NAME' has no kubeconfig; run: cluster.sh up"
  export KUBECONFIG="$KUBECONFIG_FILE" PATH="$BIN_DIR:$PATH" RESTARTER_CLUSTER="$CLUSTER_NAME" \
    RESTARTER_CLUSTER_NETNS="$NETNS" RESTARTER_CLUSTER_STATE_DIR="$STATE_DIR" \
    RESTARTER_CLUSTER_AUDIT_LOG="$LOG_DIR/audit.log" CONTAINERD_ADDRESS="$CONTAINERD_SOCK" \
    CONTAINERD_NAMESPACE=k8s.io CONTAINERD_SUPPRESS_DEPRECATION_WARNINGS=1 \
    RESTARTER_CLUSTER_REGISTRY="$REGISTRY_ADDR" RESTARTER_CLUSTER_REGISTRY_CA="$PKI_DIR/ca.crt"
  netns_argv
  exec "${NETNS_ARGV[@]}" "$@"
}
