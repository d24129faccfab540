# shellcheck shell=bash
# The real node's configuration files (lib/node.sh): containerd's, the CNI network's, the
# kubelet's and kube-proxy's, written under $NODE_DIR at each start; each setting that differs from
# the default says why. Sourced, never executed. Uses node.sh's NODE_* and run.sh's NODE_IP,
# PKI_DIR, SERVICE_CIDR.

KUBELET_PORT=10250
KUBELET_HEALTHZ_PORT=10248
PROXY_HEALTHZ_PORT=10256
PROXY_METRICS_PORT=10249

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
