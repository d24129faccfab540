#!/usr/bin/env bash
# webhook-lookup-bounds, step 03 (README.md): a tenant's own reviews cannot drain the lookup
# bucket. serve-webhook runs with client authentication (only the apiserver can call it, so a
# review's namespace is the one the request is made in) for the test's namespace and the
# tenant's, TENANT_NAMESPACE. The tenant sends server-side dry-run creates of a labeled
# StatefulSet with one reference in its namespace, PROCESSES x RATE a second through the
# apiserver (tests/bench/create_at_rate.py --dry-run, over kubectl proxy), for up to
# TENANT_SECONDS. Once a review of the tenant has been refused for a lookup bound, COUNT
# labeled StatefulSets shop-N are created in the test's namespace. Asserts: the tenant was refused
# for its namespace's share; every shop-N is
# generation 1 with cfg-N's <uid>/<resourceVersion>, kubectl saw no warning; a dry-run create of
# the tenant is warned with the reason in full; the apiserver never failed open. Prints the
# tenant's rate and the refusals.
set -euo pipefail

COUNT=20
RATE=60
PROCESSES=2
TENANT_SECONDS=90
WAIT_SECONDS=60
TENANT_NAMESPACE=$NAMESPACE-tenant
WARNING="Warning: restarter webhook: not annotated (the namespace's share of lookups is spent); the controller will, restarting pods once"
# shellcheck source=SCRIPTDIR/../../lib/hostile.sh
source ../../lib/hostile.sh

share() { webhook_metric 'restarter_webhook_lookup_refusals_total{reason="namespace-share"}'; }
share_before=$(share)
rate_before=$(webhook_metric 'restarter_webhook_lookup_refusals_total{reason="rate-limit"}')
reviews_before=$(webhook_metric restarter_webhook_admission_duration_seconds_count)

# A port the kernel picks (no collision with another test's), read from the proxy's first line.
kubectl proxy --port 0 >"$work/proxy.log" 2>&1 &
track $!
proxy_port=
deadline=$((SECONDS + WAIT_SECONDS))
until [[ -n $proxy_port ]]; do
  proxy_port=$(sed -n 's/^Starting to serve on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$work/proxy.log")
  ((SECONDS < deadline)) || { fail "kubectl proxy did not start: $(cat "$work/proxy.log")"; finish; }
  sleep 0.1
done
statefulsets tenant 1 0 tenant-config | kubectl create --dry-run=client -o json -f - |
  jq '.metadata.namespace = env.TENANT_NAMESPACE' >"$work/tenant.json"
tenants=()
for p in $(seq 1 "$PROCESSES"); do
  python3 ../../../tests/bench/create_at_rate.py --dry-run \
    --url "http://127.0.0.1:$proxy_port/apis/apps/v1/namespaces/$TENANT_NAMESPACE/statefulsets" \
    --body "$work/tenant.json" --prefix "t$p-" --rate "$RATE" --count $((RATE * TENANT_SECONDS)) \
    >"$work/tenant-$p.out" 2>"$work/tenant-$p.err" &
  tenants+=("$!")
  track "$!"
done
started=$SECONDS
deadline=$((SECONDS + WAIT_SECONDS))
refused() { echo $(($(share) + $(webhook_metric 'restarter_webhook_lookup_refusals_total{reason="rate-limit"}'))); }
refused_before=$(refused)
until (($(refused) > refused_before)); do
  ((SECONDS < deadline)) || { fail "no review of the tenant refused for a lookup bound within ${WAIT_SECONDS}s"; break; }
  sleep 0.2
done
echo "the tenant's reviews refused after $((SECONDS - started)) s"
statefulsets shop "$COUNT" 0 'cfg-{i}' 'batch: shop' >"$work/sts.yaml"
kubectl -n "$NAMESPACE" create -f "$work/sts.yaml" >/dev/null 2>"$work/create.err" || fail "create: $(cat "$work/create.err")"
# What the tenant sees: the warning with its reason whole (its share refills between the flood's
# reviews, so one create may find a token: bounded retries).
warned=0
for i in $(seq 1 20); do
  statefulsets tenant-probe 1 0 tenant-config |
    kubectl -n "$TENANT_NAMESPACE" create --dry-run=server -f - >/dev/null 2>"$work/tenant-warning.err" || true
  if grep -qxF "$WARNING" "$work/tenant-warning.err"; then warned=1; break; fi
  sleep 0.1
done
if ((warned)); then
  echo "the tenant is warned: $(cat "$work/tenant-warning.err")"
else
  fail "no dry-run create of the tenant was warned \"$WARNING\"; the last said: $(cat "$work/tenant-warning.err")"
fi
elapsed=$((SECONDS - started))
for pid in "${tenants[@]}"; do stop_tool "$pid"; done
reviews=$(($(webhook_metric restarter_webhook_admission_duration_seconds_count) - reviews_before))
echo "reviews answered in ${elapsed} s: $reviews ($((reviews / (elapsed > 0 ? elapsed : 1)))/s; the tenant asked for $PROCESSES x $RATE/s); refused for the tenant's share $(($(share) - share_before)), for the rate limit $(($(webhook_metric 'restarter_webhook_lookup_refusals_total{reason="rate-limit"}') - rate_before))"
(($(share) > share_before)) || fail "no review of the tenant was refused for its namespace's share"
check_no_warning "$work/create.err"
check_annotated batch=shop shop 'cfg-{i}' "$COUNT"
check_no_fail_open

finish "ok: a tenant's dry-run creates held by its namespace's share; $COUNT StatefulSets of another namespace annotated"
