#!/usr/bin/env bash
# Benchmark: real creates while the webhook is under the lookup amplifier (a measurement, not a
# test; not run by CI). Needs a running local control plane (tests/cluster), inside its network
# namespace:
#
#   RESTARTER_CLUSTER=bench tests/cluster/cluster.sh up
#   RESTARTER_CLUSTER=bench tests/cluster/cluster.sh exec -- tests/bench/webhook_amplifier.sh [RESTARTER_BIN]
#
# serve-webhook (--cert-dir, default lookup bounds plus $WEBHOOK_FLAGS) is registered for one
# namespace; then, RUNS times (default 3) each, COUNT (default 30) labeled StatefulSets referencing
# one ConfigMap are created one after another through the apiserver (one keep-alive connection
# through kubectl proxy), timed by the client: once quiet and once while
# tests/tools/hostile_client.py amplify runs LOOPS (default 16) loops of reviews naming NAMES (default
# 1,000) ConfigMaps against the webhook. Prints per run the median, p90 and max create latency and
# how many creates came back annotated, then over the runs the median and range of the medians,
# and the ratio attacked/quiet; and the webhook's lookups and refusals. The goal
# (docs/configuration.md, "Who may call the webhook") is a ratio within 2x. Needs: curl, kubectl
# (the cluster's), python3.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/lib.sh
source "$here/lib.sh"
bench_init "${1:-}" curl kubectl python3
RUNS=${RUNS:-3}
COUNT=${COUNT:-30}
LOOPS=${LOOPS:-16}
NAMES=${NAMES:-1000}
PORT=${PORT:-18543}
METRICS_PORT=${METRICS_PORT:-18580}
PROXY_PORT=${PROXY_PORT:-18501}
ns=amplifier-bench
name=amplifier-bench.restarter.stackable.tech

read -ra webhook_flags <<<"${WEBHOOK_FLAGS:-}"
webhook_in_cluster "$ns" "$name" "$PORT" "$METRICS_PORT" 0 "${webhook_flags[@]}"
kubectl -n "$ns" create configmap app-config --from-literal=setting=1 >/dev/null
kubectl proxy --port "$PROXY_PORT" >/dev/null 2>&1 &
bench_track $!
for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$PROXY_PORT/version" && break; sleep 0.1; done
echo "$(nproc) cores, load $(load)"

# One run: COUNT creates one after another; prints "median p90 max annotated" (seconds).
creates() {
  python3 - "$PROXY_PORT" "$ns" "$COUNT" "$1" <<'PY'
import http.client, json, sys, time
port, ns, count, prefix = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
latencies, annotated = [], 0
for i in range(count):
    name = f"{prefix}{i}"
    body = {"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": name, "labels": {"restarter.stackable.tech/enabled": "true"}},
            "spec": {"serviceName": name, "replicas": 0, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"volumes": [{"name": "c", "configMap": {"name": "app-config"}}],
                                           "containers": [{"name": "app", "image": "registry.invalid/b:1"}]}}}}
    started = time.monotonic()
    conn.request("POST", f"/apis/apps/v1/namespaces/{ns}/statefulsets", body=json.dumps(body),
                 headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    answer = json.loads(response.read())
    latencies.append(time.monotonic() - started)
    keys = answer.get("spec", {}).get("template", {}).get("metadata", {}).get("annotations", {})
    annotated += "configmap.restarter.stackable.tech/app-config" in keys
latencies.sort()
print(f"{latencies[len(latencies) // 2]:.4f} {latencies[int(len(latencies) * 0.9)]:.4f} {latencies[-1]:.4f} {annotated}")
PY
}

# Reviews refused for a lookup bound: the rate, or (--lookup-share) the namespace's share.
refused() {
  echo $(($(metric "$METRICS_PORT" 'restarter_webhook_lookup_refusals_total{reason="rate-limit"}') +
    $(metric "$METRICS_PORT" 'restarter_webhook_lookup_refusals_total{reason="namespace-share"}')))
}

: >"$work/quiet" && : >"$work/attacked"
for run in $(seq 1 "$RUNS"); do
  read -r p50 p90 max annotated < <(creates "quiet-$run-")
  echo "run $run quiet:    p50 ${p50}s p90 ${p90}s max ${max}s, $annotated/$COUNT annotated"
  echo "$p50" >>"$work/quiet"
  refused_before=$(refused)
  python3 "$repo/tests/tools/hostile_client.py" amplify --url "https://127.0.0.1:$PORT/mutate" \
    --loops "$LOOPS" --names "$NAMES" --namespace "$ns" --duration 600 >"$work/attack-$run.json" &
  attacker_pid=$!
  bench_track "$attacker_pid"
  # Until the bucket or the namespace's share is drained (a review refused for either), bounded.
  for _ in $(seq 300); do
    (($(refused) > refused_before)) && break
    sleep 0.1
  done
  read -r p50 p90 max annotated < <(creates "attacked-$run-")
  kill -TERM "$attacker_pid"
  wait "$attacker_pid" || true
  echo "run $run attacked: p50 ${p50}s p90 ${p90}s max ${max}s, $annotated/$COUNT annotated;" \
    "amplifier answered $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["answered"])' "$work/attack-$run.json")"
  echo "$p50" >>"$work/attacked"
done
quiet=$(stats <"$work/quiet")
attacked=$(stats <"$work/attacked")
echo "create latency p50, median (range) of $RUNS runs: quiet ${quiet}s, attacked ${attacked}s;" \
  "ratio $(python3 -c "print(round(${attacked%% *} / ${quiet%% *}, 2))")"
echo "webhook: lookups $(metric "$METRICS_PORT" restarter_webhook_lookups_total), refused for the rate" \
  "$(metric "$METRICS_PORT" 'restarter_webhook_lookup_refusals_total{reason="rate-limit"}'), for the namespace's share" \
  "$(metric "$METRICS_PORT" 'restarter_webhook_lookup_refusals_total{reason="namespace-share"}'), load $(load)"
