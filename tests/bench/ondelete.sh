#!/usr/bin/env bash
# The OnDelete roll's pace against Kubernetes' own: a 20-replica StatefulSet under `OnDelete`
# (restarter evicts pod by pod) and the same StatefulSet under `RollingUpdate` (the StatefulSet
# controller replaces them), one after the other in the same run, each rolled by one ConfigMap
# change. Prints, for each, the time from the ConfigMap update to the last pod Ready on the new
# revision, and for the OnDelete roll the API requests restarter's roll made per replaced pod
# (pod and ControllerRevision LISTs and evictions, from the apiserver's
# apiserver_request_total; nothing else lists pods while it runs).
#
# Usage (the cluster must be up: tests/cluster/cluster.sh up):
#   tests/bench/ondelete.sh [REPLICAS]      (default 20)
# RESTARTER_CLUSTER selects the cluster as for tests/cluster/cluster.sh; RESTARTER_BIN the binary.
# The controller runs as the kuttl suites run it (kuttl/lib/controller.sh: its digest key in the
# benchmark's namespace, --roll-on-opt-in, so the StatefulSet, created without the webhook, is
# annotated and rolled once before the measured change; the roll measured is a change's, the same
# with or without the flag). BENCH_WAIT_SECONDS (default 600) bounds each wait: a roll that never
# happens fails the run.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [[ ${1:-} != --inside ]]; then
  exec "$repo/tests/cluster/cluster.sh" exec -- "$0" --inside "${1:-20}"
fi
replicas=$2
export NAMESPACE=bench-ondelete-$$
export BENCH_WAIT_SECONDS=${BENCH_WAIT_SECONDS:-600}
# shellcheck source=SCRIPTDIR/lib.sh
source "$repo/tests/bench/lib.sh"
controller=$repo/kuttl/lib/controller.sh
kubectl create namespace "$NAMESPACE" >/dev/null
trap '"$controller" stop >/dev/null 2>&1 || true; kubectl delete namespace "$NAMESPACE" --wait=false >/dev/null 2>&1 || true' EXIT

"$controller" start >/dev/null
kubectl -n "$NAMESPACE" create configmap app --from-literal=v=0 >/dev/null

# requests VERB RESOURCE [SUBRESOURCE]: the apiserver's count so far.
requests() {
  kubectl get --raw /metrics | awk -v verb="$1" -v resource="$2" -v subres="${3:-}" '
    /^apiserver_request_total\{/ && index($0, "verb=\"" verb "\"") && index($0, "resource=\"" resource "\"") &&
      index($0, "subresource=\"" subres "\"") { n += $NF }
    END { printf "%d\n", n }'
}
roll_requests() { echo $(( $(requests LIST pods) + $(requests LIST controllerrevisions) + $(requests POST pods eviction) )); }

# wait_settled NAME: every pod Ready on the update revision, read from the StatefulSet's status
# (updatedReplicas and readyReplicas; a GET, so the pod LISTs counted are restarter's alone).
settled() {
  kubectl -n "$NAMESPACE" get statefulset "$1" -o json | jq -e --argjson n "$replicas" '
      .status.observedGeneration == .metadata.generation and .status.updatedReplicas == $n
      and .status.readyReplicas == $n and .status.replicas == $n' >/dev/null
}
wait_settled() { bench_until "$1 settled" settled "$1"; }
# annotated NAME: the controller's first annotation written and observed.
annotated() {
  kubectl -n "$NAMESPACE" get statefulset "$1" -o json |
    jq -e '(.spec.template.metadata.annotations // {} | length) > 0 and .status.observedGeneration == .metadata.generation' >/dev/null
}
# rolled NAME GENERATION: a newer generation written and observed.
rolled() {
  kubectl -n "$NAMESPACE" get statefulset "$1" -o json |
    jq -e --argjson g "$2" '.metadata.generation > $g and .status.observedGeneration == .metadata.generation' >/dev/null
}

run() {
  local name=$1 strategy=$2 start end before after
  kubectl -n "$NAMESPACE" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: $name, labels: {restarter.stackable.tech/enabled: "true"}}
spec:
  serviceName: $name
  replicas: $replicas
  podManagementPolicy: OrderedReady
  updateStrategy: {type: $strategy}
  selector: {matchLabels: {app: $name}}
  template:
    metadata: {labels: {app: $name}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: app, image: registry.invalid/bench:1, envFrom: [{configMapRef: {name: app}}]}]
YAML
  # The controller's first annotation rolls it once; wait for that roll to end.
  bench_until "$name annotated by the controller" annotated "$name"
  wait_settled "$name"
  local generation
  generation=$(kubectl -n "$NAMESPACE" get statefulset "$name" -o jsonpath='{.metadata.generation}')
  before=$(roll_requests)
  start=$(date +%s.%N)
  kubectl -n "$NAMESPACE" patch configmap app --type merge -p "{\"data\":{\"v\":\"$name\"}}" >/dev/null
  # The controller's write of the new annotation, observed by the StatefulSet controller.
  bench_until "$name rolled by the change" rolled "$name" "$generation"
  wait_settled "$name"
  end=$(date +%s.%N)
  after=$(roll_requests)
  printf '%-8s %-13s %6.1f s to the last pod Ready on the new revision; pod/revision LISTs + evictions: %d (%.1f per pod)\n' \
    "$name" "$strategy" "$(echo "$end - $start" | bc)" $((after - before)) "$(echo "($after - $before) / $replicas" | bc -l)"
  kubectl -n "$NAMESPACE" delete statefulset "$name" --wait=true >/dev/null
}

echo "replicas: $replicas; load: $(uptime)"
run ondel OnDelete
run rolling RollingUpdate
