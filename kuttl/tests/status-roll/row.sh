#!/bin/sh
# row.sh WORKLOAD REGEX [-o wide]: fails unless the table row of WORKLOAD (e.g. statefulset/db) in
# `restarter status` (serve-controller's --ondelete-ready-timeout, 10s) matches the extended
# regular expression REGEX (anchored at both ends); prints the table on failure.
set -eu
workload=$1 regex=$2
shift 2
table=$(sh ../../lib/restarter.sh status -n "$NAMESPACE" --ondelete-ready-timeout 10s "$@")
if ! printf '%s\n' "$table" | grep -Eq "^$regex\$"; then
  echo "FAIL: $workload's row does not match ^$regex\$:"
  printf '%s\n' "$table"
  exit 1
fi
echo "$workload: $(printf '%s\n' "$table" | grep -E "^$regex\$")"
