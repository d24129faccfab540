#!/usr/bin/env bash
# node-hostile, steps 01-03 (README.md): `attack.sh ATTACK PODS` starts PODS attacker pods on the
# real node (the test image, sleeping; no credentials, no ServiceAccount token) and runs
# tests/tools/hostile_client.py inside each one's network namespace (nsenter), so every packet
# leaves from that pod's own address through the node's CNI bridge and kube-proxy, as a tenant's
# pods would attack. Meanwhile COUNT labeled StatefulSets are created through the apiserver, which
# calls the installed webhook through its Service. Asserts, printing every failure before exiting 1:
#   - every StatefulSet annotated at creation (generation 1, its ConfigMap's <uid>/<resourceVersion>);
#   - the apiserver counted no review of the webhook configuration that failed open;
#   - no webhook pod restarted (the kubelet's probes on :8081 and the memory limit held);
#   - each webhook process's RSS (sampled every 0.5 s) stayed under the manifests' 128 MiB limit.
# ATTACK: pipeline (600 connections per pod to the Service, each pipelining reviews, and 300 to
# each webhook pod's health port pipelining GETs), cycle (300 per pod sending the first 50 bytes of
# a ClientHello to the Service, each closed by the client at 1.9 s and reopened; 300 to each health
# port likewise), health (slow heads to each webhook pod's health port, 40 per pod).
set -euo pipefail

attack=${1:?usage: attack.sh pipeline|cycle|health PODS}
pods=${2:?usage: attack.sh ATTACK PODS}
COUNT=20
MEMORY_LIMIT_KIB=$((128 * 1024))  # the manifests' memory limit of the webhook container
TOOL_SECONDS=300
MIN_WINDOW=8

node=../../lib/node.sh
# shellcheck source=SCRIPTDIR/../../lib/hostile.sh
source ../../lib/hostile.sh
tool=$(cd ../../../tests/tools && pwd)/hostile_client.py

configuration=restarter-webhook.stackable.tech
fail_opens_before=$($node fail-opens "$configuration")
service=$(kubectl -n restarter-system get service restarter-webhook -o jsonpath='{.spec.clusterIP}')
mapfile -t webhook_pods < <($node pods restarter-system app.kubernetes.io/component=webhook)
webhook_ips=()
for pod in "${webhook_pods[@]}"; do
  webhook_ips+=("$(kubectl -n restarter-system get pod "$pod" -o jsonpath='{.status.podIP}')")
done
restarts_before=$(kubectl -n restarter-system get pods -l app.kubernetes.io/component=webhook \
  -o jsonpath='{range .items[*]}{.status.containerStatuses[0].restartCount}{"\n"}{end}' | awk '{ s += $1 } END { print s + 0 }')
echo "attack $attack from $pods pods against Service $service:443 and the health ports of ${webhook_ips[*]}"

# The attacker pods: each sleeps with an argument of its own, by which its process (in the pod's
# network namespace) is found on the node.
tag=$((RANDOM * 32768 + RANDOM))
for i in $(seq 1 "$pods"); do
  kubectl -n "$NAMESPACE" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: attacker-$attack-$i
spec:
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 0
  containers:
    - name: attacker
      image: $($node test-image)
      command: ["sleep", "$((tag + i))"]
$($node placement-patch | jq -r 'to_entries[] | "  \(.key): \(.value | tojson)"')
YAML
done
holders=()
for i in $(seq 1 "$pods"); do
  kubectl -n "$NAMESPACE" wait --for=condition=Ready "pod/attacker-$attack-$i" --timeout=120s >/dev/null
  pid=$(pgrep -xf "sleep $((tag + i))" | head -1)
  [[ -n $pid ]] || { echo "FAIL: attacker-$attack-$i's process not found"; exit 1; }
  allow=(--allow-target "$service")
  holds=()
  for ip in "${webhook_ips[@]}"; do allow+=(--allow-target "$ip"); done
  extra=()
  case $attack in
    pipeline)
      holds=(--hold "pipeline,https://$service:443/mutate,600")
      for ip in "${webhook_ips[@]}"; do holds+=(--hold "pipeline,http://$ip:8081/healthz,300"); done ;;
    cycle)
      holds=(--hold "handshake,https://$service:443/mutate,300")
      for ip in "${webhook_ips[@]}"; do holds+=(--hold "handshake,http://$ip:8081/healthz,300"); done
      extra=(--close-after 1.9) ;;
    health)
      for ip in "${webhook_ips[@]}"; do holds+=(--hold "slow,http://$ip:8081/healthz,40"); done ;;
    *) echo "attack.sh: unknown attack $attack" >&2; exit 2 ;;
  esac
  nsenter --net="/proc/$pid/ns/net" python3 "$tool" hold "${holds[@]}" "${allow[@]}" "${extra[@]}" \
    --duration "$TOOL_SECONDS" --status "$work/hold-$i.json" >"$work/hold-$i.out" 2>&1 &
  holders+=("$!")
  track "$!"
done

# The webhook processes' RSS, every 0.5 s.
mapfile -t webhook_pids < <(pgrep -f 'restarter serve-webhook')
(
  while true; do
    for pid in "${webhook_pids[@]}"; do awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null; done
    sleep 0.5
  done
) >"$work/rss" &
sampler=$!
track "$sampler"

# Let the attack establish itself (each tool reopens what the server closes), then create.
for i in $(seq 1 "$pods"); do
  await_hold "${holders[$((i - 1))]}" "$work/hold-$i.json" 16 60
done
window_start=$SECONDS
for i in $(seq 1 "$COUNT"); do
  kubectl -n "$NAMESPACE" create configmap "cfg-$attack-$i" --from-literal=setting="$i" --dry-run=client -o yaml |
    kubectl -n "$NAMESPACE" apply -f - >/dev/null
done
statefulsets "$attack" "$COUNT" 0 "cfg-$attack-{i}" "attack: $attack" >"$work/statefulsets.yaml"
if ! kubectl -n "$NAMESPACE" create -f "$work/statefulsets.yaml" >"$work/create.out" 2>"$work/create.err"; then
  fail "kubectl create failed: $(cat "$work/create.err")"
fi
while ((SECONDS - window_start < MIN_WINDOW)); do sleep 0.5; done
for pid in "${holders[@]}"; do stop_tool "$pid"; done
stop_tool "$sampler"
for i in $(seq 1 "$pods"); do
  jq -r '.groups[] | "pod \('"$i"'): \(.hold): \(.open) open at the end, \(.reached) slots reached, \(.opened_total) opened, \(.closed_by_server) closed by the server, \(.connect_errors) connect errors, answers \(.answers)"' \
    "$work/hold-$i.json" | cut -c1-400
done

check_no_warning "$work/create.err"
check_annotated "attack=$attack" "$attack" "cfg-$attack-{i}" "$COUNT"
fail_opens=$($node fail-opens "$configuration")
echo "reviews that failed open: $((fail_opens - fail_opens_before))"
((fail_opens == fail_opens_before)) || fail "the apiserver counted $((fail_opens - fail_opens_before)) reviews that failed open"
rss_max=$(sort -n "$work/rss" | tail -1)
echo "webhook RSS at most $rss_max KiB (limit $MEMORY_LIMIT_KIB KiB)"
((rss_max < MEMORY_LIMIT_KIB)) || fail "a webhook process reached $rss_max KiB"
restarts=$(kubectl -n restarter-system get pods -l app.kubernetes.io/component=webhook \
  -o jsonpath='{range .items[*]}{.status.containerStatuses[0].restartCount}{"\n"}{end}' | awk '{ s += $1 } END { print s + 0 }')
echo "webhook restarts: $restarts (before: $restarts_before)"
((restarts == restarts_before)) || fail "a webhook pod restarted during the attack"
finish "all checks passed"
