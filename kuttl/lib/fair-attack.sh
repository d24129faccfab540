#!/usr/bin/env bash
# One attack on serve-webhook `wh` (kuttl/lib/webhook.sh, started with its health port) while the
# apiserver calls it: the steps of kuttl webhook-fair-admission (one attacking address) and
# webhook-many-sources (several) run it from their suite's directory (`bash
# ../../lib/fair-attack.sh ATTACK [SOURCES]`). It runs ATTACK from SOURCES addresses (default 1:
# 127.0.0.2, an attacking pod's own address; N: 127.0.0.2 on, N pods) against the webhook's HTTPS
# port and its health port, and meanwhile creates COUNT labeled StatefulSets through the apiserver
# (which calls the webhook from 127.0.0.1) and probes /healthz from 127.0.0.1 as a kubelet does.
# Asserts, and prints every failure before exiting 1:
#   - the attack was in force: each of its groups opened at least min(COUNT_OF_GROUP, SHARE)
#     connections before the creates and the window lasted at least MIN_WINDOW seconds (the tool
#     reopens every connection the server closes, as an attacker would);
#   - every StatefulSet was annotated by the webhook at creation: generation 1 and its
#     ConfigMap's <uid>/<resourceVersion>, no warning naming restarter from kubectl;
#   - /healthz (probed from before the attack began to its end) never failed
#     PROBE_FAILURE_THRESHOLD probes in a row (2xx/3xx within the kubelet's 1 s timeout): a kubelet
#     would not have restarted the webhook;
#   - the webhook's RSS (sampled every 0.5 s) stayed under the manifests' memory limit, its open
#     connections never passed its cap, and within 30 s of the attack's end RSS was back within
#     RSS_SETTLED_KIB of where it started (RSS printed, not asserted, under AddressSanitizer).
# Each suite asserts the apiserver's fail-open count once after all its attacks. Every process it
# starts is stopped on exit (and stops by itself once this script is gone).
set -euo pipefail

attack=${1:?usage: fair-attack.sh trickle|slow|slow-body|handshake|hog|hogs|served|pipeline|cycle [SOURCES]}
sources=${2:-1}       # attacking addresses, from 127.0.0.2 on: pods, each with its own
COUNT=20              # labeled StatefulSets created under attack
ATTACKER=127.0.0.2    # the (first) attacker's address; the apiserver and the prober use 127.0.0.1
SHARE=32              # connections each group must have opened (the health port's per-address share)
PROBE_TIMEOUT=1       # the kubelet's default probe timeoutSeconds
PROBE_FAILURE_THRESHOLD=3  # the manifests' livenessProbe failureThreshold
MIN_WINDOW=8          # seconds the attack lasts at least once established (4 slow byte intervals)
OPEN_SECONDS=30       # bound on establishing the attack
TOOL_SECONDS=300      # the tools' own bound (they are stopped long before)
MAX_CONNECTIONS=128   # the webhook's hard connection cap (http::Limits::maxConnections)
CLOSES_UNDER_WAY=4    # evicted connections whose close may not have run when a sample is taken
MEMORY_LIMIT_KIB=$((128 * 1024))  # the manifests' memory limit of the webhook container
RSS_SETTLED_KIB=$((24 * 1024))    # RSS may stay this much above its start once the attack is over

# shellcheck source=SCRIPTDIR/hostile.sh
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
  # From several addresses: two hogs per address, 1,100,000 and 93,000 bytes (x 7: 7.9 MiB, far
  # under the address's share; from 4 addresses together the whole 32 MiB); on the health port two
  # slow heads per address.
  hogs) holds=(--hold "hog,$webhook,$sources,1100000" --hold "hog,$webhook,$sources,93000"
               --hold "slow,$probe,$((2 * sources))") ;;
  # Connections that were served (a whole small review or GET at once, answered) and then stay
  # open, idle.
  served) holds=(--hold "served,$webhook,600" --hold "served,$probe,300") ;;
  # Connections pipelining requests, 8 at once and 8 more at each answer, never idle: before the
  # hard cap, newcomers let in through the reserve stayed open above the cap once served (600 from
  # 4 addresses left 601 open, 1,500 took the webhook past its memory limit).
  pipeline) holds=(--hold "pipeline,$webhook,600" --hold "pipeline,$probe,300") ;;
  # 16+ bytes of a ClientHello (on the health port: 50 bytes of no head), each connection closed
  # by the client itself at 1.9 s, just inside the first-request deadline, and reopened: never
  # idle, never past a receive grace, and no certificate needed.
  cycle) holds=(--hold "handshake,$webhook,300" --hold "handshake,$probe,300") ;;
  *) echo "fair-attack.sh: unknown attack $attack" >&2; exit 2 ;;
esac
extra=()
[[ $attack == cycle ]] && extra=(--close-after 1.9)
echo "attack $attack from $sources address(es) from $ATTACKER: ${holds[*]} ${extra[*]}"

# The webhook's RSS and open connections, sampled every 0.5 s from before the attack to its end.
pid=$(../../lib/webhook.sh pid wh)
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }
open_connections() {
  ../../lib/webhook.sh metrics wh | awk '/^restarter_webhook_http_connections\{server="webhook"\}/ { print $NF }'
}
rss_start=$(rss_kib)
(
  while kill -0 "$pid" 2>/dev/null; do
    echo "$(rss_kib) $(open_connections)"
    sleep 0.5
  done
) >"$work/samples" 2>/dev/null &
sampler=$!
track "$sampler"

# The kubelet-like prober runs from before the attack to its end.
python3 "$tool" probe --url "$probe" --timeout "$PROBE_TIMEOUT" --duration "$TOOL_SECONDS" \
  --status "$work/probe.json" >"$work/probe.out" 2>&1 &
prober=$!
track "$prober"

python3 "$tool" hold "${holds[@]}" "${extra[@]}" --source "$ATTACKER" --sources "$sources" --duration "$TOOL_SECONDS" \
  --status "$work/hold.json" >"$work/hold.out" 2>&1 &
holder=$!
track "$holder"
await_hold "$holder" "$work/hold.json" "$SHARE" "$OPEN_SECONDS"

kill -USR1 "$holder"
window_start=$SECONDS
name=$attack
((sources == 1)) || name=$attack-from-$sources
statefulsets "$name" "$COUNT" 0 'cfg-{i}' "attack: $name" >"$work/statefulsets.yaml"
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

# Memory and connections stayed within their bounds, and memory came back once the attack was over
# (the server gives free pages back within its 5 s check once connections fell to half).
stop_tool "$sampler"
read -r rss_max open_max < <(awk '$1 > r { r = $1 } $2 > o { o = $2 } END { print r + 0, o + 0 }' "$work/samples")
echo "webhook RSS: $rss_start KiB at the start, $rss_max KiB at most; $open_max connections open at most"
# Under AddressSanitizer (libasan mapped into the process) RSS is printed, not asserted: shadow
# memory and the allocator's quarantine make it meaningless (as kuttl webhook-hostile-bodies).
sanitized=0
if grep -q libasan "/proc/$pid/maps" 2>/dev/null; then sanitized=1; fi
((sanitized == 1 || rss_max < MEMORY_LIMIT_KIB)) || fail "RSS reached $rss_max KiB, the limit is $MEMORY_LIMIT_KIB KiB"
# (An evicted connection is closed on its own strand just after its successor is admitted: the
# gauge may pass the cap by the closes under way, a few at most.)
((open_max <= MAX_CONNECTIONS + CLOSES_UNDER_WAY)) ||
  fail "$open_max connections were open at once, the cap is $MAX_CONNECTIONS"
settle_deadline=$((SECONDS + 30))
while ((sanitized == 0 && $(rss_kib) > rss_start + RSS_SETTLED_KIB && SECONDS < settle_deadline)); do sleep 0.5; done
rss_end=$(rss_kib)
echo "webhook RSS after the attack: $rss_end KiB"
((sanitized == 1 || rss_end <= rss_start + RSS_SETTLED_KIB)) ||
  fail "RSS stayed at $rss_end KiB after the attack, more than $RSS_SETTLED_KIB KiB above its start ($rss_start KiB)"

# Every StatefulSet annotated at creation.
check_no_warning "$work/create.err"
check_annotated "attack=$name" "$name" 'cfg-{i}' "$COUNT"

# /healthz never failed as many probes in a row as would restart the webhook.
check_probes "$work/probe.json" "$PROBE_FAILURE_THRESHOLD"

finish "all checks passed"
