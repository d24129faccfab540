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
#   - /healthz of both servers answered every probe within the kubelet's 1 s timeout all through
#     the window (max, p99 and p50 printed);
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

tool=../../../tests/tools/hostile_client.py
work=$(mktemp -d)
holder=
prober=
failures=0

# SIGTERM, then wait (bounded) for the tool to print its report and exit.
stop_tool() {
  local pid=$1 deadline=$((SECONDS + 15))
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null; do
    ((SECONDS < deadline)) || { kill -KILL "$pid" 2>/dev/null || true; break; }
    sleep 0.1
  done
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  stop_tool "$prober"
  stop_tool "$holder"
  rm -rf "$work"
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

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
deadline=$((SECONDS + OPEN_SECONDS))
# Every group must have reached OPEN_AT_LEAST connections (or all it has): the webhook lets one
# address hold only its share (64) of its connections, and these groups all come from 127.0.0.1
# and evict one another's, so not every slot can be open at once any more.
until jq -e --argjson n "$OPEN_AT_LEAST" '[.groups[] | .reached >= ([.count, $n] | min)] | all' \
  "$work/hold.json" >/dev/null 2>&1; do
  kill -0 "$holder" 2>/dev/null || { cat "$work/hold.out"; echo "FAIL: hostile_client.py hold exited"; exit 1; }
  if ((SECONDS >= deadline)); then
    fail "not every group had ${OPEN_AT_LEAST} connections open within ${OPEN_SECONDS} s: $(jq -c '[.groups[] | {hold, reached, open, connecting, handshake_timeouts, connect_errors}]' "$work/hold.json")"
    break
  fi
  sleep 0.2
done
echo "hostile connections ever open / open now: $(jq -r '[.groups[] | "\(.hold): \(.reached)/\(.open)"] | join("; ")' "$work/hold.json")"

# 2. The measurement window: probes of both /healthz, the creates, the controller's reconciles.
for i in $(seq 1 "$COUNT"); do
  cat <<YAML
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web-$i
  labels:
    restarter.stackable.tech/enabled: "true"
    suite: hostile
spec:
  serviceName: web-$i
  replicas: 1
  selector:
    matchLabels:
      app: web-$i
  template:
    metadata:
      labels:
        app: web-$i
    spec:
      terminationGracePeriodSeconds: 1
      volumes:
        - name: config
          configMap:
            name: cfg-$i
      containers:
        - name: app
          image: registry.invalid/hostile:1
YAML
done >"$work/statefulsets.yaml"

kill -USR1 "$holder"
window_start=$SECONDS
python3 "$tool" probe --url "http://$webhook_health/healthz" --url "http://$controller_health/healthz" \
  --timeout "$PROBE_TIMEOUT" --duration "$TOOL_SECONDS" --status "$work/probe.json" >"$work/probe.out" 2>&1 &
prober=$!
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
prober=
stop_tool "$holder"
holder=
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

# 4. /healthz answered within the probe timeout all through the window.
jq -r '.probes[] | "/healthz \(.url): \(.probes) probes, \(.failures) failed, max \(.max_seconds) s, p99 \(.p99_seconds) s, p50 \(.p50_seconds) s"' \
  "$work/probe.json"
while read -r probe; do
  fail "/healthz did not answer within ${PROBE_TIMEOUT} s: $probe"
done < <(jq -c --argjson t "$PROBE_TIMEOUT" \
  '.probes[] | select(.probes == 0 or .failures > 0 or .max_seconds >= $t) | {url, probes, failures, max_seconds, first_failures}' \
  "$work/probe.json")

# 5. Every StatefulSet was annotated at creation and never rolled.
if grep -qi restarter "$work/create.err"; then
  fail "the webhook warned: $(grep -i restarter "$work/create.err" | head -3)"
fi
if ! kubectl -n "$NAMESPACE" wait statefulset -l suite=hostile \
  --for=jsonpath='{.status.readyReplicas}'=1 --timeout="${WAIT_SECONDS}s" >/dev/null; then
  fail "not every StatefulSet has its pod Ready within ${WAIT_SECONDS} s"
fi
writes=$(../../lib/controller.sh metrics |
  awk '/^restarter_controller_writes_total\{resource="statefulsets"/ { s += $NF } END { print s + 0 }')
echo "controller: $(reconciled) StatefulSet reconciles, $writes StatefulSet writes"
[[ $writes == 0 ]] || fail "the controller wrote $writes times: the webhook did not annotate at creation"
kubectl -n "$NAMESPACE" get statefulsets -l suite=hostile -o json >"$work/sts"
kubectl -n "$NAMESPACE" get configmaps -o json >"$work/cms"
kubectl -n "$NAMESPACE" get controllerrevisions -o json >"$work/revs"
while read -r line; do
  case $line in
    FAIL:*) fail "${line#FAIL: }" ;;
    *) echo "$line" ;;
  esac
done < <(jq -n -r --argjson count "$COUNT" --slurpfile s "$work/sts" --slurpfile c "$work/cms" \
  --slurpfile r "$work/revs" '
  $s[0] as $sts | $c[0] as $cms | $r[0] as $revs |
  def version(name): ($cms.items[] | select(.metadata.name == name) | "\(.metadata.uid)/\(.metadata.resourceVersion)");
  if ($sts.items | length) != $count then "FAIL: \($sts.items | length) StatefulSets, not \($count)" else empty end,
  ([$sts.items[] | .metadata.name as $n | ($n | ltrimstr("web-")) as $i
    | ((.spec.template.metadata.annotations // {})["configmap.restarter.stackable.tech/cfg-\($i)"] // "") as $a
    | ([$revs.items[] | select(any(.metadata.ownerReferences[]?; .kind == "StatefulSet" and .name == $n))] | length) as $nrev
    | if .metadata.generation != 1 then "FAIL: \($n) has generation \(.metadata.generation) (annotation \($a))"
      elif $a != version("cfg-\($i)") then "FAIL: \($n) is not annotated with its ConfigMap (\($a))"
      elif $nrev != 1 then "FAIL: \($n) has \($nrev) ControllerRevisions"
      else empty end] | if length == 0 then "all \($count): generation 1, annotated with their ConfigMaps, one ControllerRevision" else .[] end)')
# The StatefulSet controller's Events come after its pods: awaited, bounded.
if pods=$(../../lib/workload.sh pod-creations "$COUNT" 2>&1); then
  echo "$pods"
else
  fail "${pods#*FAIL: }"
fi

metrics=$(../../lib/webhook.sh metrics wh)
patched=$(awk '/^restarter_webhook_admissions_total\{/ && /outcome="patched"/ && /kind="StatefulSet"/ && /operation="CREATE"/ { s += $NF } END { print s + 0 }' <<<"$metrics")
failed=$(awk '/^restarter_webhook_admissions_total\{/ && /outcome="(failed|malformed)"/ { s += $NF } END { print s + 0 }' <<<"$metrics")
open=$(../../lib/webhook.sh apiserver-count wh apiserver_admission_webhook_fail_open_count)
echo "webhook: $patched CREATEs patched, $failed failed; apiserver fail-open count $open"
((patched >= COUNT)) || fail "the webhook patched $patched CREATEs, not $COUNT"
[[ $failed == 0 ]] || fail "the webhook counted $failed failed admissions"
[[ $open == 0 ]] || fail "the apiserver failed open $open times (the webhook did not answer in time)"

if ((failures > 0)); then
  echo "$failures checks failed"
  exit 1
fi
echo "all checks passed"
