#!/usr/bin/env bash
# Step 03 (see 03-statefulset-storm.yaml and README.md).
set -euo pipefail
: "${NAMESPACE:?NAMESPACE must be set (kuttl sets it)}"
w=../../lib/workload.sh
c=../../lib/controller.sh
R=../../lib/restarter.sh
key=configmap.restarter.stackable.tech/storm
dir=$($c dir)

kubectl -n "$NAMESPACE" apply -f statefulset.yaml >/dev/null
# The controller's first annotation (generation 2): a rollout, stamped on the workload.
$w expect statefulset slow "$key" "$($w version configmap storm)"
test "$($w field statefulset slow '{.metadata.generation}')" = 2

# Every state of the StatefulSet from here on, one line per watch event: generation, then the
# status restarter reads (observedGeneration, replicas updated, ready).
watch_file=$dir/slow.watch
kubectl -n "$NAMESPACE" get statefulset slow --watch --output-watch-events=false \
  -o jsonpath='{.metadata.generation} {.status.observedGeneration} {.status.updatedReplicas} {.status.readyReplicas}{"\n"}' \
  >"$watch_file" 2>&1 &
watcher=$!
trap 'kill "$watcher" 2>/dev/null || true' EXIT

bash ../controller-rollout-interval/storm.sh 60 10 >"$dir/storm.out" 2>&1 &
storm=$!
# While the storm runs, explain-restart and status say what the hold waits for (each polled
# until it does, bounded by the storm).
text_held='' status_held=''
while kill -0 "$storm" 2>/dev/null && { [ -z "$text_held" ] || [ -z "$status_held" ]; }; do
  if [ -z "$text_held" ]; then
    out=$($R explain-restart -n "$NAMESPACE" sts/slow --no-color) || true
    if grep -q 'rollout held: waiting for the previous rollout (' <<<"$out"; then text_held=$out; fi
  fi
  if [ -z "$status_held" ]; then
    out=$($R status -n "$NAMESPACE") || true
    if grep -q 'held: waiting for the previous rollout (' <<<"$out"; then status_held=$out; fi
  fi
  sleep 0.5
done
[ -n "$text_held" ] || { echo "FAIL: explain-restart never said the hold waits for the previous rollout"; exit 1; }
[ -n "$status_held" ] || { echo "FAIL: status never said the hold waits for the previous rollout"; exit 1; }
printf '%s\n' "$text_held" | sed -n '/^Pending/,/^  configmap/p'
printf '%s\n' "$status_held"
wait "$storm" || { cat "$dir/storm.out"; exit 1; }
cat "$dir/storm.out"

# The final version lands: after the rollout in progress when the storm ended (about a minute),
# well within the 5-minute upper bound.
final=$($w version configmap storm)
$w expect statefulset slow "$key" "$final" 150
$w described statefulset slow
kill "$watcher" 2>/dev/null || true
wait "$watcher" 2>/dev/null || true

# Each generation restarter made after the first: the last state seen before it must show the
# previous generation's rollout finished (observed, 3 of 3 updated, 3 of 3 ready).
awk '
  NF >= 1 && $1 != prev_gen && prev_gen != "" {
    rollouts++
    if (!(prev_obs == prev_gen && prev_upd == 3 && prev_ready == 3)) {
      printf "FAIL: generation %s started while generation %s was in progress (observed %s, updated %s, ready %s)\n", $1, prev_gen, prev_obs, prev_upd, prev_ready
      bad++
    } else {
      printf "generation %s started after generation %s had finished\n", $1, prev_gen
    }
  }
  NF >= 1 { prev_gen = $1; prev_obs = $2; prev_upd = $3; prev_ready = $4 }
  END {
    printf "rollouts during and after the storm: %d\n", rollouts
    if (bad > 0 || rollouts < 1) exit 1
  }
' "$watch_file" || { cat "$watch_file"; exit 1; }
# One RolloutHeld Event per hold, each naming the previous rollout.
$w events statefulset slow | grep '^RolloutHeld' | sed 's/; changes so far.*//'
