#!/usr/bin/env bash
# changes.sh NAME: Deployment NAME (2 replicas, pods Ready at once) and its ConfigMap NAME. Waits
# until restarter has annotated it and that rollout has finished, then changes the ConfigMap twice,
# 20 s apart, and proves each change rolled within seconds: the first within LATENCY_FIRST seconds
# (default 25: a controller-written first annotation started a rollout just before, whose 10 s
# floor may still hold it), the second within LATENCY_SECOND (default 15) of its change, which
# comes well after the first rollout finished. With a fixed 5-minute hold both would take minutes.
# Ends with exactly two restarter rollouts for the two changes (Restarted Events naming an update
# of configmap/NAME).
set -euo pipefail
: "${NAMESPACE:?NAMESPACE must be set (kuttl sets it)}"
name=$1
w=../../lib/workload.sh
key=configmap.restarter.stackable.tech/$name
first_bound=${LATENCY_FIRST:-25} second_bound=${LATENCY_SECOND:-15}

millis() { date +%s%3N; }
finished() {  # bounded: kubectl's own timeout
  kubectl -n "$NAMESPACE" rollout status "deployment/$name" --timeout=90s >/dev/null
}
# change N: set the ConfigMap's data to N, wait for its version in the template; prints the
# milliseconds that took.
change() {
  local t0 version
  t0=$(millis)
  kubectl -n "$NAMESPACE" patch configmap "$name" --type merge -p "{\"data\":{\"v\":\"$1\"}}" >/dev/null
  version=$($w version configmap "$name")
  $w expect deployment "$name" "$key" "$version" 90 >/dev/null
  echo $(($(millis) - t0))
}

$w expect deployment "$name" "$key" "$($w version configmap "$name")"
finished
first_change=$(millis)
first=$(change 1)
echo "change 1 rolled after ${first} ms"
finished
echo "rollout 1 finished $(($(millis) - first_change)) ms after change 1"
# The second change 20 s after the first (pacing, not a wait for a condition: the scenario).
while (($(millis) < first_change + 20000)); do sleep 0.2; done
second=$(change 2)
echo "change 2 rolled after ${second} ms"
finished
((first <= first_bound * 1000)) || { echo "FAIL: change 1 took ${first} ms to roll (bound ${first_bound} s)"; exit 1; }
((second <= second_bound * 1000)) || { echo "FAIL: change 2 took ${second} ms to roll (bound ${second_bound} s)"; exit 1; }
rollouts=$($w events deployment "$name" | grep '^Restarted' | grep -c "configmap/$name: .*(updated)" || true)
echo "restarter rollouts for the two changes: $rollouts"
test "$rollouts" = 2 || { $w events deployment "$name"; echo "FAIL: want 2 rollouts"; exit 1; }
