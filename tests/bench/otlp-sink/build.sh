#!/usr/bin/env bash
# Builds otlp-sink (the benchmark's receiver of kube-apiserver traces) unless cached, and prints
# the path of the binary. The cache is keyed by this directory's sources:
#   ${XDG_CACHE_HOME:-~/.cache}/restarter/bench/otlp-sink-<sha256>/otlp-sink
# Needs Go >= 1.26 and the Go module proxy, so run it outside the cluster's network namespace
# (tests/bench/webhook.sh calls it and says so when it cannot build); once the modules are in the
# module cache it builds offline too.
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
key=$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-16)
dir="${XDG_CACHE_HOME:-$HOME/.cache}/restarter/bench/otlp-sink-$key"
if [[ ! -x $dir/otlp-sink ]]; then
  command -v go >/dev/null || { echo "otlp-sink: go is not on PATH" >&2; exit 1; }
  tmp="$dir.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp/src"
  cp "$src/go.mod" "$src/go.sum" "$src/main.go" "$tmp/src/"
  # -mod=readonly: go.sum is checked in, so nothing is resolved afresh.
  if ! (cd "$tmp/src" && env GOWORK=off GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0 \
        go build -trimpath -ldflags="-s -w" -o "$tmp/otlp-sink" .) >"$tmp/build.log" 2>&1; then
    tail -n 20 "$tmp/build.log" >&2
    echo "otlp-sink: build failed (log: $tmp/build.log)" >&2
    exit 1
  fi
  rm -rf "$dir"
  mv "$tmp" "$dir"
fi
echo "$dir/otlp-sink"
