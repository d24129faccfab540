#!/bin/sh
# status-await.sh JQ_FILTER [STATUS_FLAG...]: waits (bounded, 100 s) until `restarter status -o
# json` in this namespace (with the given extra flags) satisfies the jq filter (which must yield
# true), validating the document against its schema each time; prints the table (-o wide, with the
# same flags) on success, and the last document on failure. Used by status-fleet, status-roll and
# controller-rollout-manual.
set -eu
filter=$1
shift
lib=$(dirname "$0")
deadline=$(($(date +%s) + 100))
doc=$(mktemp)
trap 'rm -f "$doc" "$doc.err"' EXIT
while :; do
  if sh "$lib/restarter.sh" status -n "$NAMESPACE" "$@" -o json >"$doc" 2>"$doc.err" &&
     "$lib/validate-explanation.py" workload-status-list.schema.json <"$doc" >/dev/null &&
     jq -e "$filter" "$doc" >/dev/null; then
    sh "$lib/restarter.sh" status -n "$NAMESPACE" "$@" -o wide
    exit 0
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "FAIL: status never satisfied: $filter"
    cat "$doc" "$doc.err"
    exit 1
  fi
  sleep 0.5
done
