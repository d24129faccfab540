#!/usr/bin/env bash
# helm for the helm-install suite, run from its step scripts (in this directory; kuttl sets
# NAMESPACE and KUBECONFIG). The release is restarter-helm of manifests/helm/restarter in the
# test's namespace: its cluster-scoped objects are named restarter-helm-* (ClusterRoles, their
# bindings, the webhook's configuration restarter-helm-webhook.stackable.tech), so they never
# meet those of manifests/ (restarter-*, which install-manifests applies meanwhile) or of another
# suite. Helm's configuration, cache and data directories are the suite's own (under $TMPDIR), so
# nothing of the user's ~/.config/helm is read or written.
#
#   helm.sh run ARGS...            helm ARGS with the suite's directories
#   helm.sh install|upgrade ARGS   helm install / upgrade of the release (--wait), ARGS appended;
#                                  saves the revision's manifest as manifest.<revision>.yaml
#   helm.sh manifests              the saved manifests of every revision, concatenated
#   helm.sh state                  the suite's state directory (kubeconfigs, manifests)
#   helm.sh absent FILE            wait (bounded) until every object of FILE is gone from the
#                                  cluster; fail naming those still there
#   helm.sh no-leftovers           wait (bounded) until no object of any listable kind in any
#                                  namespace carries the release's label (the Deployments' ReplicaSets
#                                  and pods go after them, by garbage collection); fail naming them
set -euo pipefail

die() { printf 'helm.sh: %s\n' "$*" >&2; exit 1; }
: "${NAMESPACE:?NAMESPACE must be set (kuttl sets it)}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
chart=$(cd "$here/../../../manifests/helm/restarter" && pwd)
release=restarter-helm
# Bound of each wait (2 busy cores; returns as soon as it holds).
WAIT_SECONDS=90
state=${TMPDIR:-/tmp}/restarter-kuttl-helm/$NAMESPACE
mkdir -p "$state/helm"
export HELM_CONFIG_HOME=$state/helm/config HELM_CACHE_HOME=$state/helm/cache HELM_DATA_HOME=$state/helm/data

save_manifest() {
  local revision
  revision=$(helm status "$release" -n "$NAMESPACE" -o json | jq -r .version)
  helm get manifest "$release" -n "$NAMESPACE" --revision "$revision" >"$state/manifest.$revision.yaml"
  echo "release $release revision $revision: $(grep -c '^kind:' "$state/manifest.$revision.yaml") objects"
}

# await WHAT CMD...: wait (bounded) until CMD prints nothing; fail with WHAT and what it printed.
# CMD failing fails at once: a query that cannot run proves nothing.
await() {
  local what=$1 out deadline=$((SECONDS + WAIT_SECONDS))
  shift
  while :; do
    out=$("$@") || die "$* failed"
    [[ -z $out ]] && return 0
    ((SECONDS < deadline)) || die "$what after ${WAIT_SECONDS}s: $(echo "$out" | tr '\n' ' ')"
    sleep 0.5
  done
}

case ${1:-} in
  run) shift; exec helm "$@" ;;
  install | upgrade)
    verb=$1; shift
    helm "$verb" "$release" "$chart" -n "$NAMESPACE" --wait --timeout 120s "$@"
    save_manifest ;;
  manifests) cat "$state"/manifest.*.yaml ;;
  state) echo "$state" ;;
  absent)
    file=${2:?FILE}
    await "still there" kubectl get -f "$file" --ignore-not-found -o name ;;
  no-leftovers)
    kinds=$(kubectl api-resources --verbs=list -o name | paste -sd, -)
    await "left behind" kubectl get "$kinds" -A -l "app.kubernetes.io/instance=$release" -o name ;;
  *) die "usage: helm.sh run|install|upgrade|manifests|state|absent|no-leftovers" ;;
esac
