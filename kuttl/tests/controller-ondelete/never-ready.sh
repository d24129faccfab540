#!/usr/bin/env bash
# Step 05 (see 05-never-ready.yaml): bash, for SECONDS and arithmetic.
set -euo pipefail
before=$(kubectl -n "$NAMESPACE" get pods web-0 web-1 -o jsonpath='{.items[*].metadata.uid}')
kubectl -n "$NAMESPACE" patch statefulset web --type merge \
  -p '{"spec":{"template":{"spec":{"nodeSelector":{"restarter.test/no-such-node":"true"}}}}}'
deadline=$((SECONDS + 90))
until note=$(kubectl -n "$NAMESPACE" get events.events.k8s.io -o json |
    jq -er '.items[] | select(.reason == "RollPaused" and .regarding.name == "web") | "\(.type) \(.note)"'); do
  ((SECONDS < deadline)) || { echo "FAIL: no RollPaused Event"; ../../lib/controller.sh log second | tail -20; exit 1; }
  sleep 1
done
echo "$note"
case $note in "Warning "*web-2*) ;; *) echo "FAIL: the Event does not name web-2"; exit 1 ;; esac
# Look again: wait until the roller has reconciled web after the pause, then nothing moved.
seen=$(../../lib/controller.sh count 'roll paused' second)
reconciles() { ../../lib/controller.sh metrics second | awk '/^restarter_controller_reconciles_total\{controller="ondelete-statefulset",result="success"\}/ {print $2}'; }
n=$(reconciles)
until [ "$(reconciles)" != "$n" ]; do
  ((SECONDS < deadline + 30)) || { echo "FAIL: the roller did not look again"; exit 1; }
  sleep 1
done
after=$(kubectl -n "$NAMESPACE" get pods web-0 web-1 -o jsonpath='{.items[*].metadata.uid}')
test "$before" = "$after" || { echo "FAIL: web-0 or web-1 was evicted during the pause"; exit 1; }
test "$(../../lib/controller.sh count 'roll paused' second)" = "$seen" || { echo "FAIL: paused announced twice"; exit 1; }
test "$(kubectl -n "$NAMESPACE" get events.events.k8s.io -o json | jq '[.items[] | select(.reason == "RollPaused")] | length')" = 1 \
  || { echo "FAIL: more than one RollPaused Event"; exit 1; }
echo "paused on web-2; web-0 and web-1 untouched"
../../lib/restarter.sh explain-restart -n "$NAMESPACE" --ondelete-ready-timeout 15s statefulset/web
../../lib/restarter.sh explain-restart -n "$NAMESPACE" --ondelete-ready-timeout 15s statefulset/web -o json |
  jq -e '.roll.state == "paused" and .roll.blockingPod == "web-2" and (.roll.outdatedPods | sort) == ["web-0", "web-1"]' >/dev/null \
  || { echo "FAIL: explain-restart does not show the roll paused on web-2"; exit 1; }
