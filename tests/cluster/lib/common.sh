# shellcheck shell=bash disable=SC2034  # the variables here are used by the other files
# Shared definitions for tests/cluster/cluster.sh: logging, pinned versions, paths.
# Sourced, never executed. Requires CLUSTER_DIR (the tests/cluster directory) to be set.

log() { printf 'cluster: %s\n' "$*" >&2; }
die() { printf 'cluster: error: %s\n' "$*" >&2; exit 1; }

# Run a command as root: directly when we are root, else through sudo.
as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi
}

# shellcheck source=SCRIPTDIR/../versions.env
source "$CLUSTER_DIR/versions.env"

# The tools module of tool $1 (k8s, etcd, kwok, kuttl, krew, helm, fluxssa, kubenode, containerd,
# cosign, registry, kuberouter, argorollouts)
# with the pinned versions filled in.
rendered_module() {
  sed -e "s/@K8S_VERSION@/$K8S_VERSION/g" -e "s/@ETCD_VERSION@/$ETCD_VERSION/g" \
      -e "s/@KWOK_VERSION@/$KWOK_VERSION/g" -e "s/@KUTTL_VERSION@/$KUTTL_VERSION/g" \
      -e "s/@KREW_VERSION@/$KREW_VERSION/g" -e "s/@HELM_VERSION@/$HELM_VERSION/g" \
      -e "s/@FLUXSSA_VERSION@/$FLUXSSA_VERSION/g" -e "s/@CONTAINERD_VERSION@/$CONTAINERD_VERSION/g" \
      -e "s/@COSIGN_VERSION@/$COSIGN_VERSION/g" -e "s/@REGISTRY_VERSION@/$REGISTRY_VERSION/g" \
      -e "s/@KUBEROUTER_VERSION@/$KUBEROUTER_VERSION/g" -e "s/@ARGOROLLOUTS_VERSION@/$ARGOROLLOUTS_VERSION/g" \
      "$CLUSTER_DIR/tools/$1/go.mod.in"
}

# The pinned version of tool $1: <TOOL>_VERSION, but K8S_VERSION for k8s and kubenode (both are
# built from k8s.io/kubernetes).
tool_version() {
  local var
  case $1 in
    k8s | kubenode) echo "$K8S_VERSION" ;;
    *) var="${1^^}_VERSION"; echo "${!var}" ;;
  esac
}

# Cache layout (outside the work tree, shared by every clone on the machine):
#   $CACHE_ROOT/tools/<tool>-<version>-<key>/   one built tool: mod/ (its tools module), bin/,
#                                               build.log, build-seconds, .complete
#   $CACHE_ROOT/<VERSIONS_KEY>/bin/             symlinks to every tool of this set of versions
# A tool's <key> hashes its rendered tools module (so every pin in it), RECIPE_REVISION and the
# tool's own source files if it has any (tool_sources): a tool is rebuilt only when one of those
# changes; the others are reused.
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/restarter/cluster"

# Name and content of every file of tools/<tool>/ but its go.mod.in, in name order: the source of a
# tool written here (fluxssa's main.go); nothing for a tool built from the module proxy alone.
tool_sources() {
  local f
  for f in "$CLUSTER_DIR/tools/$1"/*; do
    [[ ${f##*/} == go.mod.in ]] && continue
    printf 'file %s\n' "${f##*/}"
    cat "$f"
  done
}

declare -A TOOL_KEY=()
for _tool in k8s etcd kwok kuttl krew helm fluxssa kubenode containerd cosign registry kuberouter argorollouts; do
  TOOL_KEY[$_tool]=$(printf '%s\nrecipe %s\n%s' "$(rendered_module "$_tool")" "$RECIPE_REVISION" \
    "$(tool_sources "$_tool")" | sha256sum | cut -c1-10)
done
unset _tool
VERSIONS_KEY="k8s-${K8S_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}_$(
  printf '%s\n' "${TOOL_KEY[k8s]}" "${TOOL_KEY[etcd]}" "${TOOL_KEY[kwok]}" | sha256sum | cut -c1-10)"
BIN_DIR="$CACHE_ROOT/$VERSIONS_KEY/bin"
# The tests' tools, outside the control plane's version set (not in VERSIONS_KEY, so adding one
# rebuilds nothing else): each is built into its own cache entry and linked into $BIN_DIR by
# `build` and `up`, unless RESTARTER_CLUSTER_CONTROL_PLANE_ONLY=1 (cmd/demo.sh, which runs none of
# them: on a machine with nothing cached they are about five minutes of its first run).
EXTRA_TOOLS=(kuttl krew helm fluxssa argorollouts)
# The real node's tools (lib/node.sh), outside VERSIONS_KEY too: built and linked into $BIN_DIR only
# when the node is asked for (RESTARTER_CLUSTER_REAL_NODE=1 at build or up), so a cluster without it
# never waits for them.
NODE_TOOLS=(kubenode containerd registry)
# The release's signer (cmd/release.sh), outside VERSIONS_KEY too: built and linked by
# `cluster.sh build-tools cosign` (the registry is a node tool: lib/registry.sh).
# kwok Stage objects taken from the kwok module at build time (up adds our own pod-delete).
KWOK_STAGES="$CACHE_ROOT/$VERSIONS_KEY/kwok-stages.yaml"

# Cluster identity. RESTARTER_CLUSTER selects the state directory and the network namespace, so
# several clusters can run side by side (each namespace has its own loopback, so ports may repeat).
CLUSTER_NAME="${RESTARTER_CLUSTER:-default}"
[[ $CLUSTER_NAME =~ ^[a-z0-9][a-z0-9-]{0,30}$ ]] \
  || die "RESTARTER_CLUSTER='$CLUSTER_NAME': use 1-31 characters from a-z, 0-9 and '-'"
NETNS="restarter-$CLUSTER_NAME"
# State (PKI, kubeconfig, etcd data, logs, PIDs) lives outside the work tree and survives `down`
# for debugging; `up` clears it except for old logs, which it keeps as *.log.prev.
STATE_DIR="${XDG_STATE_HOME:-$HOME/.local/state}/restarter/cluster/$CLUSTER_NAME"
KUBECONFIG_FILE="$STATE_DIR/kubeconfig"
