#!/usr/bin/env bash
# Generation bookkeeping for the Reloader-annotation suites (reloader-annotations,
# reloader-annotations-webhook, reloader-switch): which Deployments of the namespace rolled, and how
# often, since the last snapshot. A Deployment's metadata.generation grows by one per template
# change, so "rolled exactly once" is "generation + 1", and "never" is "generation unchanged". (It
# also grows when the Deployment's metadata annotations change, which restarter writes only together
# with a template change, except the baseline record of an opt-in: take a snapshot after it.)
#
# Usage (in kuttl TestStep scripts; kuttl sets NAMESPACE and KUBECONFIG):
#   reloader.sh snapshot               record every Deployment's generation
#   reloader.sh rolled KIND OBJECT [NAME...]
#                                      wait (bounded, 90 s) until each NAME's template annotation for
#                                      KIND/OBJECT (configmap or secret) holds the object's version
#                                      now and its generation is the snapshot's + 1; then every other
#                                      Deployment must still be at the snapshot's generation, and
#                                      every NAME at + 1 (not + 2). Takes a new snapshot.
#   reloader.sh unchanged              every Deployment is at the snapshot's generation
set -euo pipefail

die() { printf 'reloader.sh: %s\n' "$*" >&2; exit 1; }
: "${NAMESPACE:?NAMESPACE must be set (kuttl sets it)}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
state=${TMPDIR:-/tmp}/restarter-kuttl-reloader/$NAMESPACE
mkdir -p "$state"

generations() {
  kubectl -n "$NAMESPACE" get deployments -o json |
    jq -r '.items[] | "\(.metadata.name) \(.metadata.generation)"' | sort
}

snapshot() { generations >"$state/generations"; cat "$state/generations"; }

was() { awk -v n="$1" '$1 == n { print $2 }' "$state/generations"; }

unchanged() {
  local name gen before
  generations | while read -r name gen; do
    before=$(was "$name")
    [[ $gen == "$before" ]] || die "FAIL: deployment/$name rolled: generation $before -> $gen"
  done
  echo "no deployment rolled"
}

rolled() {
  local kind=$1 object=$2 name gen before version
  shift 2
  version=$("$here/workload.sh" version "$kind" "$object")
  for name in "$@"; do
    "$here/workload.sh" expect deployment "$name" "$kind.restarter.stackable.tech/$object" "$version"
  done
  generations | while read -r name gen; do
    before=$(was "$name")
    if grep -qx -- "$name" <<<"$(printf '%s\n' "$@")"; then
      [[ $gen == $((before + 1)) ]] || die "FAIL: deployment/$name: generation $before -> $gen, want one rollout"
    else
      [[ $gen == "$before" ]] || die "FAIL: deployment/$name rolled for $kind/$object: generation $before -> $gen"
    fi
  done
  echo "$kind/$object rolled exactly: ${*:-nothing}"
  snapshot >/dev/null
}

case ${1:-} in
  snapshot) snapshot ;;
  rolled) shift; rolled "$@" ;;
  unchanged) unchanged ;;
  *) die "usage: reloader.sh snapshot|rolled KIND OBJECT [NAME...]|unchanged" ;;
esac
