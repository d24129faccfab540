#!/usr/bin/env bash
# Step 02: changes the shared ConfigMap once, samples every Deployment with watch.py until all
# have rolled and finished (failing on a sixth rollout in progress), and kills the leader `a`
# once 15 have rolled; `b` must take over, rebuild the queue from the workloads and finish it.
set -euo pipefail
c=../../lib/controller.sh
kubectl -n "$NAMESPACE" patch configmap shared --type merge -p '{"data":{"v":"2"}}' >/dev/null
version=$(../../lib/workload.sh version configmap shared)
out=$($c dir)/watch.log
python3 watch.py 5 50 configmap.restarter.stackable.tech/shared "$version" 280 >"$out" 2>&1 &
watcher=$!
rolled() {
  kubectl -n "$NAMESPACE" get deployments -l queue.restarter.test/member=true -o json |
    jq --arg v "$version" \
      '[.items[] | select(.spec.template.metadata.annotations["configmap.restarter.stackable.tech/shared"] == $v)] | length'
}
deadline=$((SECONDS + 150))
until [[ $(rolled) -ge 15 ]]; do
  ((SECONDS < deadline)) || { echo "FAIL: 15 rollouts not reached"; cat "$out"; kill "$watcher"; exit 1; }
  sleep 0.5
done
$c kill a
echo "leader a killed with $(rolled) of 50 rolled"
$c wait-log 'became leader' b 90
$c log b | grep -E 'rollout queue rebuilt .*queued=[1-9]' ||
  { echo "FAIL: b rebuilt no queue from the workloads"; $c log b | tail -20; kill "$watcher"; exit 1; }
status=0
wait "$watcher" || status=$?
cat "$out"
exit "$status"
