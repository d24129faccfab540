#!/usr/bin/env bash
# Helpers of the release suites (kuttl/release-tests, kuttl/kuttl-release.yaml): what
# tests/release/stage.sh built and published into the real node's registry, and the clients that
# verify and install it as users do. For TestStep scripts; kuttl sets NAMESPACE and KUBECONFIG,
# cluster.sh exec the registry's address and CA (RESTARTER_CLUSTER_REGISTRY, _CA).
#
#   release.sh dir                 build/release of this checkout (dist/, cosign.pub, previous-dist/)
#   release.sh version             the version released (dist/release.json)
#   release.sh previous            the previous release's version (tests/release/previous.env)
#   release.sh registry            host:port of the node's registry
#   release.sh field JQ            a field of dist/release.json (.index, .images[0].digest, ...)
#   release.sh cosign ARGS...      cosign ARGS, trusting the registry's CA, offline (a trusted root
#                                  without authorities: it reaches nothing but the registry);
#                                  verify and verify-attestation also get --key KEY (default
#                                  cosign.pub) and --insecure-ignore-tlog (none was written)
#   release.sh skopeo ARGS...      skopeo ARGS trusting the registry's CA
#   release.sh helm ARGS...        helm ARGS with the suite's own Helm directories; the registry's
#                                  CA for the commands that reach it (install, upgrade, pull, show)
#   release.sh key-file            the public key CI signed with
set -euo pipefail

die() { printf 'release.sh: %s\n' "$*" >&2; exit 1; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$repo/build/release
: "${RESTARTER_CLUSTER_REGISTRY:?run through tests/cluster/cluster.sh exec (no registry in the environment)}"
ca=${RESTARTER_CLUSTER_REGISTRY_CA:?no RESTARTER_CLUSTER_REGISTRY_CA}
[[ -f $work/dist/release.json ]] || die "no $work/dist/release.json: run tests/release/stage.sh build and publish first"
state=${TMPDIR:-/tmp}/restarter-kuttl-release/${NAMESPACE:-none}
mkdir -p "$state/helm" "$state/certs"
cp "$ca" "$state/certs/ca.crt"

cosign_cmd() {
  local sub=${1:?cosign SUBCOMMAND}; shift
  # The release's own offline trusted root (no authorities): cosign contacts only the registry.
  local args=(--registry-cacert "$ca" --trusted-root "$repo/cmd/release/offline/trusted-root.json")
  case $sub in
    verify | verify-attestation)
      [[ " $* " == *" --key "* ]] || args+=(--key "$work/cosign.pub")
      args+=(--insecure-ignore-tlog=true) ;;
  esac
  cosign "$sub" "${args[@]}" "$@"
}

helm_cmd() {
  export HELM_CONFIG_HOME=$state/helm/config HELM_CACHE_HOME=$state/helm/cache HELM_DATA_HOME=$state/helm/data
  case ${1:-} in
    install | upgrade | pull | show | template) helm "$@" --ca-file "$ca" ;;
    *) helm "$@" ;;
  esac
}

case ${1:-} in
  dir) echo "$work" ;;
  version) jq -r .version "$work/dist/release.json" ;;
  previous) (source "$repo/tests/release/previous.env" && echo "$PREVIOUS_VERSION") ;;
  registry) echo "$RESTARTER_CLUSTER_REGISTRY" ;;
  field) jq -er "${2:?field JQ}" "$work/dist/release.json" ;;
  cosign) shift; cosign_cmd "$@" ;;
  skopeo) shift; sub=${1:?skopeo SUBCOMMAND}; shift
    case $sub in
      copy) skopeo copy --src-cert-dir "$state/certs" --dest-cert-dir "$state/certs" "$@" ;;
      *) skopeo "$sub" --cert-dir "$state/certs" "$@" ;;
    esac ;;
  helm) shift; helm_cmd "$@" ;;
  key-file) echo "$work/cosign.pub" ;;
  *) die "usage: release.sh dir|version|previous|registry|field JQ|cosign ARGS|skopeo ARGS|helm ARGS|key-file" ;;
esac
