#!/usr/bin/env bash
# webhook-hostile, step 01 (README.md): hostile connections held open against serve-webhook's
# HTTPS port and the health ports of serve-webhook and serve-controller while COUNT labeled
# StatefulSets are created through the apiserver, which calls the webhook. Asserts, and prints
# every failure before exiting 1:
#   - the attack was in force through the measurement window (the creates and the controller's
#     reconciles of them): each group had OPEN_AT_LEAST connections open before the window began, and
#     during it at least OLD_WORKERS idle connections to the webhook (as many as its old server
#     had worker threads, each of which one idle connection held) and MIN_SLOW_COVERAGE of each
#     group of slow-header and slow-body connections were open on average, or (lib/http's minimum
#     receive rate and per-address share close them) the tool opened or tried to open at least as
#     many as the group has
#     (tests/tools/hostile_client.py hold). A slow-body connection declares a review of
#     SLOW_BODY_LENGTH bytes, the largest the webhook admits (7 x that is all but 640 KiB of its
#     32 MiB in-flight budget; a larger one is refused from its head), and trickles it: a server
#     that charged the declared size from the head would refuse every real review meanwhile.
#     A server may close connections (an idle one evicted at its connection cap, a request head
#     past its deadline): the tool reopens them at once, and its report says when and how often;
#   - /healthz of both servers never failed PROBE_FAILURE_THRESHOLD probes in a row (2xx/3xx
#     within the kubelet's 1 s timeout) all through the window: a kubelet would not have restarted
#     either (failures, max, p99 and p50 printed);
#   - every StatefulSet was annotated by the webhook at creation: generation 1, its ConfigMap's
#     <uid>/<resourceVersion>, one ControllerRevision, its pod created once and never deleted, no
#     warning from the webhook; the controller reconciled all and wrote nothing; the webhook counted
#     COUNT patched CREATEs and no failure, and the apiserver never failed open.
# Every process it starts is stopped on exit, passed or failed (and stops by itself once this
# script is gone or after --duration).
set -euo pipefail

COUNT=20            # labeled StatefulSets created under attack
IDLE=200            # idle TLS connections to the webhook (handshake done, no request)
SLOW=32             # slow-header TLS connections to the webhook
SLOW_BODY=4         # TLS connections to the webhook declaring a body of SLOW_BODY_LENGTH, sent slowly
SLOW_BODY_LENGTH=4190000  # x 7 (lib/webhook/src/server.cpp, kBodyCostFactor) fits one address's 28 MiB
HEALTH_SLOW=8       # slow-header plain connections to each health port
BYTE_INTERVAL=2     # seconds between two bytes of a slow request head
PROBE_TIMEOUT=1     # the kubelet's default probe timeoutSeconds
PROBE_FAILURE_THRESHOLD=3  # the manifests' livenessProbe failureThreshold
OLD_WORKERS=16      # the old webhook's HTTPS worker threads: idle connections held on average
MIN_SLOW_COVERAGE=0.8  # share of each slow group held on average (a deadline closes, the tool reopens),
                       # unless the tool kept trying: it opened or tried to open at least as many
                       # as the group has (the minimum receive rate and the per-address share
                       # close a slow sender after its grace, or evict it for a newer one)
MIN_WINDOW=10       # the measurement window lasts at least this long (5 byte intervals)
OPEN_SECONDS=30     # bound on opening the hostile connections
OPEN_AT_LEAST=8     # connections of each group opened before the window
WAIT_SECONDS=120    # bound on each other wait; each returns as soon as its condition holds
TOOL_SECONDS=400    # the tools' own bound (they are stopped long before)

# shellcheck source=SCRIPTDIR/../../lib/hostile.sh
source ../../lib/hostile.sh

reconciled() {
  ../../lib/controller.sh metrics |
    awk '/^restarter_controller_reconciles_total\{controller="statefulset"/ { s += $NF } END { print s + 0 }'
}

port=$(cat "$(../../lib/webhook.sh dir wh)/port")
webhook_health=$(../../lib/webhook.sh health wh)
controller_health=$(../../lib/controller.sh health)
echo "webhook https://127.0.0.1:$port/mutate, health $webhook_health; controller health $controller_health"

# 1. The hostile connections, and a wait (bounded) until each group has had OPEN_AT_LEAST open. The tool opens
# them in this order: the slow-header ones first, as the worst attacker would (a server that gives
# each connection a thread loses those threads to them for good).
python3 "$tool" hold \
  --hold "slow,https://127.0.0.1:$port/mutate,$SLOW" \
  --hold "slow-body,https://127.0.0.1:$port/mutate,$SLOW_BODY" \
  --hold "slow,http://$webhook_health/healthz,$HEALTH_SLOW" \
  --hold "slow,http://$controller_health/healthz,$HEALTH_SLOW" \
  --hold "idle,https://127.0.0.1:$port/mutate,$IDLE" \
  --byte-interval "$BYTE_INTERVAL" --body-length "$SLOW_BODY_LENGTH" --duration "$TOOL_SECONDS" \
  --status "$work/hold.json" \
  >"$work/hold.out" 2>&1 &
holder=$!
track "$holder"
# Every group must have reached OPEN_AT_LEAST connections (or all it has): the webhook lets one
# address hold only its share (64) of its connections, and these groups all come from 127.0.0.1
# and evict one another's, so not every slot can be open at once any more.
await_hold "$holder" "$work/hold.json" "$OPEN_AT_LEAST" "$OPEN_SECONDS"
echo "hostile connections ever open / open now: $(jq -r '[.groups[] | "\(.hold): \(.reached)/\(.open)"] | join("; ")' "$work/hold.json")"

# 2. The measurement window: probes of both /healthz, the creates, the controller's reconciles.
statefulsets web "$COUNT" 1 'cfg-{i}' "suite: hostile" >"$work/statefulsets.yaml"

kill -USR1 "$holder"
window_start=$SECONDS
python3 "$tool" probe --url "http://$webhook_health/healthz" --url "http://$controller_health/healthz" \
  --timeout "$PROBE_TIMEOUT" --duration "$TOOL_SECONDS" --status "$work/probe.json" >"$work/probe.out" 2>&1 &
prober=$!
track "$prober"
if kubectl -n "$NAMESPACE" create -f "$work/statefulsets.yaml" >"$work/create.out" 2>"$work/create.err"; then
  echo "$COUNT StatefulSets created in $((SECONDS - window_start)) s"
else
  fail "kubectl create failed: $(cat "$work/create.err")"
fi
deadline=$((SECONDS + WAIT_SECONDS))
until (($(reconciled) >= COUNT && SECONDS - window_start >= MIN_WINDOW)); do
  if ((SECONDS >= deadline)); then
    fail "the controller reconciled $(reconciled) StatefulSets within ${WAIT_SECONDS} s, not $COUNT"
    break
  fi
  sleep 0.5
done
kill -USR2 "$holder"
stop_tool "$prober"
stop_tool "$holder"
echo "measurement window: $((SECONDS - window_start)) s"

# 3. The attack was in force through the window.
jq -r '.groups[] | "held \(.hold): in the \(.window.seconds) s window \(.window.mean_open) open on average (coverage \(.window.coverage)), at least \(.window.min_open) at once, \(.window.closed_by_server) closed by the server; in all \(.reached) slots reached, \(.opened_total) opened, \(.closed_by_server) closed by the server (first at \(.close_times[0] // "-") s; lived \(.lifetime_seconds // "-"); reopened after \(.reopen_gap_seconds // "-")), \(.handshake_timeouts) handshake timeouts, \(.connect_errors) connect errors, answers \(.answers)"' \
  "$work/hold.json"
while read -r group; do
  fail "the attack was not in force through the window: $group"
done < <(jq -c --argjson workers "$OLD_WORKERS" --argjson slow "$MIN_SLOW_COVERAGE" '.groups[]
  | select(if .mode == "idle" then (.window.mean_open // 0) < ([.count, $workers] | min)
           else (.window.coverage // 0) < $slow and (.opened_total + .connect_errors) < .count end)
  | {hold, mean_open: .window.mean_open, coverage: .window.coverage, reached, handshake_timeouts, connect_errors}' \
  "$work/hold.json")

# 4. /healthz never failed as many probes in a row as would restart either server.
check_probes "$work/probe.json" "$PROBE_FAILURE_THRESHOLD"

# 5. Every StatefulSet was annotated at creation and never rolled.
check_no_warning "$work/create.err"
if ! kubectl -n "$NAMESPACE" wait statefulset -l suite=hostile \
  --for=jsonpath='{.status.readyReplicas}'=1 --timeout="${WAIT_SECONDS}s" >/dev/null; then
  fail "not every StatefulSet has its pod Ready within ${WAIT_SECONDS} s"
fi
writes=$(../../lib/controller.sh metrics |
  awk '/^restarter_controller_writes_total\{resource="statefulsets"/ { s += $NF } END { print s + 0 }')
echo "controller: $(reconciled) StatefulSet reconciles, $writes StatefulSet writes"
[[ $writes == 0 ]] || fail "the controller wrote $writes times: the webhook did not annotate at creation"
check_annotated suite=hostile web 'cfg-{i}' "$COUNT" --revisions
# The StatefulSet controller's Events come after its pods: awaited, bounded.
if pods=$(../../lib/workload.sh pod-creations "$COUNT" 2>&1); then
  echo "$pods"
else
  fail "${pods#*FAIL: }"
fi

metrics=$(../../lib/webhook.sh metrics wh)
patched=$(awk '/^restarter_webhook_admissions_total\{/ && /outcome="patched"/ && /kind="StatefulSet"/ && /operation="CREATE"/ { s += $NF } END { print s + 0 }' <<<"$metrics")
failed=$(awk '/^restarter_webhook_admissions_total\{/ && /outcome="(failed|malformed)"/ { s += $NF } END { print s + 0 }' <<<"$metrics")
echo "webhook: $patched CREATEs patched, $failed failed"
((patched >= COUNT)) || fail "the webhook patched $patched CREATEs, not $COUNT"
[[ $failed == 0 ]] || fail "the webhook counted $failed failed admissions"
check_no_fail_open

finish "all checks passed"
