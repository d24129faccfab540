#!/usr/bin/env bash
# What the apiserver's own histogram of watch event sizes says (apiserver_watch_events_sizes, one
# series per resource, counted for every event sent to every watcher, a streaming list's initial
# events included).
#
#   watch-sizes.sh large RESOURCE   the number of events of core RESOURCE (configmaps, secrets)
#                                   sent larger than 131072 bytes, the largest finite bucket
set -euo pipefail
[[ $# -eq 2 && $1 == large ]] || { sed -n '2,7p' "$0" >&2; exit 2; }
kubectl get --raw /metrics | awk -v resource="resource=\"$2\"" '
  index($0, "apiserver_watch_events_sizes_bucket{") == 1 && index($0, "group=\"\"") && index($0, resource) {
    if (index($0, "le=\"131072\"")) finite = $NF
    if (index($0, "le=\"+Inf\"")) all = $NF
  }
  END { printf "%d\n", all - finite }'
