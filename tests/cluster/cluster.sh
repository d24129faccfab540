#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Local Kubernetes control plane for restarter's tests: real etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, kwok (fake Nodes) and kuttl, built from the Go module
# proxy at the versions in versions.env, running in a network namespace with only loopback up;
# optionally a real node (containerd, runc, CNI, kubelet, kube-proxy) in the same namespace.
#
# Usage: tests/cluster/cluster.sh COMMAND
#   build            install missing host tools, build the pinned tools if not cached; prints the bin dir
#   build-tools TOOL...  build (if not cached) and link only these pinned tools (e.g. cosign registry
#                    helm krew, for cmd/release.sh); prints the bin dir
#   up               build if needed, start the cluster, wait until it is ready; prints the kubeconfig
#   down             stop what `up` started (by PID), delete the network namespace; keeps the logs
#   status           show the components; exit 0 when the cluster is up and ready, 1 otherwise
#   env              print the exports that `exec` applies (for use inside the namespace)
#   exec -- CMD...   run CMD inside the namespace with KUBECONFIG and the tools on PATH; CMD's exit code
#   load-image ARCHIVE...  import image archives (oci-archive, docker-archive) into the real node
#   stop-network-policy  stop the real node's policy controller (kube-router) and remove its rules
# RESTARTER_CLUSTER=<name> (default: default) selects the cluster (state dir, network namespace).
# RESTARTER_CLUSTER_REAL_NODE=1 at build/up: also build/start the real node (containerd, kubelet).
# RESTARTER_CLUSTER_NETWORK_POLICY=1 with it: also build/start its NetworkPolicy enforcement (kube-router).
# RESTARTER_CLUSTER_CONTROL_PLANE_ONLY=1 at build/up: only the control plane, not the tests' tools
#   (kuttl, krew, helm, fluxssa, the Rollout CRD); cmd/demo.sh.
# RESTARTER_CLUSTER_ETCD_QUOTA_BYTES=N at up: etcd's database quota (default 2 GiB; the scale benchmark needs more).
# More in tests/cluster/README.md.
set -euo pipefail

CLUSTER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$CLUSTER_DIR/lib/common.sh"
source "$CLUSTER_DIR/lib/build.sh"
source "$CLUSTER_DIR/lib/recipes.sh"
source "$CLUSTER_DIR/lib/pki.sh"
source "$CLUSTER_DIR/lib/run.sh"
source "$CLUSTER_DIR/lib/netns.sh"
source "$CLUSTER_DIR/lib/images.sh"
source "$CLUSTER_DIR/lib/node.sh"
source "$CLUSTER_DIR/lib/node-config.sh"
source "$CLUSTER_DIR/lib/node-stop.sh"
source "$CLUSTER_DIR/lib/netpol.sh"
source "$CLUSTER_DIR/lib/registry.sh"
source "$CLUSTER_DIR/lib/commands.sh"

# Print the usage block at the top of this file; exit with $1.
usage() {
  sed -n '/^# Usage:/,/^# More in/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
  exit "$1"
}

main() {
  local cmd=${1:-}
  (($#)) && shift
  case $cmd in
    build)
      build_all
      if want_real_node; then build_node; fi
      if want_network_policy; then build_netpol; fi
      ;;
    build-tools)
      (($#)) || usage 2
      ensure_host_tools
      link_tools "$@"
      echo "$BIN_DIR"
      ;;
    up) cmd_up ;;
    down) cmd_down ;;
    status) cmd_status ;;
    env) cmd_env ;;
    exec) cmd_exec "$@" ;;
    load-image) cmd_load_image "$@" ;;
    stop-network-policy) lock_cluster; stop_netpol netns-stays ;;
    -h | --help | help) usage 0 ;;
    *) usage 2 ;;
  esac
}

main "$@"
