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
# No leader until the Lease expires: the queue stands still, and explain-restart and status must
# say each queued workload's place, the same number (q-49, priority 0, is near the end).
R=../../lib/restarter.sh
text=$($R explain-restart -n "$NAMESPACE" deployment/q-49 --no-color) || true
ahead=$(printf '%s\n' "$text" | sed -nE 's/.*queued: ([0-9]+) rollouts? ahead.*/\1/p' | head -1)
[[ -n $ahead && $ahead -gt 0 ]] || { echo "FAIL: explain-restart did not say q-49 is queued:"; echo "$text"; kill "$watcher"; exit 1; }
status=$($R status -n "$NAMESPACE" -o json) || true
listed=$(printf '%s' "$status" | jq -r '.items[] | select(.workload.name == "q-49") | .pending.queuedAhead')
queued=$(printf '%s' "$status" | jq '[.items[] | select(.pending.queuedAhead != null)] | length')
[[ $listed == "$ahead" && $queued -gt 1 ]] ||
  { echo "FAIL: status says q-49 has ${listed:-?} ahead ($queued queued), explain-restart $ahead"; kill "$watcher"; exit 1; }
echo "explain-restart and status: q-49 queued with $ahead ahead, $queued workloads queued"
$c wait-log 'became leader' b 90
$c log b | grep -E 'rollout queue rebuilt .*queued=[1-9]' ||
  { echo "FAIL: b rebuilt no queue from the workloads"; $c log b | tail -20; kill "$watcher"; exit 1; }
status=0
wait "$watcher" || status=$?
cat "$out"
exit "$status"
