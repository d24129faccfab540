#!/usr/bin/env bash
# Helpers of the suites that run restarter's image on the real node (kuttl/node-tests, run by
# tests/run.sh once the node is up and the image loaded into it; tests/cluster/README.md "The real
# node"). For TestStep scripts; kuttl sets NAMESPACE and KUBECONFIG.
#
#   node.sh install             kubectl apply -k of manifests/ as a user would, through an overlay
#                               that places the pods on the real node (the node's toleration and
#                               nodeSelector) and sets --min-rollout-interval=0 (overlay() says
#                               why); waits until both Deployments are available and every
#                               webhook pod has read the digest key (until then it patches no
#                               review that needs the key). Idempotent: quick when installed
#   node.sh uninstall           deletes what `install` applied, and what the servers made
#                               (configuration, certificate Secret, Lease); waits until the pods
#                               are gone
#   node.sh placement-values    Helm values placing both Deployments on the real node (YAML)
#   node.sh placement-patch     the toleration and nodeSelector of a pod spec, as JSON
#   node.sh pods NS SELECTOR    the pods of SELECTOR in NS not being deleted, one name a line; fails unless every
#                               one runs on the real node
#   node.sh logged NS SELECTOR|pod/NAME TEXT   waits (bounded) until every pod of SELECTOR in NS
#                               (or the one pod NAME) has logged TEXT (grep -F); fails with the
#                               tail of the first that did not
#   node.sh hardened NS SELECTOR   fail unless every such pod runs restarter on the real node as
#                               the kernel should see the manifests' security context: uid and gid
#                               65532, no capability, a seccomp filter, no new privileges, a
#                               read-only root filesystem; Ready, never restarted
#   node.sh fail-opens NAME     the apiserver's count of reviews that failed open for the webhook
#                               configuration NAME (0 when it never did)
#   node.sh admissions NAME     how many reviews the apiserver sent to the webhook configuration NAME
#   node.sh leader [NS [LEASE]] the controller pod holding the Lease (default restarter-system's
#                               restarter-controller); waits for one (bounded), fails when none
#   node.sh metric PATTERN [NS [LEASE]]  the sum of the leader's metric lines matching PATTERN
#                               (grep -E), read through the apiserver's pod proxy
#   node.sh test-image          the tiny busybox image the node has (tests/cluster)
set -euo pipefail

die() { printf 'node.sh: %s\n' "$*" >&2; exit 1; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
manifests=$(cd "$here/../../manifests" && pwd)

# What tests/cluster gives the real node (tests/cluster/README.md): a label to select it and a
# taint that keeps every other pod off it.
NODE_LABEL_KEY=restarter.test/real-node
NODE_LABEL_VALUE=true
NODE_TAINT_KEY=restarter.test/real-node
TEST_IMAGE=restarter-test/busybox:1
# Bound of each wait: images start from the node's own store, but 2 cores are shared with the
# control plane.
WAIT_SECONDS=180

placement_patch() {
  jq -n -c --arg key "$NODE_LABEL_KEY" --arg value "$NODE_LABEL_VALUE" --arg taint "$NODE_TAINT_KEY" \
    '{nodeSelector: {($key): $value}, tolerations: [{key: $taint, operator: "Exists", effect: "NoSchedule"}]}'
}

placement_values() {
  local p
  p=$(placement_patch)
  jq -n --argjson p "$p" '{controller: $p, webhook: $p}'
}

# The overlay: manifests/ unchanged but for where the pods run, and --min-rollout-interval=0: the
# suites change one workload's objects in quick succession, and the default interval (kuttl
# controller-rollout-interval proves it) would hold each second change for 5 minutes.
overlay() {
  local dir=$1 p
  p=$(placement_patch)
  cat >"$dir/kustomization.yaml" <<YAML
resources:
  - $(realpath --relative-to="$dir" "$manifests")
patches:
  - target: {kind: Deployment}
    patch: |-
      - op: add
        path: /spec/template/spec/nodeSelector
        value: $(jq -c .nodeSelector <<<"$p")
      - op: add
        path: /spec/template/spec/tolerations
        value: $(jq -c .tolerations <<<"$p")
  - target: {kind: Deployment, name: restarter-controller}
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/args/-
        value: --min-rollout-interval=0
YAML
}

install() {
  local dir d
  dir=$(mktemp -d "${TMPDIR:-/tmp}/restarter-node-overlay.XXXXXX")
  overlay "$dir"
  kubectl apply -k "$dir" >/dev/null || { rm -rf "$dir"; die "kubectl apply -k of manifests/ failed"; }
  rm -rf "$dir"
  for d in restarter-webhook restarter-controller; do
    kubectl -n restarter-system rollout status "deployment/$d" --timeout="${WAIT_SECONDS}s" >/dev/null ||
      die "deployment $d did not roll out in ${WAIT_SECONDS}s: $(kubectl -n restarter-system get pods -o wide 2>&1)"
  done
  pods restarter-system app.kubernetes.io/name=restarter >/dev/null
  logged restarter-system app.kubernetes.io/component=webhook '"digest key loaded"'
}

logged() {
  local ns=$1 which=$2 text=$3 pod list deadline=$((SECONDS + WAIT_SECONDS))
  if [[ $which == pod/* ]]; then list=${which#pod/}; else list=$(pods "$ns" "$which"); fi
  for pod in $list; do
    until grep -qF -- "$text" <<<"$(kubectl -n "$ns" logs "$pod")"; do
      ((SECONDS < deadline)) || die "$pod never logged '$text' in ${WAIT_SECONDS}s: $(kubectl -n "$ns" logs "$pod" | tail -20)"
      sleep 1
    done
  done
}

uninstall() {
  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/restarter-node-overlay.XXXXXX")
  overlay "$dir"
  kubectl delete -k "$dir" --ignore-not-found --wait=true --timeout="${WAIT_SECONDS}s" >/dev/null || true
  rm -rf "$dir"
  kubectl delete mutatingwebhookconfiguration restarter-webhook.stackable.tech --ignore-not-found >/dev/null
  kubectl wait --for=delete namespace/restarter-system --timeout="${WAIT_SECONDS}s" >/dev/null 2>&1 || true
}

pods() {
  local ns=$1 selector=$2 out
  # Pods being deleted (an old ReplicaSet's, just after a rollout) are going away: not listed, or
  # a caller's `kubectl exec` into one would find it gone.
  out=$(kubectl -n "$ns" get pods -l "$selector" -o json | jq '.items |= map(select(.metadata.deletionTimestamp == null))')
  jq -e '.items | length > 0' <<<"$out" >/dev/null || die "no pods $selector in $ns"
  local nodes elsewhere
  nodes=$(kubectl get nodes -l "$NODE_LABEL_KEY=$NODE_LABEL_VALUE" -o jsonpath='{.items[*].metadata.name}')
  [[ -n $nodes ]] || die "no node is labeled $NODE_LABEL_KEY=$NODE_LABEL_VALUE (is the real node up?)"
  elsewhere=$(jq -r --arg nodes " $nodes " '.items[] | . as $pod
    | select($nodes | contains(" " + ($pod.spec.nodeName // "-") + " ") | not)
    | "\(.metadata.name) on \(.spec.nodeName // "no node")"' <<<"$out")
  [[ -z $elsewhere ]] || die "not on the real node: $elsewhere"
  jq -r '.items[].metadata.name' <<<"$out"
}

# webhook_count METRIC NAME: the apiserver's counter apiserver_admission_webhook_<METRIC>, summed
# over the series of the webhook configuration NAME (0 before its first series).
webhook_count() {
  kubectl get --raw /metrics | awk -v metric="apiserver_admission_webhook_$1{" -v name="$2" '
    index($1, metric) == 1 && index($1, "name=\"" name "\"") { sum += $2 }
    END { printf "%d\n", sum }'
}

hardened() {
  local ns=$1 selector=$2 pod status want
  for pod in $(pods "$ns" "$selector"); do
    status=$(kubectl -n "$ns" exec "$pod" -- cat /proc/1/status)
    for want in 'Uid:\s65532\s65532\s65532\s65532' 'Gid:\s65532\s65532\s65532\s65532' \
                'CapEff:\s0000000000000000' 'CapPrm:\s0000000000000000' 'Seccomp:\s2' 'NoNewPrivs:\s1'; do
      grep -qP "^$want\$" <<<"$status" || die "$pod: no '$want' in /proc/1/status: $status"
    done
    if kubectl -n "$ns" exec "$pod" -- touch /written 2>/dev/null; then
      die "$pod could write to its root filesystem"
    fi
    grep -q '^/usr/local/bin/restarter serve-' <<<"$(kubectl -n "$ns" exec "$pod" -- cat /proc/1/cmdline | tr '\0' ' ')" ||
      die "$pod does not run restarter"
  done
  kubectl -n "$ns" get pods -l "$selector" -o json | jq -e '
    all(.items[]; ([.status.conditions[] | select(.type == "Ready")][0].status == "True")
      and all(.status.containerStatuses[]; .restartCount == 0 and .ready))' >/dev/null ||
    die "a pod is not Ready or restarted: $(kubectl -n "$ns" get pods -l "$selector" -o wide)"
}

# The pod name in a Lease's holder identity (serve-controller's is "<pod name>_<random hex>").
# Waits (bounded) for a holder: right after an install the replicas may still be electing, and
# after a release the Lease is briefly held by nobody.
leader() {
  local ns=${1:-restarter-system} lease=${2:-restarter-controller} holder deadline=$((SECONDS + WAIT_SECONDS))
  while :; do
    holder=$(kubectl -n "$ns" get lease "$lease" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null || true)
    [[ -n $holder ]] && break
    ((SECONDS < deadline)) || die "nobody holds the Lease $ns/$lease after ${WAIT_SECONDS}s"
    sleep 0.5
  done
  echo "${holder%_*}"
}

metric() {
  local pattern=$1 ns=${2:-restarter-system} lease=${3:-restarter-controller} pod
  pod=$(leader "$ns" "$lease")
  kubectl get --raw "/api/v1/namespaces/$ns/pods/$pod:8080/proxy/metrics" |
    { grep -E "$pattern" || true; } | awk '{ sum += $NF } END { printf "%d\n", sum }'
}

case ${1:-} in
  install) install ;;
  uninstall) uninstall ;;
  placement-values) placement_values ;;
  placement-patch) placement_patch ;;
  pods) pods "${2:?NS}" "${3:?SELECTOR}" ;;
  hardened) hardened "${2:?NS}" "${3:?SELECTOR}" ;;
  logged) logged "${2:?NS}" "${3:?SELECTOR or pod/NAME}" "${4:?TEXT}" ;;
  fail-opens) webhook_count fail_open_count "${2:?NAME}" ;;
  admissions) webhook_count admission_duration_seconds_count "${2:?NAME}" ;;
  leader) shift; leader "$@" ;;
  metric) shift; metric "$@" ;;
  test-image) echo "$TEST_IMAGE" ;;
  *) die "usage: node.sh install|uninstall|placement-values|placement-patch|pods NS SELECTOR|hardened NS SELECTOR|fail-opens NAME|admissions NAME|leader|metric PATTERN|test-image" ;;
esac
