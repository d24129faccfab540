#!/usr/bin/env bash
# webhook-hostile-bodies (README.md): crafted AdmissionReviews posted straight to serve-webhook's
# HTTPS port (tests/tools/hostile_client.py post), then proof that it still serves.
#   bodies.sh deep   one review whose request.kind nests DEPTH objects deep (about 600 KB):
#                    answered 400; the process alive; a labeled StatefulSet created afterwards
#                    is annotated
#   bodies.sh big    for each size in SIZES (just under the body limit, then just under the
#                    largest review the byte budget admits, so that the costliest answered path
#                    runs too): PARALLEL reviews of that size at once, shaped like a labeled
#                    StatefulSet with as many env entries as fit, then PARALLEL more with one big
#                    pod-template annotation: every one answered (any HTTP status; printed); the
#                    webhook's peak
#                    resident memory (VmHWM of /proc/<pid>/status) below MAX_PEAK_KIB; the
#                    process alive; a labeled StatefulSet created afterwards is annotated
# Under AddressSanitizer (libasan mapped into the process) the peak is printed, not asserted:
# shadow memory and the allocator's quarantine make the figure meaningless.
# Prints every failure, then exits 1.
set -euo pipefail

DEPTH=100000
# Just under the 8 MiB body limit (8388608), and just under what one client address's 28 MiB share
# of the budget admits at 7 bytes charged per body byte (4194304: lib/webhook/src/server.cpp,
# kBodyCostFactor; http::Limits::maxInFlightBytesPerSource).
SIZES="7900000 4190000"
PARALLEL=16
MAX_PEAK_KIB=$((64 * 1024))
POST_TIMEOUT=120            # seconds the tool waits for each answer
tool=../../../tests/tools/hostile_client.py

pid=$(../../lib/webhook.sh pid wh)
port=$(cat "$(../../lib/webhook.sh dir wh)/port")
url=https://127.0.0.1:$port/mutate
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

kib() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$pid/status" 2>/dev/null || true; }

# The webhook process is still the one started (PIDs are recycled: check the command line too).
alive() {
  if kill -0 "$pid" 2>/dev/null && grep -q serve-webhook "/proc/$pid/cmdline" 2>/dev/null; then
    echo "serve-webhook (pid $pid) is alive"
  else
    fail "serve-webhook (pid $pid) is gone; its log ends: $(../../lib/webhook.sh log wh | tail -3)"
  fi
}

# still_serves NAME: a labeled StatefulSet NAME created now is annotated by the webhook.
still_serves() {
  local name=$1 want got generation
  sed "s/NAME/$name/g" statefulset.tmpl | kubectl -n "$NAMESPACE" create -f - >/dev/null
  want=$(../../lib/workload.sh version configmap app-config)
  got=$(../../lib/workload.sh annotation statefulset "$name" configmap.restarter.stackable.tech/app-config)
  generation=$(../../lib/workload.sh field statefulset "$name" '{.metadata.generation}')
  echo "$name created afterwards: generation $generation, annotation ${got:-<none>}"
  [[ $got == "$want" ]] || fail "$name was not annotated at creation (want $want): the webhook no longer serves"
}

deep() {
  local out status
  out=$(python3 "$tool" post --url "$url" --deep "$DEPTH" --namespace "$NAMESPACE" \
    --configmap app-config --timeout "$POST_TIMEOUT")
  status=$(jq -r '.requests[0].status // "none"' <<<"$out")
  echo "$(jq -r '"\(.review), \(.bytes) bytes"' <<<"$out"): HTTP status $status $(jq -c '.requests[0] | {seconds, answer, error}' <<<"$out")"
  [[ $status == 400 ]] || fail "the review got HTTP status $status, not 400: $(jq -r '.requests[0].error // .requests[0].answer' <<<"$out")"
  alive
  still_serves after-deep
}

big() {
  local before peak rss shape out unanswered
  before=$(kib VmHWM)
  echo "serve-webhook before: VmHWM $((before / 1024)) MiB, VmRSS $(($(kib VmRSS) / 1024)) MiB"
  for size in $SIZES; do for shape in env annotation; do
    out=$(python3 "$tool" post --url "$url" --size "$size" --shape "$shape" --parallel "$PARALLEL" \
      --namespace "$NAMESPACE" --configmap app-config --timeout "$POST_TIMEOUT")
    echo "$PARALLEL x $(jq .bytes <<<"$out") bytes at once ($(jq -r .review <<<"$out")): HTTP statuses $(jq -c .statuses <<<"$out"), slowest $(jq '[.requests[].seconds // 0] | max' <<<"$out") s"
    unanswered=$(jq '[.requests[] | select(.status == null)] | length' <<<"$out")
    [[ $unanswered == 0 ]] ||
      fail "$unanswered of $PARALLEL reviews ($shape) got no HTTP answer: $(jq -c '[.requests[] | select(.status == null) | .error] | unique' <<<"$out")"
    alive
    echo "serve-webhook VmHWM after the $shape-shaped reviews of $size bytes: $(($(kib VmHWM) / 1024)) MiB"
  done; done
  peak=$(kib VmHWM)
  rss=$(kib VmRSS)
  if [[ -n $peak ]]; then
    echo "serve-webhook peak RSS (VmHWM): $((peak / 1024)) MiB ($peak KiB; limit $((MAX_PEAK_KIB / 1024)) MiB); VmRSS now $((rss / 1024)) MiB"
    if grep -q libasan "/proc/$pid/maps" 2>/dev/null; then
      echo "AddressSanitizer build: the peak is printed, not asserted"
    elif ((peak >= MAX_PEAK_KIB)); then
      fail "peak RSS $((peak / 1024)) MiB ($peak KiB) is not below $((MAX_PEAK_KIB / 1024)) MiB"
    fi
  fi
  still_serves after-big
}

case ${1:-} in
  deep) deep ;;
  big) big ;;
  *) echo "usage: bodies.sh deep|big" >&2; exit 2 ;;
esac
if ((failures > 0)); then
  echo "$failures checks failed"
  exit 1
fi
echo "all checks passed"
