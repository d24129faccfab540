#!/usr/bin/env bash
# Step 05 (see 05-budget.yaml).
set -euo pipefail
dir=$(../../lib/controller.sh dir)
deadline=$((SECONDS + 60))
# Two refusals: the roll retried (after max(5 s, Retry-After)) rather than giving up.
until (( $(../../lib/controller.sh count "pod eviction refused.*pod=$NAMESPACE/guarded-2" second) >= 2 )); do
  ((SECONDS < deadline)) || { echo "FAIL: guarded-2's eviction was not refused twice"; exit 1; }
  sleep 0.5
done
# One per controller instance: the first one (SIGKILLed in step 03) may have recorded its own.
blocked=$(kubectl -n "$NAMESPACE" get events.events.k8s.io -o json |
  jq -c '[.items[] | select(.reason == "EvictionBlocked" and .regarding.name == "guarded-2")]
         | group_by(.reportingInstance) | map(length)')
echo "EvictionBlocked Events for guarded-2 per controller instance: $blocked"
echo "$blocked" | jq -e 'length >= 1 and all(. == 1)' >/dev/null || { echo "FAIL: not one EvictionBlocked per instance"; exit 1; }
now=$(kubectl -n "$NAMESPACE" get pods -l app=guarded -o json | jq -r '.items[] | "\(.metadata.name) \(.metadata.uid)"' | sort)
test "$now" = "$(grep '^guarded-' "$dir/before.uids")" || { echo "FAIL: a guarded pod went despite the budget"; exit 1; }
echo "guarded: evictions refused and retried, one EvictionBlocked per instance, no pod evicted"
# The history from here, not from the change (step 03): until the budget is relaxed no guarded pod
# goes (checked above). Followed, not only marked: the roll may wait out the budget's 2-minute
# disruptedPods expiry (an evicted pod whose same-name replacement the disruption controller saw
# before it saw the deletion), longer than the apiserver's watch cache keeps a busy resource's
# events (about 75 s; a replay from a mark would get 410 Gone).
../../lib/pod-events.sh follow budget
kubectl -n "$NAMESPACE" patch pdb guarded --type merge -p '{"spec":{"minAvailable":2}}'
./settled.sh guarded
events=$(../../lib/pod-events.sh replay budget)
printf '%s\n' "$events" | awk -F'\t' -v olds="$(grep '^guarded-' "$dir/before.uids" | tr '\n' ' ')" '
  BEGIN { m = split(olds, f, " "); for (i = 1; i < m; i += 2) { old[f[i + 1]] = 1; up[f[i + 1]] = 1 } }
  index($2, "guarded-") != 1 { next }
  !($3 in old) && !($3 in fresh) { fresh[$3] = 1; n++ }
  {
    up[$3] = ($4 == "true" && $5 == "false")
    if (($3 in old) && $5 == "true" && !($3 in gone)) { gone[$3] = 1; order = order " " $2 }
    avail = 0
    for (u in up) avail += up[u]
    if (3 - avail > max) max = 3 - avail
  }
  END {
    if (n != 3) { print "FAIL: " n " new guarded pods, not 3"; exit 1 }
    if (max > 1) { print "FAIL: " max " guarded pods unavailable at once"; exit 1 }
    if (order != " guarded-2 guarded-1 guarded-0") { print "FAIL: order" order; exit 1 }
    print "guarded: terminated in order" order "; at most " max " unavailable"
  }'
