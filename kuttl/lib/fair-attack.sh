#!/usr/bin/env bash
# webhook-fair-admission, steps 01-05 (README.md): `fair.sh ATTACK` runs one attack from
# ATTACKER (127.0.0.2: an attacking pod's own address) against serve-webhook's HTTPS port and its
# health port, and meanwhile creates COUNT labeled StatefulSets through the apiserver (which calls
# the webhook from 127.0.0.1) and probes /healthz from 127.0.0.1 as a kubelet does. Asserts, and
# prints every failure before exiting 1:
#   - the attack was in force: each of its groups opened at least min(COUNT_OF_GROUP, SHARE)
#     connections before the creates and the window lasted at least MIN_WINDOW seconds (the tool
#     reopens every connection the server closes, as an attacker would);
#   - every StatefulSet was annotated by the webhook at creation: generation 1 and its
#     ConfigMap's <uid>/<resourceVersion>, no warning naming restarter from kubectl;
#   - /healthz (probed from before the attack began to its end) never failed
#     PROBE_FAILURE_THRESHOLD probes in a row (2xx/3xx within the kubelet's 1 s timeout): a kubelet
#     would not have restarted the webhook.
# The apiserver's fail-open count is asserted once after all attacks (step 06). Every process it
# starts is stopped on exit (and stops by itself once this script is gone).
set -euo pipefail

attack=${1:?usage: fair.sh trickle|slow|slow-body|handshake|hog}
COUNT=20              # labeled StatefulSets created under attack
ATTACKER=127.0.0.2    # the attacker's address; the apiserver and the prober use 127.0.0.1
SHARE=32              # connections each group must have opened (the health port's per-address share)
PROBE_TIMEOUT=1       # the kubelet's default probe timeoutSeconds
PROBE_FAILURE_THRESHOLD=3  # the manifests' livenessProbe failureThreshold
MIN_WINDOW=8          # seconds the attack lasts at least once established (4 slow byte intervals)
OPEN_SECONDS=30       # bound on establishing the attack
TOOL_SECONDS=300      # the tools' own bound (they are stopped long before)

# shellcheck source=SCRIPTDIR/../../lib/hostile.sh
source ../../lib/hostile.sh
port=$(cat "$(../../lib/webhook.sh dir wh)/port")
health=$(../../lib/webhook.sh health wh)
webhook=https://127.0.0.1:$port/mutate
probe=http://$health/healthz
case $attack in
  # Complete small reviews, each spread over 9 s (inside the 10 s deadlines), again and again.
  trickle) holds=(--hold "trickle,$webhook,128" --hold "trickle,$probe,128") ;;
  # A head one byte every 2 s, never finished.
  slow) holds=(--hold "slow,$webhook,300" --hold "slow,$probe,300") ;;
  # A whole head declaring 4,000,000 bytes (x 7 fits the address's 28 MiB share), the body one byte
  # every 2 s; the health port answers a POST's head at once (405), the tool reopens.
  slow-body) holds=(--hold "slow-body,$webhook,300,4000000" --hold "slow,$probe,300") ;;
  # The first 50 bytes of a ClientHello, then nothing (on the health port: 50 bytes of no head).
  handshake) holds=(--hold "handshake,$webhook,300" --hold "handshake,$probe,300") ;;
  # Two bodies held one byte short, 4.1 MB and 93 KB: x 7 all of one address's 28 MiB share (the
  # 4.7 MB of a hog that fills the whole 32 MiB is refused from its head, see the unit tests); on
  # the health port two slow heads.
  hog) holds=(--hold "hog,$webhook,1,4100000" --hold "hog,$webhook,1,93000" --hold "slow,$probe,2") ;;
  *) echo "fair.sh: unknown attack $attack" >&2; exit 2 ;;
esac
echo "attack $attack from $ATTACKER: ${holds[*]}"

# The kubelet-like prober runs from before the attack to its end.
python3 "$tool" probe --url "$probe" --timeout "$PROBE_TIMEOUT" --duration "$TOOL_SECONDS" \
  --status "$work/probe.json" >"$work/probe.out" 2>&1 &
prober=$!
track "$prober"

python3 "$tool" hold "${holds[@]}" --source "$ATTACKER" --duration "$TOOL_SECONDS" \
  --status "$work/hold.json" >"$work/hold.out" 2>&1 &
holder=$!
track "$holder"
await_hold "$holder" "$work/hold.json" "$SHARE" "$OPEN_SECONDS"

kill -USR1 "$holder"
window_start=$SECONDS
statefulsets "$attack" "$COUNT" 0 'cfg-{i}' "attack: $attack" >"$work/statefulsets.yaml"
created_at=$SECONDS
if kubectl -n "$NAMESPACE" create -f "$work/statefulsets.yaml" >"$work/create.out" 2>"$work/create.err"; then
  echo "$COUNT StatefulSets created in $((SECONDS - created_at)) s"
else
  fail "kubectl create failed: $(cat "$work/create.err")"
fi
while ((SECONDS - window_start < MIN_WINDOW)); do
  kill -0 "$holder" 2>/dev/null || break
  sleep 0.5
done
kill -USR2 "$holder"
stop_tool "$prober"
stop_tool "$holder"
echo "window: $((SECONDS - window_start)) s"

jq -r '.groups[] | "\(.hold): in the \(.window.seconds) s window \(.window.mean_open) open on average, \(.window.closed_by_server) closed by the server; in all \(.reached) slots reached, \(.opened_total) opened, \(.closed_by_server) closed by the server (lived \(.lifetime_seconds // "-")), \(.connect_errors) connect errors, answers \(.answers)"' \
  "$work/hold.json"
../../lib/webhook.sh metrics wh | grep -E '^restarter_webhook_http_(connections_closed|requests_rejected)_total\{' |
  awk '$NF > 0' | sed 's/^/webhook: /'

# Every StatefulSet annotated at creation.
check_no_warning "$work/create.err"
check_annotated "attack=$attack" "$attack" 'cfg-{i}' "$COUNT"

# /healthz never failed as many probes in a row as would restart the webhook.
check_probes "$work/probe.json" "$PROBE_FAILURE_THRESHOLD"

finish "all checks passed"
