# shellcheck shell=bash
# The real node's NetworkPolicy implementation (optional; RESTARTER_CLUSTER_NETWORK_POLICY=1 at
# `up`, with RESTARTER_CLUSTER_REAL_NODE=1): kube-router's policy controller alone, a host process
# in the cluster's network namespace like kube-proxy, enforcing the cluster's NetworkPolicies on the
# real node's pods with iptables and ipset (kube-router --run-firewall, no router, no service
# proxy). Sourced by cluster.sh after node.sh, never executed.
#
# Why kube-router: its policy controller is a Go module (github.com/cloudnativelabs/kube-router/v2,
# built like the other tools, versions.env), runs as one host process without a container or its
# own CNI, and works with the bridge plugin (it filters bridged pod traffic in FORWARD through
# br_netfilter, which the node already turns on, and the node's own traffic in OUTPUT). Calico's
# Felix and Cilium need their own dataplane (BPF, their CNI or a datastore). It changes what the
# real node's pods may reach, so it is off unless asked for: only kuttl/netpol-tests use it.
#
# Rules it keeps (pkg/controllers/netpol): a pod selected by a policy takes only the ingress its
# rules allow, and always what comes from the node itself (`-m addrtype --src-type LOCAL`), which
# is how the kubelet's probes and the apiserver (a host process of the namespace) reach it here.

# Debian packages of its host commands (iptables is the node's already).
declare -A NETPOL_HOST_PACKAGE=([ipset]=ipset)

# True when RESTARTER_CLUSTER_NETWORK_POLICY=1 (which needs the real node).
want_network_policy() {
  case ${RESTARTER_CLUSTER_NETWORK_POLICY:-0} in
    1) want_real_node || die "RESTARTER_CLUSTER_NETWORK_POLICY=1 needs RESTARTER_CLUSTER_REAL_NODE=1"; return 0 ;;
    0 | '') return 1 ;;
    *) die "RESTARTER_CLUSTER_NETWORK_POLICY must be 1 or 0, got '$RESTARTER_CLUSTER_NETWORK_POLICY'" ;;
  esac
}

# Its host packages and the kuberouter tool (cached like the others; about 2 minutes cold).
build_netpol() {
  local missing=() what
  for what in "${!NETPOL_HOST_PACKAGE[@]}"; do
    PATH="$PATH:/usr/sbin:/sbin" command -v "$what" >/dev/null || missing+=("${NETPOL_HOST_PACKAGE[$what]}")
  done
  apt_install "${missing[@]}"
  link_tools kuberouter
}

netpol_running() { component_alive kube-router; }

# kube-router has synced the policies once: its chains hook FORWARD and its health endpoint answers.
netpol_ready() {
  node_exec iptables -w 5 -S KUBE-ROUTER-FORWARD >/dev/null 2>&1 &&
    [[ $(node_exec curl -s -m 2 "http://127.0.0.1:$NETPOL_HEALTH_PORT/healthz") == OK ]]
}

NETPOL_HEALTH_PORT=20244

# Start the policy controller on the running real node (the admin kubeconfig: test tooling, it
# reads Pods, Namespaces, NetworkPolicies and Nodes). --hostname-override names the Node whose
# pods it guards; --service-cluster-ip-range is the cluster's (run.sh); its health port stays on.
start_netpol() {
  local start=$SECONDS
  node_running || die "the policy controller needs the real node (RESTARTER_CLUSTER_REAL_NODE=1)"
  build_netpol
  start_process kube-router nsenter --net="/run/netns/$NETNS" -- env PATH="$PATH:/usr/sbin:/sbin" \
    "$BIN_DIR/kube-router" --run-firewall=true --run-router=false --run-service-proxy=false \
    --kubeconfig="$KUBECONFIG_FILE" --hostname-override="$NODE_NAME" \
    --service-cluster-ip-range="$SERVICE_CIDR" --health-port="$NETPOL_HEALTH_PORT" --v=1
  wait_for "kube-router: NetworkPolicies enforced on $NODE_NAME" "kube-router" netpol_ready
  log "NetworkPolicy enforcement (kube-router) is up in $((SECONDS - start))s"
}

# Stop it and, when the namespace stays, remove what it made: the jumps from INPUT, FORWARD and
# OUTPUT to its chains, its chains (KUBE-ROUTER-*, KUBE-POD-FW-*, KUBE-NWPLCY-*; all in the filter
# table) and its ipsets (KUBE-DST-*, KUBE-SRC-*). Not `kube-router --cleanup-config`: in v2.1.0 it
# also deletes every IPVS service and then panics in the service proxy's cleanup
# (deleteHairpinIptablesRules, nil pointer) with the policy chains still in place.
#   stop_netpol netns-goes|netns-stays
stop_netpol() {
  [[ -f $RUN_DIR/kube-router.pid ]] || return 0
  stop_components "$NODE_STOP_GRACE_SECONDS" kube-router
  [[ $1 == netns-stays ]] && netns_exists || return 0
  # shellcheck disable=SC2016  # the script's variables are its own (sh inside the namespace)
  node_exec sh -c '
    pattern="KUBE-ROUTER-|KUBE-POD-FW-|KUBE-NWPLCY-"
    for chain in INPUT FORWARD OUTPUT; do
      iptables -w 5 -S "$chain" | grep -E -- "-j KUBE-ROUTER-" | sed "s/^-A/-D/" |
        while read -r rule; do eval "iptables -w 5 $rule"; done
    done
    chains=$(iptables -w 5 -S | sed -n -E "s/^-N (($pattern)[^ ]*)\$/\1/p")
    for chain in $chains; do iptables -w 5 -F "$chain"; done
    for chain in $chains; do iptables -w 5 -X "$chain"; done
    for set in $(ipset list -n | grep -E "^KUBE-(DST|SRC)-"); do ipset destroy "$set"; done' ||
    log "warning: kube-router's rules may be left in the namespace"
}
