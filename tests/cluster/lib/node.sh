# shellcheck shell=bash
# The real node (optional; RESTARTER_CLUSTER_REAL_NODE=1 at `up`): containerd, runc, CNI, a kubelet
# and kube-proxy, running as host processes inside the cluster's network namespace beside the
# kwok nodes, so that pods asking for it run in real containers: what it needs, its start and its
# status. Its configuration files are node-config.sh's, its stop node-stop.sh's. Sourced, never
# executed. Uses common.sh, build.sh, pki.sh, run.sh and images.sh.
#
# Per cluster, so that two clusters never collide and `down` removes all of it:
#   $NODE_DIR ($STATE_DIR/node)   bind-mounted on itself and made shared while the node runs (see
#                                 start_kubelet), holding:
#     containerd/                 config.toml, containerd.sock, root/ (images, snapshots), state/
#                                 (task bundles with the containers' root filesystem mounts, and
#                                 the pods' network namespace mounts: netns_mounts_under_state_dir)
#     runc/                       runc's --root
#     cni/net.d/, cni/ipam/       the CNI network (bridge + host-local) and its address leases
#     kubelet/                    the kubelet's --root-dir (pods' volumes: tmpfs, bind mounts)
#     pod-logs/                   container logs (kubelet podLogsDir)
#     kernel/                     what the kubelet reads for six kernel settings (start_kubelet)
#     kubelet.yaml, kube-proxy.yaml, resolv.conf
#   cgroup /restarter-<name>      in every cgroup hierarchy: the kubelet's cgroupRoot (the pods')
#   $SHIM_SOCKET_DIR              containerd shims' sockets (/run/restarter/<name>; 42 characters
#                                 at most, containerd's limit)
#   in the namespace: the bridge cni0 with the pods' veths, routes, kube-proxy's iptables rules
#   (they go with the namespace)
#   /var/log/containers/*         the kubelet's links to container logs (a fixed path in the
#                                 kubelet), those pointing into $NODE_DIR
#   /var/lib/cni/results/restarter-<name>-*   libcni's cache of each pod's CNI result (containerd
#                                 does not let it be moved; named after our network)
#
# Addresses, all inside the namespace: NODE_IP 10.240.0.1 (run.sh; on lo: the node's InternalIP
# and the apiserver's advertised address), pods 10.245.0.0/24 on the bridge cni0 (gateway
# 10.245.0.1), Services 10.96.0.0/16 routed to the bridge so that the namespace's own processes
# (the apiserver calling a webhook, `cluster.sh exec`) reach a ClusterIP through kube-proxy's DNAT.
# No default route: nothing can leave the namespace.

NODE_NAME=real-node
# The real node's label and taint: a pod lands on it only with a toleration of the taint and this
# label as its nodeSelector (tests/cluster/README.md, "The real node"). The taint keeps everything else off it,
# the DaemonSets of other tests included.
NODE_LABEL_KEY=restarter.test/real-node
NODE_POD_CIDR=10.245.0.0/24
NODE_GATEWAY=10.245.0.1
NODE_BRIDGE=cni0
NODE_COMPONENTS=(registry containerd kubelet kube-proxy)
NODE_DIR="$STATE_DIR/node"
NODE_CGROUP="restarter-$CLUSTER_NAME"
NODE_MARKER="$RUN_DIR/real-node"
CONTAINERD_SOCK="$NODE_DIR/containerd/containerd.sock"
SHIM_SOCKET_DIR="/run/restarter/$CLUSTER_NAME"
((${#SHIM_SOCKET_DIR} <= 42)) \
  || SHIM_SOCKET_DIR="/run/restarter/$(printf '%s' "$CLUSTER_NAME" | sha256sum | cut -c1-16)"

# Debian packages of the node's host commands: runc (the OCI runtime the shim runs), iptables
# and conntrack (kube-proxy), the CNI plugins (bridge, host-local), nsenter/unshare/mount.
declare -A NODE_HOST_PACKAGE=([runc]=runc [iptables]=iptables [ip6tables]=iptables
  [conntrack]=conntrack [nsenter]=util-linux [unshare]=util-linux [mount]=mount [umount]=mount
  [dpkg-deb]=dpkg [/usr/lib/cni/bridge]=containernetworking-plugins
  [/usr/lib/cni/host-local]=containernetworking-plugins [curl]=curl)

# True when RESTARTER_CLUSTER_REAL_NODE=1.
want_real_node() {
  case ${RESTARTER_CLUSTER_REAL_NODE:-0} in
    1) return 0 ;;
    0 | '') return 1 ;;
    *) die "RESTARTER_CLUSTER_REAL_NODE must be 1 or 0, got '$RESTARTER_CLUSTER_REAL_NODE'" ;;
  esac
}

# Install the node's missing host commands (root commands are looked up in the sbin directories too).
ensure_node_host_tools() {
  local missing=() what
  for what in "${!NODE_HOST_PACKAGE[@]}"; do
    if [[ $what == /* ]]; then
      [[ -x $what ]] && continue
    else
      PATH="$PATH:/usr/sbin:/sbin" command -v "$what" >/dev/null && continue
    fi
    missing+=("${NODE_HOST_PACKAGE[$what]}")
  done
  apt_install "${missing[@]}"
}

# Everything the node needs that is not per run: host packages, its tools, the test image.
build_node() {
  ensure_node_host_tools
  build_node_tools
  ensure_test_image >/dev/null
}

# Run a command as root inside the cluster's network namespace, in the host's mount namespace
# (unlike `ip netns exec`, which gives each command a mount namespace of its own: the kubelet's
# volume mounts would then be invisible to runc).
node_exec() { as_root nsenter --net="/run/netns/$NETNS" -- "$@"; }

# ctr against the node's containerd, namespace k8s.io (the CRI's), without containerd's warning
# that cgroup v1 is deprecated at every call (this kernel has no other).
node_ctr() {
  node_exec env CONTAINERD_SUPPRESS_DEPRECATION_WARNINGS=1 \
    "$BIN_DIR/ctr" --address "$CONTAINERD_SOCK" --namespace k8s.io "$@"
}

# Import an image archive into the node's containerd. ctr's output (progress, and containerd's
# deprecation warnings for cgroup v1) is shown only when the import fails.
import_image() {
  local out
  out=$(node_ctr images import "$1" 2>&1) || { printf '%s\n' "$out" >&2; die "ctr images import $1 failed"; }
}

node_running() { component_alive containerd && [[ -S $CONTAINERD_SOCK ]]; }

# True when the node was started and each of its processes still runs.
node_healthy() {
  local name
  [[ -f $NODE_MARKER ]] || return 1
  for name in "${NODE_COMPONENTS[@]}"; do component_alive "$name" || return 1; done
}

# --- readiness probes ---------------------------------------------------------------------------

containerd_ready() { node_ctr version; }
real_node_ready() {
  [[ $(kctl get node "$NODE_NAME" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}') == True ]]
}
# kube-proxy has written the rules of the `kubernetes` Service: Services are programmed.
services_programmed() {
  grep -q 'default/kubernetes:https' <<<"$(node_exec iptables -w 5 -t nat -S KUBE-SERVICES 2>/dev/null)"
}

# --- setup --------------------------------------------------------------------------------------

# Print the mount point of every cgroup hierarchy (v1 controllers, name=systemd, the v2 one).
cgroup_hierarchies() {
  awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i+1) == "cgroup" || $(i+1) == "cgroup2") print $5; break } }' \
    /proc/self/mountinfo
}

# The kubelet's cgroupRoot, /restarter-<name>, in every hierarchy: it refuses to start unless the
# root exists in each controller it uses (cpu, cpuacct, cpuset, memory, pids, name=systemd).
make_node_cgroups() {
  local h
  while read -r h; do
    as_root mkdir -p "$h/$NODE_CGROUP"
    # A new cpuset is empty (no CPU, no memory node): give it its parent's, or nothing can run in it.
    if [[ -f $h/$NODE_CGROUP/cpuset.cpus && -z $(<"$h/$NODE_CGROUP/cpuset.cpus") ]]; then
      # shellcheck disable=SC2016  # the script is sh's, its arguments come after it
      as_root sh -c 'cat "$1/cpuset.cpus" >"$1/$2/cpuset.cpus" && cat "$1/cpuset.mems" >"$1/$2/cpuset.mems"' \
        sh "$h" "$NODE_CGROUP"
    fi
  done < <(cgroup_hierarchies)
}

# The namespace side of the pod network: the bridge with its gateway address (made here, not by
# the CNI plugin at the first pod, so that the Service route below exists from the start),
# forwarding, bridged traffic through iptables (kube-proxy's DNAT must see a Service's reply
# between two pods of the bridge), and the Service range routed to the bridge.
setup_node_network() {
  [[ -d /proc/sys/net/bridge ]] || as_root modprobe br_netfilter \
    || die "the kernel has no br_netfilter (bridge-nf-call-iptables), which Services between pods need"
  node_exec sh -c 'echo 1 >/proc/sys/net/ipv4/ip_forward && echo 1 >/proc/sys/net/bridge/bridge-nf-call-iptables'
  node_exec ip link show "$NODE_BRIDGE" >/dev/null 2>&1 || node_exec ip link add "$NODE_BRIDGE" type bridge
  node_exec ip addr replace "$NODE_GATEWAY/${NODE_POD_CIDR#*/}" dev "$NODE_BRIDGE"
  node_exec ip link set "$NODE_BRIDGE" up
  node_exec ip route replace "$SERVICE_CIDR" dev "$NODE_BRIDGE"
}

# --- the node's processes -----------------------------------------------------------------------

start_containerd() {
  start_process containerd nsenter --net="/run/netns/$NETNS" -- \
    "$BIN_DIR/containerd" --config "$NODE_DIR/containerd/config.toml"
}

# The kubelet sets six kernel settings of the whole machine at start (vm.overcommit_memory=1,
# vm.panic_on_oom=0, kernel.panic=10, kernel.panic_on_oops=1, kernel.keys.root_maxkeys and
# root_maxbytes), or with protectKernelDefaults refuses to start unless they are so already. A
# test node must not change the developer's machine (kernel.panic_on_oops=1 turns an oops into a
# panic), so the kubelet runs in a mount namespace of its own in which those six files of
# /proc/sys are files of ours holding the values it wants: it reads them, finds nothing to do.
# Its other mounts must reach the host (runc, in containerd's namespace, bind-mounts the pods'
# volumes the kubelet mounts): $NODE_DIR is a shared mount (prepare_node_dirs), so what the
# kubelet mounts under it propagates to the host (`unshare --propagation unchanged`).
# shellcheck disable=SC2153  # NODE_IP is run.sh's
start_kubelet() {
  local spec path masks=()
  for spec in vm/overcommit_memory=1 vm/panic_on_oom=0 kernel/panic=10 kernel/panic_on_oops=1 \
              kernel/keys/root_maxkeys=1000000 kernel/keys/root_maxbytes=25000000; do
    path=${spec%%=*}
    echo "${spec#*=}" >"$NODE_DIR/kernel/${path//\//.}"
    masks+=("$NODE_DIR/kernel/${path//\//.}" "/proc/sys/$path")
  done
  # shellcheck disable=SC2016  # the script is sh's, its arguments come after it
  start_process kubelet nsenter --net="/run/netns/$NETNS" -- unshare --mount --propagation unchanged -- \
    sh -c 'while [ "$1" != -- ]; do mount --bind "$1" "$2" || exit 1; shift 2; done; shift; exec "$@"' \
    sh "${masks[@]}" -- \
    "$BIN_DIR/kubelet" --config="$NODE_DIR/kubelet.yaml" --kubeconfig="$PKI_DIR/kubelet.kubeconfig" \
    --root-dir="$NODE_DIR/kubelet" --hostname-override="$NODE_NAME" --node-ip="$NODE_IP" \
    --node-labels="$NODE_LABEL_KEY=true" --v=2
}

start_kube_proxy() {
  start_process kube-proxy nsenter --net="/run/netns/$NETNS" -- \
    "$BIN_DIR/kube-proxy" --config="$NODE_DIR/kube-proxy.yaml" --v=2
}

# A fresh $NODE_DIR, bind-mounted on itself and shared (start_kubelet says why).
prepare_node_dirs() {
  as_root mkdir -p "$NODE_DIR"
  as_root mount --bind "$NODE_DIR" "$NODE_DIR"
  as_root mount --make-rshared "$NODE_DIR"
  as_root mkdir -p "$NODE_DIR"/{containerd/root,containerd/state,runc,cni/net.d,cni/ipam,kubelet,pod-logs,kernel}
  as_root chown "$(id -u):$(id -g)" "$NODE_DIR" "$NODE_DIR"/{containerd,cni/net.d,kernel}
}

# Start the real node on a running control plane: `up` calls it after the control plane is ready.
# On failure (die), the caller's EXIT trap stops what was started.
start_node() {
  local start=$SECONDS image
  # A unix socket's path has 107 bytes at most; containerd's ttrpc socket is the longest.
  ((${#CONTAINERD_SOCK} + 6 <= 107)) \
    || die "the real node's socket path $CONTAINERD_SOCK.ttrpc is too long for a unix socket; use a shorter XDG_STATE_HOME or RESTARTER_CLUSTER"
  # A control plane started by an older cluster.sh lacks the apiserver's side (NODE_IP, its kubelet
  # client certificate); its version key may be the same.
  [[ -f $PKI_DIR/apiserver-kubelet-client.crt ]] \
    || die "cluster '$CLUSTER_NAME' was started without what the real node needs (an older cluster.sh); run down, then up"
  build_node
  image=$(ensure_test_image)
  touch "$NODE_MARKER"
  prepare_node_dirs
  make_node_pki "$PKI_DIR" "$NODE_NAME" "$NODE_IP"
  local server="https://127.0.0.1:$APISERVER_PORT"
  make_kubeconfig "$PKI_DIR" kubelet "$server" "$PKI_DIR/kubelet.kubeconfig"
  make_kubeconfig "$PKI_DIR" kube-proxy "$server" "$PKI_DIR/kube-proxy.kubeconfig"
  make_node_cgroups
  setup_node_network
  write_containerd_config
  start_registry
  write_cni_config
  write_kubelet_config
  write_kube_proxy_config
  start_containerd
  wait_for "containerd serving" "containerd" containerd_ready
  import_image "$image" >/dev/null
  # A Node left by an earlier run on this control plane would look Ready (from that run's status)
  # until the node lifecycle controller notices, 40 s later: make the kubelet register anew.
  kctl delete node "$NODE_NAME" --ignore-not-found >/dev/null
  start_kubelet
  start_kube_proxy
  wait_for "Node $NODE_NAME Ready" "kubelet containerd" real_node_ready
  wait_for "kube-proxy: Services programmed" "kube-proxy" services_programmed
  log "real node $NODE_NAME is up in $((SECONDS - start))s (label $NODE_LABEL_KEY=true, taint $NODE_LABEL_KEY=true:NoSchedule)"
}

# EXIT trap of `up` when it starts the node on a control plane that was already up.
on_node_up_exit() {
  log "starting the real node failed; stopping it (logs stay in $LOG_DIR)"
  stop_node netns-stays
}

# `status` lines of the node; status 1 when it was started and a process of it has exited.
node_status() {
  local name ok=0
  if [[ ! -f $NODE_MARKER ]]; then
    echo "real node:  not started (RESTARTER_CLUSTER_REAL_NODE=1 at up starts it)"
    return 0
  fi
  echo "real node:  $NODE_NAME ($NODE_IP, pods $NODE_POD_CIDR)"
  for name in "${NODE_COMPONENTS[@]}"; do
    if component_alive "$name"; then
      printf '%-24s running (pid %s)\n' "$name:" "$(proc_pid "$RUN_DIR/$name.pid")"
    else
      printf '%-24s not running\n' "$name:"
      ok=1
    fi
  done
  return "$ok"
}
