#!/usr/bin/env bash
# Helpers of node-netpol (README.md). Run by its steps inside the cluster's network namespace.
#   netpol.sh enforced            fail unless kube-router's policy controller guards the real node
#   netpol.sh apply-policy PATCH  apply the webhook's NetworkPolicy as manifests/ renders it with the
#                                 kustomize patch PATCH (a file: the JSON patch ops of docs/install.md
#                                 "Network placement"), or, with PATCH "none", as manifests/ ships it;
#                                 prints the ingress rules applied
#   netpol.sh targets             "IP PORT what" lines: each webhook pod's https and health ports, the
#                                 Service's ClusterIP and port
#   netpol.sh until-state POD open|refused IP PORT   wait (60 s at most) until it is so
#   netpol.sh connect POD IP PORT exit 0 when the pod POD (of $NAMESPACE) opens a TCP connection to
#                                 IP:PORT within 2 s (busybox nc, from the pod's own address)
set -euo pipefail
die() { printf 'netpol.sh: %s\n' "$*" >&2; exit 1; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
manifests=$(cd "$here/../../../manifests" && pwd)

enforced() {
  iptables -w 5 -S KUBE-ROUTER-FORWARD >/dev/null 2>&1 ||
    die "no NetworkPolicy enforcement on the real node (kube-router's chains are missing): start it with RESTARTER_CLUSTER_REAL_NODE=1 RESTARTER_CLUSTER_NETWORK_POLICY=1 tests/cluster/cluster.sh up"
}

# The policy restarter-webhook as kustomize renders manifests/ with the patch file $1 (or none).
rendered_policy() {
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/restarter-netpol.XXXXXX")
  {
    echo "resources:"
    echo "  - $(realpath --relative-to="$dir" "$manifests")"
    if [[ $1 != none ]]; then
      echo "patches:"
      echo "  - target: {kind: NetworkPolicy, name: restarter-webhook}"
      echo "    patch: |-"
      sed 's/^/      /' "$1"
    fi
  } >"$dir/kustomization.yaml"
  kubectl kustomize "$dir" | kubectl create --dry-run=client -o json -f - |
    jq -e '(if .kind == "List" then .items[] else . end) | select(.kind == "NetworkPolicy" and .metadata.name == "restarter-webhook")'
  rm -rf "$dir"
}

apply_policy() {
  local policy
  policy=$(rendered_policy "$1") || die "cannot render the webhook's NetworkPolicy with $1"
  jq -c .spec.ingress <<<"$policy"
  kubectl apply -f - <<<"$policy" >/dev/null
}

# until-state POD open|refused IP PORT: wait (bounded) until POD's connections to IP:PORT are in
# that state, as kube-router rewrites its chains after a policy's change (a second or so).
until_state() {
  local deadline=$((SECONDS + 60))
  while :; do
    if connect "$1" "$3" "$4"; then [[ $2 == open ]] && return 0
    else [[ $2 == refused ]] && return 0; fi
    ((SECONDS < deadline)) || die "$1 -> $3:$4 never became $2 in 60 s"
    sleep 1
  done
}

targets() {
  local pod ip svc n=0
  for pod in $(kubectl -n restarter-system get pods -l app.kubernetes.io/component=webhook -o name); do
    ip=$(kubectl -n restarter-system get "$pod" -o jsonpath='{.status.podIP}')
    echo "$ip 8443 $pod:https"
    echo "$ip 8081 $pod:health"
    n=$((n + 1))
  done
  ((n == 2)) || die "expected the 2 webhook pods of manifests/, found $n"
  svc=$(kubectl -n restarter-system get service restarter-webhook -o jsonpath='{.spec.clusterIP}')
  echo "$svc 443 service/restarter-webhook:443"
}

# busybox's nc has no -z: with stdin at its end it connects (2 s at most), then exits 0; a refused
# or timed-out connection exits 1. timeout: a server that never closes does not hold the step.
connect() {
  kubectl -n "$NAMESPACE" exec "$1" -- timeout 5 sh -c "nc -w 2 $2 $3 </dev/null" >/dev/null 2>&1
}

case ${1:-} in
  enforced) enforced ;;
  apply-policy) apply_policy "$2" ;;
  targets) targets ;;
  connect) connect "$2" "$3" "$4" ;;
  until-state) until_state "$2" "$3" "$4" "$5" ;;
  *) die "usage: netpol.sh enforced|apply-policy PATCH|none|targets|connect POD IP PORT|until-state POD open|refused IP PORT" ;;
esac
