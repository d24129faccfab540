#!/usr/bin/env bash
# Helpers of the content-aware suites (kuttl controller-content*), for TestStep scripts.
#
#   content.sh revisions STS              ControllerRevisions of StatefulSet STS (by its pods' app label)
#   content.sh snapshot STS FILE          write STS's generation, revision count and writes line to FILE
#   content.sh unchanged STS FILE         fail unless STS still matches the snapshot in FILE
#   content.sh wait-revisions STS N       wait (bounded, 90 s) until STS has exactly N ControllerRevisions
#   content.sh wait-metric PATTERN N [C]  wait (bounded, 90 s) until controller C's metric line
#                                         matching PATTERN (grep -E, up to the value) is at least N
#   content.sh record STS                 STS's restarter.stackable.tech/content-digests ("" if none)
set -euo pipefail

die() { printf 'content.sh: %s\n' "$*" >&2; exit 1; }
: "${NAMESPACE:?NAMESPACE must be set (kuttl sets it)}"
lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

revisions() {
  kubectl -n "$NAMESPACE" get controllerrevisions -l "app=$1" -o name | wc -l
}

snapshot() {
  printf '%s %s %s\n' "$(kubectl -n "$NAMESPACE" get statefulset "$1" -o jsonpath='{.metadata.generation}')" \
    "$(revisions "$1")" "$("$lib/workload.sh" writes statefulset "$1")" >"$2"
}

unchanged() {
  local now
  now=$(mktemp)
  snapshot "$1" "$now"
  if ! cmp -s "$2" "$now"; then
    echo "FAIL: statefulset $1 changed (generation, revisions, writes):"
    echo "before: $(cat "$2")"
    echo "after:  $(cat "$now")"
    rm -f "$now"
    exit 1
  fi
  rm -f "$now"
  echo "statefulset $1 unchanged: generation $(cut -d' ' -f1 "$2"), $(cut -d' ' -f2 "$2") revisions, no write"
}

wait_metric() {
  local pattern=$1 want=$2 name=${3:-controller} deadline got
  deadline=$((SECONDS + 90))
  while :; do
    # Before the first reconcile the metric has no line yet, and just after a start the endpoint
    # may not answer: both are "not yet", not a failure (under pipefail a grep that matches
    # nothing would end the script here, silently).
    got=$({ "$lib/controller.sh" metrics "$name" 2>/dev/null || true; } | { grep -E "^$pattern" || true; } |
      awk 'NR == 1 { print $2 }')
    [[ -n $got ]] && awk -v g="$got" -v w="$want" 'BEGIN { exit !(g >= w) }' && { echo "$pattern = $got"; return 0; }
    ((SECONDS < deadline)) || die "metric $pattern: want >= $want, got '${got}' after 90s"
    sleep 0.2
  done
}

# The waits live here, in bash: kuttl runs a step's script with `sh -c` (dash on Debian), which has
# no SECONDS, so a deadline written in the step itself would never expire or fail at once.
wait_revisions() {
  local deadline=$((SECONDS + 90))
  until [[ $(revisions "$1") == "$2" ]]; do
    ((SECONDS < deadline)) || die "statefulset $1: want $2 ControllerRevisions, have $(revisions "$1") after 90s"
    sleep 0.2
  done
  echo "statefulset $1: $2 ControllerRevisions"
}

record() {
  kubectl -n "$NAMESPACE" get statefulset "$1" -o json |
    jq -r '.metadata.annotations["restarter.stackable.tech/content-digests"] // ""'
}

cmd=${1:-}
(($#)) && shift
case $cmd in
  revisions) revisions "$@" ;;
  snapshot) snapshot "$@" ;;
  unchanged) unchanged "$@" ;;
  wait-revisions) wait_revisions "$@" ;;
  wait-metric) wait_metric "$@" ;;
  record) record "$@" ;;
  *) die "usage: see the top of $0" ;;
esac
