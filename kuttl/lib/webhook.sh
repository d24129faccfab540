#!/usr/bin/env bash
# Runs serve-webhook as a host process for one kuttl test, registered by URL with a
# MutatingWebhookConfiguration that matches only the test's namespace, so that tests running in
# parallel never call each other's webhook.
#
# Usage (in kuttl TestStep scripts; kuttl sets NAMESPACE and KUBECONFIG):
#   webhook.sh start NAME [serve-webhook flags...]
#       serve-webhook with managed certificates in Secret NAME-certs of $NAMESPACE, creating and
#       keeping its own configuration as in a cluster (--manage-configuration: by URL
#       https://127.0.0.1:<free port>/mutate, only $NAMESPACE, timeoutSeconds
#       $WEBHOOK_TIMEOUT_SECONDS, default 5); or, when the flags say --cert-dir, install-mwc first
#       (same settings plus $WEBHOOK_INSTALL_ARGS) and serve-webhook with those files. Then waits
#       (bounded) until the apiserver really calls it: a server-side dry-run create of a labeled
#       probe StatefulSet comes back annotated. Also --roll-on-opt-in, as controller.sh gives
#       (a later --roll-on-opt-in=false among the flags wins: webhook-baseline).
#       WEBHOOK_NAMESPACES="NS..." routes those namespaces to it too (after $NAMESPACE; the test
#       creates and deletes them: kuttl deletes only its own).
#       With WEBHOOK_CLIENT_AUTH=1 it accepts only the apiserver: --client-ca-file with the local
#       control plane's CA for the apiserver's webhook client certificate
#       ($RESTARTER_CLUSTER_STATE_DIR/pki/webhook-client-ca.crt, tests/cluster/lib/pki.sh) and
#       --client-allowed-names with that certificate's name (kuttl webhook-client-auth).
#
# Identity: $RESTARTER_WEBHOOK_KUBECONFIG when set (tests/run.sh: a token of the manifests'
# restarter-webhook ServiceAccount, kuttl/lib/identity.sh), else kuttl's admin $KUBECONFIG. The
# manifests' name-bound rules (certificate Secret, configuration) are then granted for this
# test's names, as an operator choosing other names would (identity.sh grant); install-mwc and the
# clean-up stay admin work. The manifests' ValidatingAdmissionPolicy restarter-webhook-configuration
# (identity.sh install-rbac) then checks every configuration this webhook writes: a binding of it
# for this test's configuration, with parameters (a ConfigMap of $NAMESPACE) saying what this
# webhook writes (its URL, only $NAMESPACE, its timeout, the objectSelector of its flags), as an
# operator running serve-webhook with other names and flags would make. With WEBHOOK_GRANT=0 (the
# names of an install) the install's own binding checks it, and WEBHOOK_POLICY_PARAMS=NS/NAME names
# the install's parameters, set to this webhook's shape by start (kuttl/lib/webhook-identity.sh).
#   webhook.sh stop NAME       stop the process and delete the configuration
#   webhook.sh freeze NAME     SIGSTOP: the socket still accepts connections, nothing answers
#   webhook.sh kill NAME       stop the process but keep the configuration (a webhook that is down)
#   webhook.sh metrics NAME    the webhook's /metrics
#   webhook.sh health NAME     HOST:PORT of its /healthz and /readyz (only when started with
#                              WEBHOOK_HEALTH_PROBE_ADDRESS set, e.g. 127.0.0.1:0; default 0: none)
#   webhook.sh pid NAME        its process ID (the serve-webhook process itself)
#   webhook.sh apiserver-count NAME FAMILY   the apiserver's counter FAMILY for this webhook, e.g.
#                              apiserver_admission_webhook_fail_open_count (0 when never counted)
#   webhook.sh log NAME        its log
#   webhook.sh dir NAME        its state directory (pid, port, log)
#   webhook.sh configuration NAME   the configuration's name (= its webhook's name)
#
# Nothing is left behind when a test fails: start also launches a watchdog that stops the process
# and deletes the configuration once the test namespace is gone or terminating (kuttl deletes it
# after every test, passed or failed), or after $WEBHOOK_MAX_SECONDS (default 1200). The PID file
# holds the process's PID and start time (tests/lib/process.sh), so a recycled PID is never
# signalled.
set -euo pipefail

die() { printf 'webhook.sh: %s\n' "$*" >&2; exit 1; }

: "${NAMESPACE:?NAMESPACE must be set (kuttl sets it)}"
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/../../tests/lib/process.sh
source "$here/../../tests/lib/process.sh"
# grant_names and policy_params: the Identity paragraph above.
# shellcheck source=SCRIPTDIR/webhook-identity.sh
source "$here/webhook-identity.sh"
bin=${RESTARTER_BIN:-$here/../../build/ci/cmd/restarter/restarter}
[[ -x $bin ]] || die "no restarter binary at $bin (build it, or set RESTARTER_BIN)"
kubeconfig=$(cd "$(dirname "${KUBECONFIG:?KUBECONFIG must be set}")" && pwd)/$(basename "$KUBECONFIG")
export KUBECONFIG=$kubeconfig

name=${2:-}
[[ -n $name ]] || die "usage: webhook.sh start|stop|freeze|kill|metrics|log|dir|configuration NAME"
state=${TMPDIR:-/tmp}/restarter-kuttl-webhook/$NAMESPACE/$name
# Names (give the same values to every call for one NAME): the configuration, the certificate
# Secret and its namespace. install-manifests sets them to the manifests' own names.
configuration=${WEBHOOK_CONFIGURATION:-$name.$NAMESPACE.restarter.stackable.tech}
secret=${WEBHOOK_SECRET:-$name-certs}
secret_namespace=${WEBHOOK_SECRET_NAMESPACE:-$NAMESPACE}
# Upper bound of each wait in this script (2 busy cores: generous, and returns as soon as it holds).
WAIT_SECONDS=90
# How long serve-webhook may take to drain after SIGTERM before SIGKILL (also when frozen: it gets
# SIGCONT with the SIGTERM).
STOP_GRACE_SECONDS=15

pid_alive() { proc_alive "$state/pid"; }

stop_process() {
  [[ -f $state/pid ]] || return 0
  proc_stop "$STOP_GRACE_SECONDS" "$state/pid" || true
  rm -f "$state/pid"
}

delete_configuration() {
  "$bin" install-mwc --name "$configuration" --delete >/dev/null 2>&1 || true
  [[ -z ${RESTARTER_WEBHOOK_KUBECONFIG:-} || ${WEBHOOK_GRANT:-1} == 0 ]] || {
    "$here/identity.sh" revoke "restarter-webhook-configuration.$configuration" || true
    kubectl delete validatingadmissionpolicybinding "restarter-webhook-configuration.$configuration" \
      --ignore-not-found >/dev/null 2>&1 || true
  }
}

# $NAMESPACE and $WEBHOOK_NAMESPACES, one a line: the namespaces the configuration routes here.
routed_namespaces() {
  local extra=()
  read -ra extra <<<"${WEBHOOK_NAMESPACES:-}"
  printf '%s\n' "$NAMESPACE" "${extra[@]}"
}

# The key of content digests in the test's namespace (serve-webhook --digest-key-namespace below):
# the webhook only reads it, so where no controller has made it yet it is made here (admin) as
# serve-controller would, 32 random bytes; a controller started later reads the same one.
ensure_digest_key() {
  kubectl -n "$NAMESPACE" get secret restarter-digest-key >/dev/null 2>&1 && return 0
  local keyfile=$state/digest.key
  head -c 32 /dev/urandom >"$keyfile"
  kubectl -n "$NAMESPACE" create secret generic restarter-digest-key --from-file=key="$keyfile" >/dev/null 2>&1 ||
    kubectl -n "$NAMESPACE" get secret restarter-digest-key >/dev/null || die "cannot create the digest key"
  rm -f "$keyfile"
}

# Runs detached: cleans up once the namespace is gone or terminating, or the time is up.
watchdog() {
  local deadline=$((SECONDS + ${WEBHOOK_MAX_SECONDS:-1200})) phase
  while ((SECONDS < deadline)); do
    [[ -f $state/active ]] || break  # stopped by the test
    phase=$(kubectl get namespace "$NAMESPACE" -o jsonpath='{.status.phase}' 2>&1) || true
    case $phase in
      Active) ;;
      *NotFound* | Terminating) break ;;
    esac
    sleep 2
  done
  stop_process
  delete_configuration
}

probe_annotated() {
  local annotations
  annotations=$(kubectl -n "$NAMESPACE" create --dry-run=server -o jsonpath='{.spec.template.metadata.annotations}' -f - <<YAML 2>/dev/null
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: webhook-probe
  labels:
    restarter.stackable.tech/enabled: "true"
spec:
  serviceName: webhook-probe
  replicas: 0
  selector:
    matchLabels:
      app: webhook-probe
  template:
    metadata:
      labels:
        app: webhook-probe
    spec:
      volumes:
        - name: probe
          configMap:
            name: webhook-probe
      containers:
        - name: probe
          image: registry.invalid/probe:1
YAML
  ) || return 1
  [[ $annotations == *configmap.restarter.stackable.tech/webhook-probe* ]]
}

start() {
  shift 2 || true
  mkdir -p "$state"
  pid_alive && die "webhook $name is already running"
  kubectl -n "$NAMESPACE" create configmap webhook-probe --from-literal=probe=1 >/dev/null 2>&1 || true
  local port managed=1 arg identity=() install_args=() client_auth=()
  # Split on blanks, as the unquoted expansion did (and never globbed).
  read -ra install_args <<<"${WEBHOOK_INSTALL_ARGS:-}"
  for arg in "$@"; do [[ $arg == --cert-dir ]] && managed=0; done
  [[ -n ${RESTARTER_WEBHOOK_KUBECONFIG:-} ]] && identity=(--kubeconfig "$RESTARTER_WEBHOOK_KUBECONFIG")
  if [[ ${WEBHOOK_CLIENT_AUTH:-0} == 1 ]]; then
    local ca=${RESTARTER_CLUSTER_STATE_DIR:?WEBHOOK_CLIENT_AUTH needs the local control plane}/pki/webhook-client-ca.crt
    [[ -f $ca ]] || die "no $ca (a cluster started before the admission configuration existed: cluster.sh down, up)"
    client_auth=(--client-ca-file "$ca" --client-allowed-names kube-apiserver-webhook-client)
  fi
  grant_names
  ensure_digest_key
  for _ in 1 2 3 4 5; do
    # Below the ephemeral range (32768-60999), where outgoing connections take their ports.
    port=$((20000 + RANDOM % 12000))
    local settings=(--timeout-seconds "${WEBHOOK_TIMEOUT_SECONDS:-5}") routed
    while read -r routed; do settings+=(--only-namespace "$routed"); done < <(routed_namespaces)
    if ((managed)); then
      settings=(--manage-configuration "${settings[@]}")
      policy_params "$port" "$@"
    else
      "$bin" install-mwc --name "$configuration" --webhook-url "https://127.0.0.1:$port/mutate" \
        "${settings[@]}" "${install_args[@]}" >"$state/install.log" 2>&1 ||
        die "install-mwc failed: $(cat "$state/install.log")"
      settings=()
    fi
    setsid "$bin" serve-webhook "${identity[@]}" --bind-address 127.0.0.1 --port "$port" \
      --webhook-url "https://127.0.0.1:$port/mutate" --service-namespace "$NAMESPACE" \
      --secret-name "$secret" --secret-namespace "$secret_namespace" \
      --configuration-name "$configuration" "${settings[@]}" --roll-on-opt-in --digest-key-namespace "$NAMESPACE" \
      --metrics-bind-address 127.0.0.1:0 --health-probe-bind-address "${WEBHOOK_HEALTH_PROBE_ADDRESS:-0}" \
      "${client_auth[@]}" "$@" \
      >"$state/log" 2>&1 </dev/null &
    proc_record $! "$state/pid"
    echo "$port" >"$state/port"
    local deadline=$((SECONDS + WAIT_SECONDS))
    until grep -q 'webhook serving' "$state/log"; do
      pid_alive || break
      ((SECONDS < deadline)) || { stop_process; die "webhook did not start within ${WAIT_SECONDS}s: $(tail -5 "$state/log")"; }
      sleep 0.1
    done
    grep -q 'webhook serving' "$state/log" && break
    rm -f "$state/pid"
    grep -q 'cannot listen' "$state/log" || die "webhook exited: $(tail -5 "$state/log")"
  done
  pid_alive || die "no free port found"
  # The watchdog outlives this step (and kuttl's step process group).
  touch "$state/active"
  setsid bash "$0" __watchdog "$name" </dev/null >"$state/watchdog.log" 2>&1 &
  local deadline=$((SECONDS + WAIT_SECONDS))
  until probe_annotated; do
    pid_alive || die "webhook exited: $(tail -5 "$state/log")"
    ((SECONDS < deadline)) || die "the apiserver did not call the webhook within ${WAIT_SECONDS}s: $(tail -5 "$state/log")"
    sleep 0.2
  done
  echo "webhook $name serving on 127.0.0.1:$port, configuration $configuration"
}

# The apiserver's own count for our webhook of a metric family (0 when absent), e.g.
# apiserver_admission_webhook_fail_open_count.
apiserver_count() {
  local family=${1:?metric family}
  kubectl get --raw /metrics | awk -v f="$family" -v n="name=\"$configuration\"" '
    index($0, f "{") == 1 && index($0, n) > 0 { sum += $NF }
    END { printf "%d\n", sum }' 
}

metrics() {
  local port
  port=$(grep -Eo 'serving /metrics address=[0-9.:]+' "$state/log" | head -1 | sed 's/.*://')
  [[ -n $port ]] || die "no metrics port in the log"
  curl -sf "http://127.0.0.1:$port/metrics"
}

health() {
  local address
  address=$(grep -Eo 'serving /healthz and /readyz address=[0-9.:]+' "$state/log" | head -1 | sed 's/.*address=//')
  [[ -n $address ]] || die "no health address in the log (start with WEBHOOK_HEALTH_PROBE_ADDRESS=127.0.0.1:0)"
  echo "$address"
}

case ${1:-} in
  start) start "$@" ;;
  stop) rm -f "$state/active"; stop_process; delete_configuration; echo "webhook $name stopped" ;;
  freeze) proc_signal "$state/pid" STOP || die "webhook $name is not running" ;;
  kill) proc_signal "$state/pid" KILL || die "webhook $name is not running"; rm -f "$state/pid" ;;
  metrics) metrics ;;
  health) health ;;
  pid) pid_alive || die "webhook $name is not running"; proc_pid "$state/pid" ;;
  apiserver-count) apiserver_count "${3:-}" ;;
  log) cat "$state/log" ;;
  dir) echo "$state" ;;
  configuration) echo "$configuration" ;;
  __watchdog) watchdog ;;
  *) die "unknown command ${1:-}" ;;
esac
