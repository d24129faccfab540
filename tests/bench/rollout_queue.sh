#!/usr/bin/env bash
# A fleet-wide change under --max-concurrent-rollouts: WORKLOADS labeled 1-replica Deployments
# (kwok pods, Ready at once) share one ConfigMap; for each limit N given, serve-controller is
# started with --max-concurrent-rollouts N, the ConfigMap changes once, and the script prints the
# time from the change to the last Deployment finished on the new version (observed generation,
# updated and available replicas, no old pod), the most rollouts it saw in progress at once
# (on the new version with an unfinished status, sampled about twice a second; not the
# controller's own reading, which also counts an earlier rollout's last-rollout: a Deployment's
# generation moves with its metadata annotations, so its queued-since write leaves it unobserved
# for a moment), and the
# apiserver's request rate meanwhile (apiserver_request_total over every verb and resource, the
# controller-manager's, scheduler's and kwok's included: what the control plane handled) with the
# controller's own writes (restarter_controller_writes_total). The same Deployments serve every
# N in turn (each change rolls all of them again).
#
# Usage (the cluster must be up: tests/cluster/cluster.sh up):
#   tests/bench/rollout_queue.sh [WORKLOADS [N ...]]      (default 1000 10 50)
# RESTARTER_CLUSTER selects the cluster as for tests/cluster/cluster.sh; RESTARTER_BIN the binary.
# Flags besides N: --min-rollout-interval 5m (the default: every rollout here finishes in
# seconds), --debounce 200ms, --max-writes-per-second 1000 --write-burst 1000 (so the write
# limiter, not the queue, never sets the pace). The controller runs as the kuttl suites run it
# (kuttl/lib/controller.sh: its digest key in the benchmark's namespace). BENCH_WAIT_SECONDS bounds
# the wait for the Deployments to be Available (default 900) and for the change to finish
# everywhere (default 1800): a run that never gets there fails.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [[ ${1:-} != --inside ]]; then
  exec "$repo/tests/cluster/cluster.sh" exec -- "$0" --inside "${@:-1000}"
fi
shift
workloads=${1:-1000}
shift || true
limits=("$@")
((${#limits[@]})) || limits=(10 50)
export NAMESPACE=bench-queue-$$
controller=$repo/kuttl/lib/controller.sh
kubectl create namespace "$NAMESPACE" >/dev/null
trap '"$controller" stop >/dev/null 2>&1 || true; kubectl delete namespace "$NAMESPACE" --wait=false >/dev/null 2>&1 || true' EXIT

kubectl -n "$NAMESPACE" create configmap shared --from-literal=v=0 >/dev/null
version=$(kubectl -n "$NAMESPACE" get configmap shared -o jsonpath='{.metadata.uid}/{.metadata.resourceVersion}')
# Created with the template already annotated (as the webhook would): no rollout before the change.
for ((i = 0; i < workloads; i++)); do
  cat <<YAML
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: w-$i, labels: {restarter.stackable.tech/enabled: "true", bench: queue}}
spec:
  replicas: 1
  selector: {matchLabels: {app: w-$i}}
  template:
    metadata:
      labels: {app: w-$i}
      annotations: {configmap.restarter.stackable.tech/shared: "$version"}
    spec:
      terminationGracePeriodSeconds: 0
      volumes: [{name: config, configMap: {name: shared}}]
      containers: [{name: app, image: registry.invalid/bench:1, volumeMounts: [{name: config, mountPath: /etc/app}]}]
YAML
done | kubectl -n "$NAMESPACE" apply -f - >/dev/null
kubectl -n "$NAMESPACE" wait deployment -l bench=queue --for=condition=Available --timeout="${BENCH_WAIT_SECONDS:-900}s" >/dev/null

# total: every request the apiserver counted so far.
total() {
  kubectl get --raw /metrics | awk '/^apiserver_request_total\{/ { n += $NF } END { printf "%d\n", n }'
}

# sample VERSION: "<in progress> <finished on VERSION>" over all Deployments, one list.
sample() {
  kubectl -n "$NAMESPACE" get deployments -l bench=queue -o json | jq -r --arg v "$1" '
    def unfinished: .metadata.generation > (.status.observedGeneration // 0)
      or (.status.updatedReplicas // 0) != .spec.replicas or (.status.replicas // 0) != (.status.updatedReplicas // 0)
      or (.status.availableReplicas // 0) != .spec.replicas;
    def new: .spec.template.metadata.annotations["configmap.restarter.stackable.tech/shared"] == $v;
    [([.items[] | select(new and unfinished)] | length),
     ([.items[] | select(new and (unfinished | not))] | length)]
    | "\(.[0]) \(.[1])"'
}

echo "workloads: $workloads; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
round=0
for n in "${limits[@]}"; do
  round=$((round + 1))
  "$controller" start -- --max-concurrent-rollouts "$n" --min-rollout-interval 5m --debounce 200ms \
    --max-writes-per-second 1000 --write-burst 1000 >/dev/null
  # Settled: the content records written at start (no rollout) are done.
  sleep 5
  before=$(total)
  start=$(date +%s.%N)
  kubectl -n "$NAMESPACE" patch configmap shared --type merge -p "{\"data\":{\"v\":\"$round\"}}" >/dev/null
  version=$(kubectl -n "$NAMESPACE" get configmap shared -o jsonpath='{.metadata.uid}/{.metadata.resourceVersion}')
  highest=0 deadline=$((SECONDS + ${BENCH_WAIT_SECONDS:-1800}))
  while :; do
    read -r rolling finished < <(sample "$version")
    ((rolling > highest)) && highest=$rolling
    ((finished == workloads)) && break
    ((SECONDS < deadline)) || { echo "N=$n: only $finished of $workloads finished after ${BENCH_WAIT_SECONDS:-1800} s" >&2; exit 1; }
    sleep 0.3
  done
  end=$(date +%s.%N)
  after=$(total)
  writes=$("$controller" metrics | awk '/^restarter_controller_writes_total\{/ { n += $NF } END { printf "%d\n", n }')
  seconds=$(echo "$end - $start" | bc)
  printf 'N=%-4s %7.1f s from the change to the last rollout finished; at most %d in progress; apiserver %d requests, %.0f/s; controller writes %d; load %s\n' \
    "$n" "$seconds" "$highest" $((after - before)) "$(echo "($after - $before) / $seconds" | bc -l)" "$writes" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
  "$controller" stop >/dev/null
done
