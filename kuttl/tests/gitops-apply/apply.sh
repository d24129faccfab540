#!/bin/sh
# apply.sh MODE SETTING: applies manifests.sh's output as that GitOps mode does.
#   csa: kubectl apply (client-side three-way merge, last-applied-configuration annotation)
#   ssa: kubectl apply --server-side with a field manager of its own (what Flux's
#        kustomize-controller and Argo CD's server-side apply do, each with its own manager)
set -eu
mode=$1 setting=$2
case $mode in
  csa) sh ./manifests.sh "$mode" "$setting" | kubectl -n "$NAMESPACE" apply -f - ;;
  ssa) sh ./manifests.sh "$mode" "$setting" | kubectl -n "$NAMESPACE" apply --server-side --field-manager=gitops -f - ;;
  *) echo "apply.sh: unknown mode $mode" >&2; exit 2 ;;
esac
