#!/usr/bin/env bash
# Benchmark of serve-webhook (a measurement, not a test; not run by CI). Needs a running local
# control plane (tests/cluster) and runs inside its network namespace:
#
#   RESTARTER_CLUSTER=bench tests/cluster/cluster.sh up
#   RESTARTER_CLUSTER=bench tests/cluster/cluster.sh exec -- tests/bench/webhook.sh [RESTARTER_BIN]
#
# Measures, each RUNS times (default 3), printing the median and the range:
#   1. the server alone, on loopback: wrk (keep-alive, $WRK_THREADS threads, $WRK_CONNECTIONS
#      connections, $WRK_SECONDS s) POSTing AdmissionReviews of three kinds: an unlabeled object
#      (passes unchanged), a labeled StatefulSet without references (annotation logic, no lookup),
#      a labeled StatefulSet with a ConfigMap and a Secret (two metadata GETs against the local
#      apiserver, in parallel): reviews per second and p99 latency;
#   2. end to end: labeled StatefulSets created at a steady $RATE per second for $E2E_SECONDS s
#      through the apiserver, for each kind in $E2E_BODIES (default "refs norefs": with a
#      ConfigMap and a Secret, and without references, which shows the apiserver's and the
#      transport's own share), with the latency as the apiserver itself measures it
#      (apiserver_admission_webhook_admission_duration_seconds for this webhook; its buckets are
#      5 ms, 25 ms, 100 ms, ...: per run the delta of the le=0.005 bucket over the total, the p99
#      bound it implies (p99 < 10 ms is shown only when >= 99 % are in le=0.005), and an
#      interpolated p50/p99; over the runs the median and range of that share) and as the webhook
#      measures it (restarter_webhook_admission_duration_seconds). The creations come from one
#      process over one keep-alive connection (create_at_rate.py), not a process per creation.
#      Exact figures: when the cluster was brought up with tracing,
#        RESTARTER_CLUSTER_APISERVER_TRACING=127.0.0.1:4317 tests/cluster/cluster.sh up
#      the apiserver's own span of every webhook call ("Call mutating webhook", timed by the
#      apiserver around the HTTPS call and the patch it applies: what the histogram measures) is
#      received by otlp-sink (built by otlp-sink/build.sh; run that once outside the namespace) and
#      each run prints nearest-rank p50/p90/p99/max and the share <= 5 ms (spans.py);
#      While the end-to-end runs go on, $HOSTILE_IDLE idle TLS connections (default 200) and
#      $HOSTILE_SLOW slow-header ones (default 32, a byte every 2 s) are held open against the
#      webhook by tests/tools/hostile_client.py, as the hardening's attacker would; the report says
#      how many were open on average during the runs (the server keeps at most 128 connections and
#      evicts the oldest idle one for a newcomer, so the idle ones cannot all be held at once).
#      HOSTILE_IDLE=0 HOSTILE_SLOW=0 measures without them. $HOSTILE_HEALTH_SLOW slow-header
#      connections (default 8) are held against the webhook's health port as well, and a prober
#      does what the kubelet does (a new connection per GET /healthz every 0.25 s, 1 s timeout)
#      all through the runs: the report gives its probes, failures and latency max/p99/p50;
#   3. the webhook's resident memory (VmRSS, and the peak VmHWM) after each part.
# BENCH_RESULTS_DIR=DIR writes, with the traces, DIR/webhook-e2e-<kind>.json: every span's duration
# of part 2's runs for that kind, the input of tests/bench/plot.py (tests/bench/record.py).
# SKIP_SERVER_ALONE=1 skips part 1. WEBHOOK_FLAGS adds serve-webhook flags (split on blanks), e.g.
# --content-aware=off to compare with the metadata-only lookups.
# Needs: wrk (Debian package wrk), curl, jq, kubectl (the cluster's), python3.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
SKIP_SERVER_ALONE=${SKIP_SERVER_ALONE:-0}
# wrk only for part 1 (Debian package wrk; not among tests/install-deps.sh's, so not on CI).
if [[ $SKIP_SERVER_ALONE == 1 ]]; then bench_init "${1:-}" curl jq kubectl python3; else bench_init "${1:-}" wrk curl jq kubectl python3; fi
RUNS=${RUNS:-3}
WRK_THREADS=${WRK_THREADS:-2}
WRK_CONNECTIONS=${WRK_CONNECTIONS:-16}
WRK_SECONDS=${WRK_SECONDS:-10}
RATE=${RATE:-5}
E2E_SECONDS=${E2E_SECONDS:-20}
# What the end-to-end StatefulSets reference: "refs" (a ConfigMap and a Secret) is the figure;
# "norefs" (nothing to look up) shows what the apiserver and the transport alone cost.
E2E_BODIES=${E2E_BODIES:-refs norefs}
HOSTILE_IDLE=${HOSTILE_IDLE:-200}
HOSTILE_SLOW=${HOSTILE_SLOW:-32}
HOSTILE_HEALTH_SLOW=${HOSTILE_HEALTH_SLOW:-8}
PORT=${PORT:-18443}
METRICS_PORT=${METRICS_PORT:-18080}
HEALTH_PORT=${HEALTH_PORT:-18081}
PROXY_PORT=${PROXY_PORT:-18001}
ns=webhook-bench
name=webhook-bench.restarter.stackable.tech

proxy_pid="" sink_pid="" holder_pid="" prober_pid=""

rss() { awk '/^VmRSS|^VmHWM/ { printf "%s %d MiB  ", $1, $2 / 1024 }' "/proc/$webhook_pid/status"; echo; }

echo "== setup: gen-certs, serve-webhook --cert-dir, install-mwc (namespace $ns only)"
read -ra webhook_flags <<<"${WEBHOOK_FLAGS:-}"
webhook_in_cluster "$ns" "$name" "$PORT" "$METRICS_PORT" "127.0.0.1:$HEALTH_PORT" "${webhook_flags[@]}"
kubectl -n "$ns" create configmap app-config --from-literal=setting=1 >/dev/null
kubectl -n "$ns" create secret generic app-secret --from-literal=password=x >/dev/null
echo "webhook pid $webhook_pid; $(nproc) cores; $(awk '/MemTotal/ { printf "%d GiB", $2 / 1048576 }' /proc/meminfo)"
rss

# AdmissionReview bodies.
sts() {  # sts LABELED(true|false) REFS(true|false)
  jq -n --argjson labeled "$1" --argjson refs "$2" --arg ns "$ns" '{
    apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
    request: {uid: "00000000-0000-0000-0000-000000000001",
      kind: {group: "apps", version: "v1", kind: "StatefulSet"},
      resource: {group: "apps", version: "v1", resource: "statefulsets"},
      namespace: $ns, name: "bench", operation: "CREATE",
      object: {apiVersion: "apps/v1", kind: "StatefulSet",
        metadata: ({name: "bench", namespace: $ns} + (if $labeled then {labels: {"restarter.stackable.tech/enabled": "true"}} else {} end)),
        spec: {serviceName: "bench", replicas: 1, selector: {matchLabels: {app: "bench"}},
          template: {metadata: {labels: {app: "bench"}},
            spec: ({containers: [({name: "app", image: "registry.invalid/bench:1"}
                     + (if $refs then {envFrom: [{secretRef: {name: "app-secret"}}]} else {} end))]}
                   + (if $refs then {volumes: [{name: "c", configMap: {name: "app-config"}}]} else {} end))}}}}}'
}
sts false false >"$work/unlabeled.json"
sts true false >"$work/norefs.json"
sts true true >"$work/refs.json"
for body in unlabeled norefs refs; do jq -c '.request.object' "$work/$body.json" >"$work/$body-object.json"; done
cat >"$work/post.lua" <<'LUA'
local f = io.open(os.getenv("BODY"), "r")
wrk.method = "POST"
wrk.body = f:read("*a")
f:close()
wrk.headers["Content-Type"] = "application/json"
LUA

echo "== 1. server alone: wrk -t$WRK_THREADS -c$WRK_CONNECTIONS -d${WRK_SECONDS}s, keep-alive, loopback"
[[ $SKIP_SERVER_ALONE == 1 ]] && echo "(skipped: SKIP_SERVER_ALONE=1)"
for body in unlabeled norefs refs; do
  [[ $SKIP_SERVER_ALONE == 1 ]] && break
  : >"$work/rps" ; : >"$work/p99"
  for run in $(seq "$RUNS"); do
    BODY="$work/$body.json" wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"${WRK_SECONDS}s" --latency \
      -s "$work/post.lua" "https://127.0.0.1:$PORT/mutate" >"$work/wrk.out"
    awk '/Requests\/sec/ { print $2 }' "$work/wrk.out" >>"$work/rps"
    # wrk prints e.g. "99%    1.23ms"; convert to ms.
    awk '$1 == "99%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v);
      print (u == "us" ? v / 1000 : (u == "s" ? v * 1000 : v)) }' "$work/wrk.out" >>"$work/p99"
    grep -q "Non-2xx" "$work/wrk.out" && { echo "non-2xx answers:"; cat "$work/wrk.out"; exit 1; }
  done
  printf '%-10s reviews/s %s   p99 ms %s\n' "$body" "$(stats <"$work/rps")" "$(stats <"$work/p99")"
done
rss

echo "== 2. end to end: $RATE labeled StatefulSets/s for ${E2E_SECONDS}s through the apiserver"
kubectl proxy --port "$PROXY_PORT" >/dev/null 2>&1 &
proxy_pid=$!
bench_track "$proxy_pid"
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PROXY_PORT/api" && break; sleep 0.1; done
tracing_config=${RESTARTER_CLUSTER_STATE_DIR:-/nonexistent}/run/apiserver-tracing.yaml
if [[ -f $tracing_config ]]; then
  endpoint=$(sed -n 's/^endpoint: //p' "$tracing_config")
  sink=$("$here/otlp-sink/build.sh") \
    || { echo "cannot build otlp-sink here: run tests/bench/otlp-sink/build.sh outside the namespace first" >&2; exit 1; }
  "$sink" -listen "$endpoint" -attribute "configuration=$name" >"$work/spans.jsonl" 2>"$work/sink.log" &
  sink_pid=$!
  bench_track "$sink_pid"
  # The apiserver's exporter has been retrying with back-off since `up`: send a few creations
  # until their spans arrive, so the first run loses none.
  for attempt in $(seq 30); do
    read -r _ _ _ _ _ w0 _ w1 < <("$here/create_at_rate.py" --body "$work/norefs-object.json" \
      --url "http://127.0.0.1:$PROXY_PORT/apis/apps/v1/namespaces/$ns/statefulsets" \
      --prefix "warm-up-$attempt-" --rate 5 --count 2 || true)
    got=0
    for _ in $(seq 50); do
      (($("$here/spans.py" --count "$work/spans.jsonl" "$name" "$w0" "$w1") > 0)) && { got=1; break; }
      sleep 0.2
    done
    ((got)) && break
  done
  echo "apiserver traces: otlp-sink on $endpoint, receiving after $attempt warm-up rounds"
else
  echo "apiserver traces: off (bring the cluster up with RESTARTER_CLUSTER_APISERVER_TRACING=127.0.0.1:4317 for exact figures)"
fi
# The apiserver's histogram for this webhook, as "le count" lines.
apiserver_buckets() {
  kubectl get --raw /metrics | awk -v n="name=\"$name\"" '
    /^apiserver_admission_webhook_admission_duration_seconds_bucket/ && index($0, n) > 0 && /operation="CREATE"/ {
      match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5); c[le] += $NF }
    END { for (le in c) print le, c[le] }' | sort -g
}
webhook_buckets() {
  curl -sf "http://127.0.0.1:$METRICS_PORT/metrics" | awk '
    /^restarter_webhook_admission_duration_seconds_bucket/ {
      match($0, /le="[^"]*"/); le = substr($0, RSTART + 4, RLENGTH - 5); c[le] += $NF }
    END { for (le in c) print le, c[le] }' | sort -g
}
# Histogram arithmetic on the difference of two bucket snapshots (files of "le count" lines):
#   histogram quantiles BEFORE AFTER: n, p50 and p99 interpolated within a bucket as Prometheus'
#     histogram_quantile does, and the share in le=0.005;
#   histogram bound BEFORE AFTER: "<count in le=0.005> <total> <bound in ms>", where the bound is
#     the smallest bucket bound holding at least 99 % of the observations: an upper bound of p99
#     without interpolation. The apiserver's buckets are 5 ms, 25 ms, 100 ms, ...: "p99 < 10 ms" is
#     shown only when at least 99 % fall in le=0.005 (p99 <= 5 ms).
cat >"$work/histogram.py" <<'PY'
import sys
def read(path):
    out = {}
    for line in open(path):
        le, count = line.split()
        out[float("inf") if le == "+Inf" else float(le)] = float(count)
    return out
mode, before, after = sys.argv[1], read(sys.argv[2]), read(sys.argv[3])
bounds = sorted(after)
counts = [after[b] - before.get(b, 0.0) for b in bounds]
total = counts[-1] if counts else 0.0
under5 = next((c for b, c in zip(bounds, counts) if abs(b - 0.005) < 1e-9), None)
if mode == "bound":
    bound = next((b for b, c in zip(bounds, counts) if total > 0 and c >= 0.99 * total), float("inf"))
    print(int(under5 or 0), int(total), "inf" if bound == float("inf") else f"{bound * 1000:g}")
    sys.exit()
if total == 0:
    print("no samples"); sys.exit()
def q(p):
    rank = p * total
    prev_bound, prev_count = 0.0, 0.0
    for b, c in zip(bounds, counts):
        if c >= rank:
            if b == float("inf"): return prev_bound
            return prev_bound + (b - prev_bound) * (rank - prev_count) / max(c - prev_count, 1e-9)
        prev_bound, prev_count = b, c
    return bounds[-2]
share = f", {100 * under5 / total:.1f}% <= 5 ms" if under5 is not None else ""
print(f"n={int(total)} p50={q(0.5) * 1000:.2f} ms p99={q(0.99) * 1000:.2f} ms{share}")
PY
quantiles() { python3 "$work/histogram.py" quantiles "$1" "$2"; }
p99_bound() { python3 "$work/histogram.py" bound "$1" "$2"; }
# The hostile connections, held through every end-to-end run; a bounded wait until each has been
# open once (at most 128 at a time are: see the header).
if ((HOSTILE_IDLE + HOSTILE_SLOW + HOSTILE_HEALTH_SLOW > 0)); then
  holds=()
  ((HOSTILE_HEALTH_SLOW > 0)) && holds+=(--hold "slow,http://127.0.0.1:$HEALTH_PORT/healthz,$HOSTILE_HEALTH_SLOW")
  ((HOSTILE_SLOW > 0)) && holds+=(--hold "slow,https://127.0.0.1:$PORT/mutate,$HOSTILE_SLOW")
  ((HOSTILE_IDLE > 0)) && holds+=(--hold "idle,https://127.0.0.1:$PORT/mutate,$HOSTILE_IDLE")
  python3 "$repo/tests/tools/hostile_client.py" hold "${holds[@]}" --duration 3600 \
    --status "$work/hold.json" >"$work/hold.out" 2>&1 &
  holder_pid=$!
  bench_track "$holder_pid"
  for _ in $(seq 300); do
    jq -e '.all_reached' "$work/hold.json" >/dev/null 2>&1 && break
    kill -0 "$holder_pid" 2>/dev/null || { cat "$work/hold.out"; echo "hostile_client.py hold exited" >&2; exit 1; }
    sleep 0.2
  done
  kill -USR1 "$holder_pid"
  echo "hostile connections held: $HOSTILE_HEALTH_SLOW slow-header to the health port, $HOSTILE_SLOW slow-header," \
       "$HOSTILE_IDLE idle (ever open / open now:" \
       "$(jq -r '[.groups[] | "\(.reached)/\(.open)"] | join(", ")' "$work/hold.json" 2>/dev/null || echo unknown))"
else
  echo "hostile connections: none (HOSTILE_IDLE=0 HOSTILE_SLOW=0 HOSTILE_HEALTH_SLOW=0)"
fi
# The kubelet's view of the webhook through every end-to-end run.
python3 "$repo/tests/tools/hostile_client.py" probe --url "http://127.0.0.1:$HEALTH_PORT/healthz" \
  --duration 3600 --status "$work/probe.json" >"$work/probe.out" 2>&1 &
prober_pid=$!
bench_track "$prober_pid"
for body in $E2E_BODIES; do
echo "-- $body: $(case $body in refs) echo "a ConfigMap and a Secret looked up per admission" ;;
  norefs) echo "no reference: no lookup, the apiserver's and the transport's own share" ;; esac)"
: >"$work/e2e"; : >"$work/share5"; : >"$work/bound"; : >"$work/span_p99"; : >"$work/spans-$body"
load_at_start=$(cut -d' ' -f1 /proc/loadavg)
for run in $(seq "$RUNS"); do
  apiserver_buckets >"$work/a0"; webhook_buckets >"$work/w0"
  total=$((RATE * E2E_SECONDS))
  read -r _ created _ _ _ t0 _ t1 < <("$here/create_at_rate.py" --body "$work/$body-object.json" \
    --url "http://127.0.0.1:$PROXY_PORT/apis/apps/v1/namespaces/$ns/statefulsets" \
    --prefix "e2e-$body-$run-" --rate "$RATE" --count "$total" || true)
  apiserver_buckets >"$work/a1"; webhook_buckets >"$work/w1"
  echo "run $run: apiserver-measured $(quantiles "$work/a0" "$work/a1"); webhook-measured $(quantiles "$work/w0" "$work/w1")" | tee -a "$work/e2e"
  if [[ -n $sink_pid ]]; then
    # The apiserver exports spans in batches (every 5 s): wait for this run's.
    for _ in $(seq 150); do
      (($("$here/spans.py" --count "$work/spans.jsonl" "$name" "$t0" "$t1") >= created)) && break
      sleep 0.2
    done
    echo "run $run: apiserver trace spans ($created created): $("$here/spans.py" "$work/spans.jsonl" "$name" "$t0" "$t1")"
    "$here/spans.py" --samples "$work/spans-$body" "$work/spans.jsonl" "$name" "$t0" "$t1" | sed -n 's/^n=[0-9]* p50=[0-9.]* p90=[0-9.]* p99=\([0-9.]*\) .*/\1/p' >>"$work/span_p99"
  fi
  read -r under5 observed bound < <(p99_bound "$work/a0" "$work/a1")
  # Nothing to measure when the apiserver never called the webhook (not registered, not reached).
  ((observed > 0)) || { echo "bench: the apiserver counted no call of this webhook in run $run" >&2; exit 1; }
  verdict="p99 < 10 ms NOT shown"
  [[ $bound == 5 ]] && verdict="p99 <= 5 ms: p99 < 10 ms shown"
  echo "run $run: apiserver histogram delta: $under5 of $observed admissions in le=0.005" \
       "($(awk -v a="$under5" -v b="$observed" 'BEGIN { printf "%.2f", b ? 100 * a / b : 0 }') %);" \
       "99 % fall within le=$bound ms, so p99 <= $bound ms; $verdict"
  awk -v a="$under5" -v b="$observed" 'BEGIN { printf "%.2f\n", b ? 100 * a / b : 0 }' >>"$work/share5"
  echo "$bound" >>"$work/bound"
  if [[ $body == refs ]]; then
    annotated=$(kubectl -n "$ns" get statefulsets -o json | jq --arg p "e2e-$body-$run-" '[.items[] | select(.metadata.name | startswith($p))
      | select(.spec.template.metadata.annotations["configmap.restarter.stackable.tech/app-config"] != null)] | length')
    echo "run $run: $annotated of $total created StatefulSets annotated by the webhook"
  fi
done
echo "$body, end to end over $RUNS runs: share in le=0.005 (%) $(stats <"$work/share5");" \
     "p99 bound per run (ms): $(paste -sd' ' "$work/bound")"
[[ -s $work/span_p99 ]] && echo "$body, end to end over $RUNS runs, apiserver trace spans: p99 ms $(stats <"$work/span_p99")"
if [[ -n ${BENCH_RESULTS_DIR:-} && -s $work/spans-$body ]]; then
  mkdir -p "$BENCH_RESULTS_DIR"
  "$here/record.py" "$BENCH_RESULTS_DIR/webhook-e2e-$body.json" webhook-e2e --load-at-start "$load_at_start" \
    kind="$body" runs="$RUNS" rate_per_second="$RATE" seconds_per_run="$E2E_SECONDS" \
    hostile_idle="$HOSTILE_IDLE" hostile_slow="$HOSTILE_SLOW" hostile_health_slow="$HOSTILE_HEALTH_SLOW" \
    webhook_flags="${WEBHOOK_FLAGS:-}" \
    --samples admission_ms="$work/spans-$body"
  echo "results: $BENCH_RESULTS_DIR/webhook-e2e-$body.json"
fi
done
kill "$prober_pid"; wait "$prober_pid" 2>/dev/null || true; prober_pid=
echo "/healthz of the webhook probed as a kubelet does through the end-to-end runs:" \
     "$(jq -r '.probes[] | "\(.probes) probes, \(.failures) failed, max \(.max_seconds * 1000 | round) ms, p99 \(.p99_seconds * 1000 * 10 | round / 10) ms, p50 \(.p50_seconds * 1000 * 10 | round / 10) ms"' "$work/probe.json" 2>/dev/null || echo "no report: $(tail -3 "$work/probe.out")")"
if [[ -n $holder_pid ]]; then
  kill -USR2 "$holder_pid"; kill "$holder_pid"; wait "$holder_pid" 2>/dev/null || true; holder_pid=
  echo "hostile connections during the end-to-end runs (mean open / held, closed by the server):" \
       "$(jq -r '[.groups[] | "\(.hold): \(.window.mean_open // "?") of \(.count // "?"), \(.window.closed_by_server // "?") closed"] | join("; ")' "$work/hold.json" 2>/dev/null || echo unknown)"
fi
rss
