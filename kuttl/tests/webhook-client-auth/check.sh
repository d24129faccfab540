#!/usr/bin/env bash
# webhook-client-auth, step 01 (README.md). Asserts, and prints every failure before exiting 1:
#   - COUNT labeled StatefulSets created through the apiserver come back annotated by the webhook
#     (generation 1, the ConfigMap's <uid>/<resourceVersion>): the apiserver's client certificate
#     is accepted;
#   - tests/tools/hostile_client.py gets no answer without a client certificate, with a
#     certificate of another CA named kube-apiserver-webhook-client, or with a certificate of the
#     apiserver's webhook-client CA with another name; with the apiserver's own certificate it is
#     answered (so the refusals are the server's doing, not the tool's);
#   - the webhook counted the refusals (client_certificates_refused_total untrusted and name,
#     handshake_failed closes) and no failed admission, and the apiserver never failed open.
set -euo pipefail

COUNT=5
pki=${RESTARTER_CLUSTER_STATE_DIR:?run under cluster.sh exec}/pki
# shellcheck source=SCRIPTDIR/../../lib/hostile.sh
source ../../lib/hostile.sh

port=$(cat "$(../../lib/webhook.sh dir wh)/port")
url=https://127.0.0.1:$port/mutate

# Certificates of a CA the webhook does not trust, and of the right CA with another name.
ext='basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth'
printf '%s\n' "$ext" >"$work/client.ext"
openssl ecparam -name prime256v1 -genkey -noout -out "$work/other-ca.key" 2>/dev/null
openssl req -x509 -new -key "$work/other-ca.key" -subj "/CN=other-ca" -days 1 -sha256 \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" -out "$work/other-ca.crt" 2>/dev/null
issue() { # issue NAME CN CA_CRT CA_KEY
  openssl ecparam -name prime256v1 -genkey -noout -out "$work/$1.key" 2>/dev/null
  openssl req -new -key "$work/$1.key" -subj "/CN=$2" -out "$work/$1.csr" 2>/dev/null
  openssl x509 -req -in "$work/$1.csr" -CA "$3" -CAkey "$4" -CAcreateserial -CAserial "$work/$1.srl" -days 1 -sha256 \
    -extfile "$work/client.ext" -out "$work/$1.crt" 2>/dev/null
}
issue other-ca-cert kube-apiserver-webhook-client "$work/other-ca.crt" "$work/other-ca.key"
issue other-name intruder "$pki/webhook-client-ca.crt" "$pki/webhook-client-ca.key"

# 1. The apiserver's calls: labeled StatefulSets annotated at creation.
statefulsets web "$COUNT" 0 cfg >"$work/sts.yaml"
kubectl -n "$NAMESPACE" create -f "$work/sts.yaml" >/dev/null 2>"$work/create.err" || fail "create: $(cat "$work/create.err")"
check_no_warning "$work/create.err"
check_annotated restarter.stackable.tech/enabled=true web cfg "$COUNT"

# 2. Hostile clients: one review each, no answer; the apiserver's own certificate: answered.
attempt() { # attempt LABEL [--cert FILE --key FILE]: prints answered,errors
  local label=$1
  shift
  python3 "$tool" amplify --url "$url" --loops 1 --reviews 1 --names 1 --namespace "$NAMESPACE" \
    --duration 30 --timeout 10 "$@" >"$work/$label.json"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%d,%d" % (r["answered"], r["errors"])); print(r["first_errors"], file=sys.stderr)' "$work/$label.json"
}
before_untrusted=$(webhook_metric 'restarter_webhook_client_certificates_refused_total{reason="untrusted"}')
before_name=$(webhook_metric 'restarter_webhook_client_certificates_refused_total{reason="name"}')
before_handshake=$(webhook_metric 'restarter_webhook_http_connections_closed_total{server="webhook",reason="handshake_failed"}')
for case in none other-ca-cert other-name; do
  if [[ $case == none ]]; then got=$(attempt "$case"); else got=$(attempt "$case" --cert "$work/$case.crt" --key "$work/$case.key"); fi
  echo "$case: answered,errors = $got"
  [[ $got == 0,1 ]] || fail "$case: the webhook answered a client it should refuse ($got)"
done
got=$(attempt apiserver --cert "$pki/apiserver-webhook-client.crt" --key "$pki/apiserver-webhook-client.key")
echo "apiserver's certificate: answered,errors = $got"
[[ $got == 1,0 ]] || fail "the apiserver's own certificate was not answered ($got)"

# 3. What the webhook and the apiserver counted.
untrusted=$(( $(webhook_metric 'restarter_webhook_client_certificates_refused_total{reason="untrusted"}') - before_untrusted ))
named=$(( $(webhook_metric 'restarter_webhook_client_certificates_refused_total{reason="name"}') - before_name ))
handshakes=$(( $(webhook_metric 'restarter_webhook_http_connections_closed_total{server="webhook",reason="handshake_failed"}') - before_handshake ))
echo "refused: untrusted $untrusted, name $named; handshake_failed closes $handshakes"
((untrusted >= 1)) || fail "no refusal counted for the other CA's certificate"
((named >= 1)) || fail "no refusal counted for the other name"
((handshakes >= 3)) || fail "fewer than 3 failed handshakes counted ($handshakes)"
patched=$(webhook_metric 'restarter_webhook_admissions_total{kind="StatefulSet",operation="CREATE",outcome="patched"}')
failed=$(webhook_metric 'restarter_webhook_admissions_total{kind="StatefulSet",operation="CREATE",outcome="failed"}')
echo "webhook: $patched patched CREATEs, $failed failed"
((patched >= COUNT)) || fail "the webhook patched $patched CREATEs, want at least $COUNT"
((failed == 0)) || fail "the webhook failed $failed reviews"
check_no_fail_open

finish "ok: the apiserver's calls annotated $COUNT StatefulSets; clients without its certificate were refused"
