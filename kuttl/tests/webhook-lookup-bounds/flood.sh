#!/usr/bin/env bash
# webhook-lookup-bounds, step 02 (README.md): small reviews cannot drain the lookup bucket.
# tests/tools/hostile_client.py amplify sends RATE one-reference reviews a second (LOOPS loops,
# no client certificate: the webhook runs without client authentication) naming the namespace
# ATTACKER_NAMESPACE, for up to ATTACK_SECONDS. Once the webhook has refused one of them for a
# lookup bound (the attack in force), COUNT labeled StatefulSets flood-N are created in the test's
# namespace. Asserts: reviews of the attacker were refused for its namespace's share; every
# flood-N is generation 1 with cfg-N's <uid>/<resourceVersion>, kubectl saw no warning; the
# apiserver never failed open. Prints the attacker's rate and answers.
# With --lookup-share 1 (the bucket alone) the same attack leaves the creates unannotated.
set -euo pipefail

COUNT=20
RATE=200
LOOPS=4
ATTACK_SECONDS=90
ATTACKER_NAMESPACE=hostile-flood
WAIT_SECONDS=60
# shellcheck source=SCRIPTDIR/../../lib/hostile.sh
source ../../lib/hostile.sh

port=$(cat "$(../../lib/webhook.sh dir wh)/port")
url=https://127.0.0.1:$port/mutate
refusals() { # reviews refused for the rate limit or a namespace's share
  echo $(($(webhook_metric 'restarter_webhook_lookup_refusals_total{reason="rate-limit"}') +
    $(webhook_metric 'restarter_webhook_lookup_refusals_total{reason="namespace-share"}')))
}

share_before=$(webhook_metric 'restarter_webhook_lookup_refusals_total{reason="namespace-share"}')
refused_before=$(refusals)
python3 "$tool" amplify --url "$url" --loops "$LOOPS" --rate "$RATE" --names 1 --namespace "$ATTACKER_NAMESPACE" \
  --duration "$ATTACK_SECONDS" --status "$work/flood.status" >"$work/flood.json" &
attacker=$!
track "$attacker"
deadline=$((SECONDS + WAIT_SECONDS))
until (($(refusals) > refused_before)); do
  ((SECONDS < deadline)) || { fail "no review refused for a lookup bound within ${WAIT_SECONDS}s"; break; }
  kill -0 "$attacker" 2>/dev/null || { fail "the attacker exited early: $(cat "$work/flood.json")"; break; }
  sleep 0.2
done
echo "attack in force after $((SECONDS - deadline + WAIT_SECONDS)) s: $(($(refusals) - refused_before)) reviews refused"
statefulsets flood "$COUNT" 0 'cfg-{i}' 'batch: flood' >"$work/sts.yaml"
kubectl -n "$NAMESPACE" create -f "$work/sts.yaml" >/dev/null 2>"$work/create.err" || fail "create: $(cat "$work/create.err")"
# A few seconds more of attack after the creates, then its report.
sleep 3
stop_tool "$attacker"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("attacker:", {k: r.get(k) for k in ("elapsed_seconds", "statuses", "answered", "patched", "errors", "p50_seconds", "max_seconds")}, "reviews/s:", round(r["answered"] / max(r["elapsed_seconds"], 0.001)))' "$work/flood.status"
share=$(($(webhook_metric 'restarter_webhook_lookup_refusals_total{reason="namespace-share"}') - share_before))
echo "reviews refused for the attacker namespace's share: $share"
((share >= 1)) || fail "no review was refused for its namespace's share"
check_no_warning "$work/create.err"
check_annotated batch=flood flood 'cfg-{i}' "$COUNT"
check_no_fail_open

finish "ok: $RATE one-reference reviews/s of one namespace held by its share; $COUNT StatefulSets annotated"
