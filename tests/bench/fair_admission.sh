#!/usr/bin/env bash
# The latency of real admission requests while serve-webhook is attacked from other loopback
# addresses (a measurement, not a test; not run by CI). Needs no cluster: the webhook serves
# certificates from gen-certs files and gets a kubeconfig naming a closed loopback port, and every
# review is unlabeled, so nothing is looked up. Everything talks to loopback only.
#
#   SOURCES=N tests/bench/fair_admission.sh [RESTARTER_BIN]
#
# For each attack (none, then tests/tools/hostile_client.py hold --source 127.0.0.2 --sources N,
# N attacking addresses (default 1), with: 128 trickle, 300 slow, 300 slow-body of 4,000,000
# bytes, 300 stalled handshakes, 300 stalled handshakes each closed by the client at 1.9 s and
# reopened, 600 pipelining connections, two hogs of 4,700,000 and 93,000 bytes per address),
# once the attack is established, REVIEWS (default 60) reviews are
# sent from 127.0.0.1 one after another, each on a new TLS connection (the worst case for the
# apiserver: a new connection must be admitted), every 0.1 s, with a 5 s timeout (the webhook
# configuration's); printed: answered (HTTP 200), median, p90 and max seconds from connect to
# answer, and the load average (the machine may be shared).
# Needs: python3, curl.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
bench_init "${1:-}" python3 curl
REVIEWS=${REVIEWS:-60}
SOURCES=${SOURCES:-1}
PORT=${PORT:-18443}
HEALTH_PORT=${HEALTH_PORT:-18081}
tool=$repo/tests/tools/hostile_client.py

holder=
webhook_alone "$PORT" "$HEALTH_PORT"

measure() {
  python3 - "$PORT" "$REVIEWS" <<'PY'
import json, socket, ssl, statistics, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
    "uid": "00000000-0000-0000-0000-000000000001",
    "kind": {"group": "apps", "version": "v1", "kind": "StatefulSet"},
    "resource": {"group": "apps", "version": "v1", "resource": "statefulsets"},
    "namespace": "bench", "name": "bench", "operation": "CREATE",
    "object": {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "bench", "namespace": "bench"},
               "spec": {"template": {"spec": {"containers": [{"name": "app", "image": "x"}]}}}}}}).encode()
request = (f"POST /mutate HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
           f"Content-Length: {len(body)}\r\n\r\n").encode() + body
context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
context.check_hostname = False
context.verify_mode = ssl.CERT_NONE
seconds, ok = [], 0
for _ in range(n):
    start = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.1", 0)) as raw:
            with context.wrap_socket(raw) as s:
                s.sendall(request)
                data = b""
                while b"\r\n" not in data:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    data += chunk
        ok += data.startswith(b"HTTP/1.1 200")
    except OSError:
        pass
    seconds.append(min(time.monotonic() - start, 5.0))
    time.sleep(0.1)
seconds.sort()
print(f"{ok}/{n} answered 200; median {statistics.median(seconds):.4f} s, "
      f"p90 {seconds[int(0.9 * (n - 1))]:.4f} s, max {seconds[-1]:.4f} s")
PY
}

attack() {
  local name=$1
  shift
  if (($# > 0)); then
    python3 "$tool" hold "$@" --source 127.0.0.2 --sources "$SOURCES" --duration 600 --status "$work/hold.json" >/dev/null 2>&1 &
    holder=$!
    bench_track "$holder"
    sleep 5  # the attack establishes itself (reopening what the server closes)
  fi
  echo "$name (from $SOURCES addresses): $(measure); load $(load)"
  if [[ -n $holder ]]; then kill "$holder" 2>/dev/null || true; wait "$holder" 2>/dev/null || true; holder=; fi
}

url=https://127.0.0.1:$PORT/mutate
attack "no attack"
attack "128 trickle" --hold "trickle,$url,128"
attack "300 slow-header" --hold "slow,$url,300"
attack "300 slow-body" --hold "slow-body,$url,300,4000000"
attack "300 stalled handshakes" --hold "handshake,$url,300"
attack "300 stalled handshakes closed at 1.9 s" --hold "handshake,$url,300" --close-after 1.9
attack "600 pipelining" --hold "pipeline,$url,600"
attack "2 budget hogs per address" --hold "hog,$url,$SOURCES,4700000" --hold "hog,$url,$SOURCES,93000"
