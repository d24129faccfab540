#!/usr/bin/env bash
# What hostile or heavy clients cost serve-webhook (a measurement, not a test; not run by CI). Needs
# no cluster: the webhook serves certificates from gen-certs files and gets a kubeconfig naming a
# closed loopback port, and every review sent is unlabeled, so nothing is looked up. Everything
# talks to 127.0.0.1 only.
#
#   tests/bench/webhook_limits.sh [RESTARTER_BIN]
#
# Each of RUNS (default 3) runs starts a fresh webhook and measures, printing the answers and the
# webhook's peak resident memory (VmHWM):
#   1. 16 parallel AdmissionReviews of 7.9 MB, each over its own connection: one large string,
#      then many tiny values (the costliest shape to parse) (parallel_reviews.py);
#   2. with 16 slow-header connections (a byte every 2 s) and 200 idle ones open over TLS, whether
#      a review and /healthz are still answered (within 10 s);
#   3. throughput: wrk, $WRK_THREADS threads, $WRK_CONNECTIONS keep-alive connections, $WRK_SECONDS
#      s, a small unlabeled review (as webhook.sh part 1).
# The load average is printed with each figure: the machine may be shared.
# Needs: python3, wrk (Debian package wrk), curl.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
bench_init "${1:-}" python3 wrk curl
RUNS=${RUNS:-3}
WRK_THREADS=${WRK_THREADS:-2}
WRK_CONNECTIONS=${WRK_CONNECTIONS:-16}
WRK_SECONDS=${WRK_SECONDS:-10}
PORT=${PORT:-18443}
HEALTH_PORT=${HEALTH_PORT:-18081}

hwm() { awk '/^VmHWM/ { printf "%.1f MiB", $2 / 1024 }' "/proc/$webhook_pid/status"; }

cat >"$work/review.json" <<'JSON'
{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"00000000-0000-0000-0000-000000000001","kind":{"group":"apps","version":"v1","kind":"StatefulSet"},"resource":{"group":"apps","version":"v1","resource":"statefulsets"},"namespace":"bench","name":"bench","operation":"CREATE","object":{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"bench","namespace":"bench"},"spec":{"serviceName":"bench","replicas":1,"selector":{"matchLabels":{"app":"bench"}},"template":{"metadata":{"labels":{"app":"bench"}},"spec":{"containers":[{"name":"app","image":"registry.invalid/bench:1"}]}}}}}}
JSON
cat >"$work/post.lua" <<'LUA'
local f = io.open(os.getenv("BODY"), "r")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
LUA

start() { webhook_alone "$PORT" "$HEALTH_PORT" || exit 1; }
stop() { kill "$webhook_pid"; wait "$webhook_pid" 2>/dev/null || true; }
review() { curl -sk -o /dev/null -w '%{http_code}' --max-time 10 "https://127.0.0.1:$PORT/mutate" \
             -H 'Content-Type: application/json' --data-binary "@$work/review.json"; }

for run in $(seq "$RUNS"); do
  echo "== run $run"
  start
  echo "start: VmHWM $(hwm)"
  for shape in string tiny; do
    echo "load $(load): $(python3 "$here/parallel_reviews.py" "$PORT" 16 7900000 "$shape"); VmHWM $(hwm)"
  done
  # 16 slow-header connections and 200 idle ones (TLS set up, then a head byte every 2 s, or
  # nothing), then a review and a probe while they last.
  rm -f "$work/ready"
  python3 - "$PORT" "$work/ready" <<'PY' &
import socket, ssl, sys, time
port, ready = int(sys.argv[1]), sys.argv[2]
context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
def connect():
    try:
        return context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10))
    except OSError:
        return None
slow = [s for s in (connect() for _ in range(16)) if s]
idle = [s for s in (connect() for _ in range(200)) if s]
for s in slow:
    s.send(b"POST /mutate HTTP/1.1\r\n")
open(ready, "w").close()
for _ in range(8):
    time.sleep(2)
    for s in slow:
        try:
            s.send(b"X")
        except OSError:
            pass
PY
  attacker=$!
  for _ in $(seq 300); do [[ -e $work/ready ]] && break; sleep 0.1; done
  echo "with 16 slow and 200 idle connections: review $(review), /healthz $(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$HEALTH_PORT/healthz")"
  wait "$attacker" || true
  echo "load $(load): wrk $(BODY="$work/review.json" wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"${WRK_SECONDS}s" --latency \
    -s "$work/post.lua" "https://127.0.0.1:$PORT/mutate" | awk '/Requests\/sec/ { r = $2 } $1 == "99%" { p = $2 } /Non-2xx/ { n = $0 }
    END { printf "%s reviews/s, p99 %s %s", r, p, n }'); VmHWM $(hwm)"
  stop
done
