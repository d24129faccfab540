#!/usr/bin/env bash
# webhook-lookup-bounds, step 01 (README.md). Asserts, and prints every failure before exiting 1:
#   - reviews naming ConfigMaps ".", ".." and one of a million bytes are answered and make no
#     lookup (restarter_webhook_lookups_total unchanged) and no long log line;
#   - while LOOPS loops of tests/tools/hostile_client.py amplify send reviews naming NAMES
#     ConfigMaps for ATTACK_SECONDS, the GETs of ConfigMaps the apiserver served
#     (apiserver_request_total, every code) and the webhook's own count stay within the bucket:
#     burst + rate x elapsed (+ SLACK for the real creates' and other clients' GETs); the webhook
#     refused reviews for the rate limit or, the attacker naming the test's namespace, for that
#     namespace's share (the attack was in force);
#   - COUNT labeled StatefulSets created meanwhile in the same namespace are annotated at creation
#     (generation 1, their ConfigMap's <uid>/<resourceVersion>: one lookup each, which the
#     reserve of the namespace's share keeps for small reviews); the apiserver never failed open.
# Without the bounds the same attack made about 1,100 GETs a second.
set -euo pipefail

COUNT=10
LOOPS=16
NAMES=1000
ATTACK_SECONDS=20
RATE=100            # serve-webhook --max-lookups-per-second (default)
BURST=2000          # serve-webhook --lookup-burst (default)
SLACK=100           # GETs of ConfigMaps by anyone else in the window, and rounding
MAX_LINE=16384      # longest log line allowed (fields are cut at 4 KiB)
WAIT_SECONDS=120
# shellcheck source=SCRIPTDIR/../../lib/hostile.sh
source ../../lib/hostile.sh

port=$(cat "$(../../lib/webhook.sh dir wh)/port")
url=https://127.0.0.1:$port/mutate
apiserver_gets() { # GETs of single ConfigMaps the apiserver served, every code
  kubectl get --raw /metrics | awk '/^apiserver_request_total\{/ && /resource="configmaps"/ && /verb="GET"/ { s += $NF } END { printf "%d\n", s }'
}
now() { date +%s.%N; }

# 1. Names no ConfigMap can have: answered, never looked up, never logged whole.
lookups=$(webhook_metric restarter_webhook_lookups_total)
python3 "$tool" amplify --url "$url" --loops 1 --reviews 3 --name . --name .. --huge-name 1000000 \
  --namespace "$NAMESPACE" --duration 60 >"$work/invalid.json"
read -r answered errors < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["answered"], r["errors"])' "$work/invalid.json")
echo "invalid names: $answered answered, $errors errors"
[[ $answered == 3 && $errors == 0 ]] || fail "reviews with invalid names: $answered answered, $errors errors; want 3, 0"
after=$(webhook_metric restarter_webhook_lookups_total)
((after == lookups)) || fail "invalid names were looked up: lookups_total $lookups -> $after"
longest=$(../../lib/webhook.sh log wh | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }')
echo "longest webhook log line: $longest bytes"
((longest <= MAX_LINE)) || fail "a log line of $longest bytes"

# 2. The amplifier, and real creates during it.
gets_before=$(apiserver_gets)
lookups_before=$(webhook_metric restarter_webhook_lookups_total)
refusals() { # reviews refused for the rate limit or their namespace's share (--lookup-share)
  echo $(($(webhook_metric 'restarter_webhook_lookup_refusals_total{reason="rate-limit"}') +
    $(webhook_metric 'restarter_webhook_lookup_refusals_total{reason="namespace-share"}')))
}
refused_before=$(refusals)
started=$(now)
python3 "$tool" amplify --url "$url" --loops "$LOOPS" --names "$NAMES" --namespace "$NAMESPACE" \
  --duration "$ATTACK_SECONDS" >"$work/attack.json" &
attacker=$!
track "$attacker"
deadline=$((SECONDS + WAIT_SECONDS))
until (($(refusals) > refused_before)); do
  ((SECONDS < deadline)) || { fail "no review refused for the rate limit or its share within ${WAIT_SECONDS}s"; break; }
  sleep 0.2
done
statefulsets web "$COUNT" 0 'cfg-{i}' >"$work/sts.yaml"
kubectl -n "$NAMESPACE" create -f "$work/sts.yaml" >/dev/null 2>"$work/create.err" || fail "create: $(cat "$work/create.err")"
wait "$attacker" || fail "the amplifier exited $?"
ended=$(now)
gets=$(($(apiserver_gets) - gets_before))
lookups=$(($(webhook_metric restarter_webhook_lookups_total) - lookups_before))
refused=$(($(refusals) - refused_before))
allowed=$(python3 -c "import sys; print(int($BURST + $RATE * ($ended - $started)) + $SLACK)")
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("amplifier:", {k: r.get(k) for k in ("elapsed_seconds", "statuses", "answered", "patched", "errors", "p50_seconds", "max_seconds")})' "$work/attack.json"
echo "window $(python3 -c "print(round($ended - $started, 1))") s: apiserver ConfigMap GETs $gets, webhook lookups $lookups, bound $allowed; reviews refused for the rate or the namespace's share $refused"
((gets <= allowed)) || fail "the apiserver served $gets ConfigMap GETs, more than the $allowed the bucket allows"
((lookups <= allowed)) || fail "the webhook made $lookups lookups, more than $allowed"
((refused >= 1)) || fail "no review was refused for the rate limit or its share: the attack was not in force"
check_no_warning "$work/create.err"
check_annotated restarter.stackable.tech/enabled=true web 'cfg-{i}' "$COUNT"
check_no_fail_open

finish "ok: invalid names never looked up; the amplifier bounded by the rate; $COUNT StatefulSets annotated"
