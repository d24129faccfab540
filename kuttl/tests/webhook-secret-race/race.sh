#!/usr/bin/env bash
# Two serve-webhook replicas started together against a certificate Secret that does not exist yet
# (each finds it missing, so they race to create it), ROUNDS times with a fresh Secret each.
# Each round asserts what must hold however the race went:
#   - exactly one replica stored certificates (log "certificates stored"); the other adopted them;
#   - both serve the same serving certificate, the Secret's tls.crt, and it verifies against the
#     Secret's ca.crt;
#   - the configuration's caBundle is the Secret's ca-bundle.crt, which holds exactly that CA;
#   - the apiserver gets annotations from the webhook.
# The replicas run as installed (--manage-configuration): they also race to create the
# configuration, both registering replica a's URL (one Service in a cluster).
# It also says how often a replica really lost the create race (the apiserver's count of HTTP 409
# answers to Secret creations): informative only, as who wins is up to the scheduler.
# Every process it starts is stopped and every configuration deleted on exit, passed or failed.
#
# Identity, as kuttl/lib/webhook.sh: the replicas run as $RESTARTER_WEBHOOK_KUBECONFIG when set
# (tests/run.sh: the manifests' restarter-webhook ServiceAccount), with the manifests' rules for
# the certificate Secret and the configuration granted for this test's names; else as kuttl's
# admin. The clean-up stays admin work.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
WAIT_SECONDS=90  # upper bound of each wait; each returns as soon as its condition holds
restarter=../../lib/restarter.sh
work=$(mktemp -d)
pids=()
configurations=()

identity=()
[[ -n ${RESTARTER_WEBHOOK_KUBECONFIG:-} ]] && identity=(--kubeconfig "$RESTARTER_WEBHOOK_KUBECONFIG")

# Grants the webhook's ServiceAccount the manifests' rules for Secret $1 and configuration $2.
# The installs ship the Secret and give no create; this suite is about the race to create it, so
# the account may also create Secrets in this test's namespace (as without the installs' Secret).
# The key of content digests in this namespace (--digest-key-namespace below), made here (admin) as
# serve-controller would and kuttl/lib/webhook.sh does: the webhook only reads it, and without it
# leaves content-aware records to a controller this test does not run.
ensure_digest_key() {
  kubectl -n "$NAMESPACE" get secret restarter-digest-key >/dev/null 2>&1 && return 0
  head -c 32 /dev/urandom >"$work/digest.key"
  kubectl -n "$NAMESPACE" create secret generic restarter-digest-key --from-file=key="$work/digest.key" >/dev/null
  rm -f "$work/digest.key"
}

grant_names() {
  ensure_digest_key
  [[ ${#identity[@]} -gt 0 ]] || return 0
  ../../lib/identity.sh grant role restarter-webhook-digest-key "$NAMESPACE" restarter-webhook >/dev/null
  ../../lib/identity.sh grant role restarter-webhook-certificates "$NAMESPACE" restarter-webhook "$1" >/dev/null
  ../../lib/identity.sh grant clusterrole restarter-webhook-configuration - restarter-webhook "$2" >/dev/null
  kubectl -n "$NAMESPACE" get role race-create-secrets >/dev/null 2>&1 || {
    kubectl -n "$NAMESPACE" create role race-create-secrets --verb=create --resource=secrets >/dev/null
    kubectl -n "$NAMESPACE" create rolebinding race-create-secrets --role=race-create-secrets \
      --serviceaccount=restarter-system:restarter-webhook >/dev/null
  }
}

# Stops every replica started and deletes every configuration installed so far (and its grant;
# the Secret's Role goes with the namespace).
stop_all() {
  local pid c
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  for c in "${configurations[@]}"; do
    "$restarter" install-mwc --name "$c" --delete >/dev/null 2>&1 || true
    [[ ${#identity[@]} -eq 0 ]] || ../../lib/identity.sh revoke "restarter-webhook-configuration.$c" >/dev/null 2>&1 || true
  done
  pids=()
  configurations=()
}
trap 'stop_all; rm -rf "$work"' EXIT

fail() { echo "FAIL: $*"; for log in "$work"/*.log; do echo "--- $log"; tail -15 "$log"; done; exit 1; }

# waits until "$@" succeeds, at most WAIT_SECONDS
await() {
  local deadline=$((SECONDS + WAIT_SECONDS))
  until "$@"; do
    ((SECONDS < deadline)) || return 1
    sleep 0.2
  done
}

secret_posts_refused() {
  kubectl get --raw /metrics | awk '/^apiserver_request_total\{/ && /resource="secrets"/ && /verb="POST"/ && /code="409"/ { s += $NF }
    END { printf "%d\n", s }'
}

fingerprint() { openssl x509 -noout -fingerprint -sha256 | cut -d= -f2; }

# The certificate the server on port $1 presents, verified against CA file $2 (empty if it does
# not verify).
served() {
  openssl s_client -connect "127.0.0.1:$1" -CAfile "$2" -verify_ip 127.0.0.1 -verify_return_error </dev/null 2>/dev/null | fingerprint
}

# A server-side dry-run create of a labeled StatefulSet comes back annotated, and replica a of
# round $1 logged the admission.
probe_annotated() {
  kubectl -n "$NAMESPACE" create --dry-run=server -f probe-statefulset.tmpl \
    -o jsonpath='{.spec.template.metadata.annotations.configmap\.restarter\.stackable\.tech/webhook-probe}' 2>/dev/null |
    grep -q . && grep -q 'admission patched' "$work/$1-a.log"
}

# Starts replicas a and b of round $1 (Secret $2, configuration $3) on two random ports below the
# ephemeral range (32768-60999, where outgoing connections take theirs) and waits until both serve.
# A port another process holds ("cannot listen") is no failure of the race: both replicas are
# stopped, what they wrote (the Secret, the configuration and its grant) goes, and the round starts
# again on new ports, at most 5 times.
start_replicas() {
  local round=$1 secret=$2 configuration=$3 try replica port
  for try in 1 2 3 4 5; do
    configurations+=("$configuration")
    grant_names "$secret" "$configuration"
    ! kubectl -n "$NAMESPACE" get secret "$secret" >/dev/null 2>&1 || fail "Secret $secret exists before the start"
    port_a=$((20000 + RANDOM % 6000))
    # shellcheck disable=SC2034  # read through ${!port} below, like port_a
    port_b=$((26000 + RANDOM % 6000))
    for replica in a b; do
      port=port_$replica
      "$restarter" serve-webhook "${identity[@]}" --bind-address 127.0.0.1 --port "${!port}" \
        --webhook-url "https://127.0.0.1:$port_a/mutate" --service-namespace "$NAMESPACE" \
        --secret-name "$secret" --configuration-name "$configuration" --cert-check-interval 1s \
        --digest-key-namespace "$NAMESPACE" \
        --manage-configuration --only-namespace "$NAMESPACE" \
        --metrics-bind-address 0 --health-probe-bind-address 0 >"$work/$round-$replica.log" 2>&1 &
      pids+=($!)
    done
    for replica in a b; do
      await grep -qE 'webhook serving|cannot listen' "$work/$round-$replica.log" || fail "replica $replica did not start"
    done
    grep -q 'cannot listen' "$work/$round-a.log" "$work/$round-b.log" || return 0
    echo "round $round, try $try: $(grep -ho 'cannot listen on [^"]*' "$work/$round-a.log" "$work/$round-b.log"); again on new ports"
    stop_all
    kubectl -n "$NAMESPACE" delete secret "$secret" --ignore-not-found --wait >/dev/null
  done
  return 1
}

kubectl -n "$NAMESPACE" create configmap webhook-probe --from-literal=probe=1 >/dev/null
refused_before=$(secret_posts_refused)
for round in $(seq "$ROUNDS"); do
  secret=race-$round-certs
  configuration=race-$round.$NAMESPACE.restarter.stackable.tech
  start_replicas "$round" "$secret" "$configuration" || fail "round $round: no free pair of ports in 5 tries"

  stored=$(cat "$work/$round-a.log" "$work/$round-b.log" | grep -c 'certificates stored' || true)
  [[ $stored == 1 ]] || fail "round $round: $stored replicas stored certificates, not exactly 1"

  kubectl -n "$NAMESPACE" get secret "$secret" -o json >"$work/secret.json"
  for key in ca.crt tls.crt ca-bundle.crt; do
    jq -r --arg k "$key" '.data[$k]' "$work/secret.json" | base64 -d >"$work/$key"
  done
  leaf=$(fingerprint <"$work/tls.crt")
  ca=$(fingerprint <"$work/ca.crt")
  for replica in a b; do
    port=port_$replica
    [[ $(served "${!port}" "$work/ca.crt") == "$leaf" ]] ||
      fail "round $round: replica $replica does not serve the Secret's certificate signed by its CA"
  done

  bundle_published() {
    kubectl get mutatingwebhookconfiguration "$configuration" -o jsonpath='{.webhooks[0].clientConfig.caBundle}' |
      base64 -d >"$work/published.crt" 2>/dev/null && cmp -s "$work/published.crt" "$work/ca-bundle.crt"
  }
  await bundle_published || fail "round $round: the caBundle is not the Secret's ca-bundle.crt"
  [[ $(grep -c 'BEGIN CERTIFICATE' "$work/ca-bundle.crt") == 1 && $(fingerprint <"$work/ca-bundle.crt") == "$ca" ]] ||
    fail "round $round: the caBundle is not exactly the Secret's CA"

  # Replica b presents the same certificate (checked above), so what holds for a holds for b.
  await probe_annotated "$round" || fail "round $round: the apiserver did not get annotations from the webhook"
  ! grep -hE '^[^ ]+ (WARN|ERROR) ' "$work/$round-a.log" "$work/$round-b.log" | grep -v 'cannot publish' ||
    fail "round $round: a replica warned"
  echo "round $round: one Secret, written once; both replicas serve $leaf under CA $ca; caBundle is that CA"
  # The next round starts clean: this round's replicas and configuration would otherwise answer
  # its probes (a second webhook then finds the annotations already right and patches nothing).
  stop_all
done
echo "create races lost (HTTP 409 on Secret creation, cluster-wide): $(($(secret_posts_refused) - refused_before)) in $ROUNDS rounds"
