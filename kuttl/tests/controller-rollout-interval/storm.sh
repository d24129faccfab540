#!/usr/bin/env bash
# storm.sh SECONDS RATE: changes ConfigMap `storm` RATE times a second for SECONDS (a bounded loop:
# at most SECONDS x RATE changes, and none after SECONDS), paced by the wall clock so that a slow
# change does not stretch the storm. Each change is one PATCH through a `kubectl proxy` of its own
# (a kubectl process per change could not keep that pace on two cores). Prints how many changes it
# made and over how long; fails when fewer than half the target got through (then the storm would
# prove little).
set -euo pipefail
: "${NAMESPACE:?NAMESPACE must be set (kuttl sets it)}"
seconds=$1 rate=$2

proxy_log=$(mktemp)
kubectl proxy --port=0 >"$proxy_log" 2>&1 &
proxy=$!
trap 'kill "$proxy" 2>/dev/null || true; rm -f "$proxy_log"' EXIT
port=
for _ in $(seq 100); do  # bounded: 10 s
  port=$(sed -n 's/^Starting to serve on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$proxy_log")
  [[ -n $port ]] && break
  sleep 0.1
done
[[ -n $port ]] || { cat "$proxy_log" >&2; echo "storm.sh: kubectl proxy did not start" >&2; exit 1; }
url=http://127.0.0.1:$port/api/v1/namespaces/$NAMESPACE/configmaps/storm

micros() { echo "${EPOCHREALTIME/./}"; }
step=$((1000000 / rate))
start=$(micros)
end=$((start + seconds * 1000000))
changes=0
for ((i = 0; i < seconds * rate; i++)); do
  due=$((start + i * step))
  now=$(micros)
  ((now < end)) || break
  if ((due > now)); then
    wait_us=$((due - now))
    sleep "$((wait_us / 1000000)).$(printf '%06d' $((wait_us % 1000000)))"
  fi
  curl -fsS -X PATCH -H 'Content-Type: application/merge-patch+json' \
    --data "{\"data\":{\"v\":\"$((i + 1))\"}}" "$url" >/dev/null
  changes=$((changes + 1))
done
took=$(( ($(micros) - start) / 1000 ))
echo "storm: $changes changes in ${took} ms"
((changes * 2 >= seconds * rate)) || { echo "storm.sh: only $changes of $((seconds * rate)) changes got through" >&2; exit 1; }
