# shellcheck shell=bash
# The real node (optional; RESTARTER_CLUSTER_REAL_NODE=1 at `up`): containerd, runc, CNI, a kubelet
# and kube-proxy, running as host processes inside the cluster's network namespace beside the
# kwok nodes, so that pods asking for it run in real containers. Sourced, never executed. Uses
# common.sh, build.sh, pki.sh, run.sh and images.sh.
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
KUBELET_PORT=10250
KUBELET_HEALTHZ_PORT=10248
PROXY_HEALTHZ_PORT=10256
PROXY_METRICS_PORT=10249
# Grace of kubelet and kube-proxy at `down` (neither has anything to flush); containerd's.
NODE_STOP_GRACE_SECONDS=10

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

write_containerd_config() {
  local runc
  runc=$(PATH="$PATH:/usr/sbin:/sbin" command -v runc)
  # Every path per cluster. Beside the defaults:
  #   imports = []                      never read the host's /etc/containerd/conf.d
  #   disabled_plugins                  opt (installs into /opt/containerd), NRI (a socket in
  #                                     /var/run/nri), the image verifier (/opt), snapshotters the
  #                                     node does not use
  #   pinned_images.sandbox             the test image (images.sh): no registry to pull pause from
  #   registry config_path              the hosts of the node's registry (registry.sh): its CA
  #   use_internal_loopback             containerd brings up each pod's lo itself: no loopback
  #                                     plugin, no libcni cache entry under an unshared name
  #   netns_mounts_under_state_dir      pods' network namespaces under state/, not /var/run/netns
  #   restrict_oom_score_adj            no container's oom_score_adj below containerd's own (0):
  #                                     lowering it needs CAP_SYS_RESOURCE, which root lacks on
  #                                     sandboxed machines (this one), where runc then fails every
  #                                     sandbox ("failed to update /proc/self/oom_score_adj to
  #                                     '-998': Permission denied"); elsewhere it only keeps
  #                                     guaranteed pods and sandboxes at 0 instead of -997/-998
  #   enable_criu = false               no checkpointing (criu is not installed)
  #   runc options Root, BinaryName     runc's state per cluster; Debian's runc
  #   shim socket_dir                   per cluster (default /run/containerd/s)
  cat >"$NODE_DIR/containerd/config.toml" <<EOF
version = 4
root = '$NODE_DIR/containerd/root'
state = '$NODE_DIR/containerd/state'
imports = []
disabled_plugins = [
  'io.containerd.internal.v1.opt',
  'io.containerd.nri.v1.nri',
  'io.containerd.image-verifier.v1.bindir',
  'io.containerd.snapshotter.v1.blockfile',
  'io.containerd.snapshotter.v1.erofs',
  'io.containerd.differ.v1.erofs',
  'io.containerd.mount-handler.v1.erofs',
]

[plugins.'io.containerd.server.v1.grpc']
  address = '$CONTAINERD_SOCK'

[plugins.'io.containerd.server.v1.ttrpc']
  address = '$CONTAINERD_SOCK.ttrpc'

[plugins.'io.containerd.shim.v1.manager']
  socket_dir = '$SHIM_SOCKET_DIR'

[plugins.'io.containerd.cri.v1.images']
  snapshotter = 'overlayfs'
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = '$TEST_IMAGE'
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = '$CONTAINERD_CERTS_DIR'

[plugins.'io.containerd.cri.v1.runtime']
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = true
  enable_criu = false
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = 'runc'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = '$runc'
        Root = '$NODE_DIR/runc'
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['/usr/lib/cni']
    conf_dir = '$NODE_DIR/cni/net.d'
    max_conf_num = 1
    use_internal_loopback = true

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = '127.0.0.1'
  stream_server_port = '0'
EOF
}

# The pod network: Debian's bridge plugin (cni0, the gateway address, hairpin so that a pod
# reaches itself through its own Service) with host-local addresses from NODE_POD_CIDR, leases
# under cni/ipam. No masquerading: nothing leaves the namespace.
write_cni_config() {
  cat >"$NODE_DIR/cni/net.d/10-restarter.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "restarter-$CLUSTER_NAME",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$NODE_BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{"subnet": "$NODE_POD_CIDR", "gateway": "$NODE_GATEWAY"}]],
        "routes": [{"dst": "0.0.0.0/0"}],
        "dataDir": "$NODE_DIR/cni/ipam"
      }
    }
  ]
}
EOF
}

# The kubelet's configuration; each setting that differs from the default says why.
# shellcheck disable=SC2153  # NODE_IP is run.sh's
write_kubelet_config() {
  # Pods' resolv.conf: clusterDNS is NODE_IP, where nothing serves DNS, so a lookup in a pod is
  # refused at once (no DNS server exists here; the host's resolvers must never be asked), and
  # the kubelet does not warn about a missing cluster DNS on every pod. This file (the host's
  # /etc/resolv.conf otherwise) gives no nameserver and no search domain of the host's.
  echo '# no host resolvers: the cluster namespace has no route out' >"$NODE_DIR/resolv.conf"
  cat >"$NODE_DIR/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# The kernel has cgroup v1 only; the kubelet refuses it unless told (deprecated since 1.35).
failCgroupV1: false
# No systemd: cgroups are made directly. The pods' cgroups go under a root of this cluster's own.
cgroupDriver: cgroupfs
cgroupRoot: /$NODE_CGROUP
cgroupsPerQOS: true
# Do not refuse to run on a machine with swap (a developer's may have some).
failSwapOn: false
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
podLogsDir: $NODE_DIR/pod-logs
# Serving (logs, exec, port-forward) on the node address only, with a certificate of the cluster
# CA; clients authenticated by the cluster CA (the apiserver's kubelet client certificate) or a
# token, authorized by the apiserver (SubjectAccessReview). No read-only port.
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $PKI_DIR/kubelet-serving.crt
tlsPrivateKeyFile: $PKI_DIR/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI_DIR/ca.crt}
authorization:
  mode: Webhook
rotateCertificates: false
serverTLSBootstrap: false
registerNode: true
registerWithTaints:
  - {key: $NODE_LABEL_KEY, value: "true", effect: NoSchedule}
clusterDomain: cluster.local
clusterDNS: [$NODE_IP]
resolvConf: $NODE_DIR/resolv.conf
# This machine's disk and memory are the developer's or CI's: never evict a test's pod or delete
# a loaded image because the disk is fuller than a production node's thresholds. Only an almost
# full disk or memory evicts; image garbage collection is off (100).
evictionHard:
  memory.available: 50Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
  imagefs.inodesFree: 1%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# Graceful node shutdown needs systemd-logind; off.
shutdownGracePeriod: 0s
shutdownGracePeriodCriticalPods: 0s
EOF
}

write_kube_proxy_config() {
  # conntrack: 0 everywhere means "leave the kernel's setting": nf_conntrack_max and the hash size
  # are the whole machine's, not the namespace's. localhostNodePorts: false, so it does not set
  # route_localnet (NodePorts on 127.0.0.1 are not needed). bindAddress: the node address
  # (kube-proxy's primary node IP) without waiting for the Node object. oomScoreAdj: 0, its own;
  # -999 needs CAP_SYS_RESOURCE (see restrict_oom_score_adj in write_containerd_config).
  cat >"$NODE_DIR/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $PKI_DIR/kube-proxy.kubeconfig
hostnameOverride: $NODE_NAME
bindAddress: $NODE_IP
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
mode: iptables
clusterCIDR: $NODE_POD_CIDR
oomScoreAdj: 0
iptables:
  localhostNodePorts: false
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
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

# --- teardown -----------------------------------------------------------------------------------

# SIGKILL every process in the node's cgroups (the containers, the pods' sandboxes) until none is
# left, for 10 s at most.
kill_node_containers() {
  local h pids tries=0
  while ((tries++ < 100)); do
    pids=$(while read -r h; do
        [[ -d $h/$NODE_CGROUP ]] && find "$h/$NODE_CGROUP" -name cgroup.procs -exec cat {} + 2>/dev/null
      done < <(cgroup_hierarchies) | sort -u)
    [[ -n $pids ]] || return 0
    # shellcheck disable=SC2086  # one PID a word
    as_root kill -KILL $pids 2>/dev/null || true
    sleep 0.1
  done
  log "warning: processes still in the cgroups of $NODE_CGROUP: $pids"
}

# SIGKILL the shims of this cluster's containerd: each has `-address <our socket>` on its command
# line. A shim outlives containerd by design; its containers are gone by now.
kill_node_shims() {
  local f pids=() pid
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}
    pid=${pid%/cmdline}
    # The command line's NULs become newlines.
    if grep -qxF -- "$CONTAINERD_SOCK" <<<"$({ tr '\0' '\n' <"$f"; } 2>/dev/null)"; then pids+=("$pid"); fi
  done
  ((${#pids[@]})) || return 0
  as_root kill -KILL "${pids[@]}" 2>/dev/null || true
}

# Print the mount points at or under $NODE_DIR, deepest first (mountinfo escapes spaces as \040).
node_mounts() {
  awk -v dir="$NODE_DIR" '{ p = $5; gsub(/\\040/, " ", p); if (p == dir || index(p, dir "/") == 1) print p }' \
    /proc/self/mountinfo | awk '{ print length($0) "\t" $0 }' | sort -rn | cut -f2-
}

# Unmount everything under $NODE_DIR (containers' root filesystems, pods' volumes and network
# namespaces), then $NODE_DIR itself. A busy one is detached (umount -l).
unmount_node() {
  local mp mps=() passes=0
  while ((passes++ < 5)); do
    mapfile -t mps < <(node_mounts)
    ((${#mps[@]})) || return 0
    for mp in "${mps[@]}"; do
      as_root umount "$mp" 2>/dev/null || as_root umount -l "$mp" 2>/dev/null || true
    done
  done
  node_mounts | sed 's/^/cluster: warning: still mounted: /' >&2
}

# rmdir the node's cgroups, deepest first, in every hierarchy (a cgroup goes once its last process
# has exited, which may take a moment after SIGKILL).
remove_node_cgroups() {
  local h tries
  while read -r h; do
    tries=0
    while [[ -d $h/$NODE_CGROUP ]] && ((tries++ < 50)); do
      as_root find "$h/$NODE_CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null || sleep 0.1
    done
    [[ ! -d $h/$NODE_CGROUP ]] || log "warning: could not remove the cgroup $h/$NODE_CGROUP"
  done < <(cgroup_hierarchies)
}

# Stop the real node and remove everything it made (see the top of this file). Safe when it never
# ran, and after a crash: it goes by what is there (cgroups, command lines, mounts), not by what was
# recorded. Fast when there is nothing: $NODE_DIR is the first thing the node makes and the last
# this removes. netns-goes (from `down`): the namespace side is left to the namespace's
# deletion; netns-stays (the node alone stops): it is removed here.
#   stop_node netns-goes|netns-stays
stop_node() {
  stop_netpol "$1"     # the node's policy controller (lib/netpol.sh), if it ran
  [[ -e $NODE_DIR || -f $NODE_MARKER ]] || return 0
  # The kubelet first, so that it does not restart the containers killed next.
  stop_components "$NODE_STOP_GRACE_SECONDS" kube-proxy kubelet
  kill_node_containers
  stop_components "$NODE_STOP_GRACE_SECONDS" containerd registry
  kill_node_shims
  unmount_node
  remove_node_cgroups
  # The namespace side, when only the node stops: kube-proxy's rules, the bridge and with it the
  # Service route.
  if [[ $1 == netns-stays ]] && netns_exists; then
    if [[ -x $BIN_DIR/kube-proxy ]]; then node_exec "$BIN_DIR/kube-proxy" --cleanup >/dev/null 2>&1 || true; fi
    node_exec ip link del "$NODE_BRIDGE" 2>/dev/null || true
  fi
  as_root rm -rf "$SHIM_SOCKET_DIR"
  as_root rmdir /run/restarter 2>/dev/null || true
  local link
  for link in /var/log/containers/*; do
    [[ -L $link && $(readlink "$link") == "$NODE_DIR"/* ]] && as_root rm -f "$link"
  done
  as_root rm -f /var/lib/cni/results/"restarter-$CLUSTER_NAME"-*
  # libcni makes these directories again at every write; /var/log/containers stays (a running
  # kubelet of another cluster makes it only at its start).
  as_root rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null || true
  # Never remove what might still be a mount of something else's files.
  if [[ -n $(node_mounts) ]]; then
    log "warning: leaving $NODE_DIR in place: mounts remain under it"
  else
    as_root rm -rf "$NODE_DIR"
  fi
  rm -f "$NODE_MARKER"
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
