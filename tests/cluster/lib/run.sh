# shellcheck shell=bash
# Running the control plane: network namespace, component processes, readiness, teardown.
# Sourced, never executed. Uses common.sh, build.sh and pki.sh.
#
# State directory layout ($STATE_DIR):
#   kubeconfig             admin kubeconfig (what `env` and `exec` export)
#   pki/                   CA, certificates, service-account keys, per-component kubeconfigs
#   etcd/                  etcd data (fresh on every `up`)
#   run/<component>.pid    "<pid> <start time>" of each process `up` started
#   versions               the VERSIONS_KEY the running components were built for
#   logs/<component>.log   component output; the previous run's logs move to logs.prev/
#   logs/audit.log         kube-apiserver audit log: lists and watches of ConfigMaps and Secrets only
#   node/                  the real node's, while it runs (lib/node.sh); run/real-node marks it started
#
# Every component listens on 127.0.0.1 inside the cluster's own network namespace, which has only
# `lo` up, so fixed ports are fine: two clusters never share a loopback. The apiserver alone listens
# on every address of the namespace: 127.0.0.1 for the host-side clients, NODE_IP for the pods of
# the real node (lib/node.sh), which have a loopback of their own.

# Components in start order; `down` stops them in reverse.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)
ETCD_CLIENT_PORT=2379
ETCD_PEER_PORT=2380
APISERVER_PORT=6443
KCM_PORT=10257
SCHEDULER_PORT=10259
KWOK_PORT=10247
# Fake ranges, valid only inside the namespace (where nothing routes them). Disjoint on purpose.
SERVICE_CIDR=10.96.0.0/16
POD_CIDR=10.244.0.0/16
# The node address, on the namespace's `lo` (a /32; no other interface is needed for it): the
# apiserver advertises it, so the `kubernetes` Service's endpoints point to it, and the real node's
# kubelet reports it as its InternalIP. Outside the three ranges (services, kwok's pods, the real
# node's pods 10.245.0.0/24). Set at every `up`: it costs nothing, and a pod's 127.0.0.1 is its own.
NODE_IP=10.240.0.1
# Bound on each readiness wait. Measured on 2 cores: /readyz ~3 s, default ServiceAccount ~6 s,
# also with three CPU hogs running; the bound is for a machine far busier than that.
WAIT_SECONDS=${RESTARTER_CLUSTER_WAIT_SECONDS:-180}

RUN_DIR="$STATE_DIR/run"
LOG_DIR="$STATE_DIR/logs"
PKI_DIR="$STATE_DIR/pki"

netns_exists() { [[ -e /run/netns/$NETNS ]]; }

# Set NETNS_ARGV to the command prefix that runs a command inside the cluster's network namespace
# as the calling user, with the caller's environment and working directory.
netns_argv() {
  if [[ $(id -u) -eq 0 ]]; then
    NETNS_ARGV=(ip netns exec "$NETNS")
  else
    # Entering a namespace needs root; drop back to the caller right after. sudo may reset PATH.
    NETNS_ARGV=(sudo --preserve-env ip netns exec "$NETNS"
      sudo --preserve-env -u "#$(id -u)" -g "#$(id -g)" -- env PATH="$PATH")
  fi
}

# Run a command inside the cluster's network namespace, as the calling user.
in_netns() {
  netns_argv
  "${NETNS_ARGV[@]}" "$@"
}

# Create the namespace with only loopback up, and NODE_IP on it (idempotent).
create_netns() {
  netns_exists || as_root ip netns add "$NETNS"
  as_root ip netns exec "$NETNS" ip link set lo up
  as_root ip netns exec "$NETNS" ip addr replace "$NODE_IP/32" dev lo
}

# Admin kubectl inside the namespace.
kctl() { in_netns "$BIN_DIR/kubectl" --kubeconfig "$KUBECONFIG_FILE" --request-timeout=10s "$@"; }

# --- processes --------------------------------------------------------------------------------

# The PID files hold "<pid> <start time>" (tests/lib/process.sh), so that `down` never signals a
# recycled PID. The components run as root (sudo when we are not).
# shellcheck source=SCRIPTDIR/../../lib/process.sh
source "$CLUSTER_DIR/../lib/process.sh"
proc_kill=(as_root kill)
proc_log=(log)
# Grace periods of `down` before SIGKILL: the apiserver's clients and the apiserver may take a while
# to close their connections; etcd has only to flush.
STOP_GRACE_SECONDS=20
ETCD_STOP_GRACE_SECONDS=10

# Is the recorded process of <component> still the one we started, and alive?
component_alive() { proc_alive "$RUN_DIR/$1.pid"; }

# Start <component> detached (own session, survives the script) inside the namespace.
#   start_component <component> <args...>     the binary is $BIN_DIR/<component>
start_component() {
  local name=$1
  shift
  start_process "$name" ip netns exec "$NETNS" "$BIN_DIR/$name" "$@"
}

# Start <command> as root, detached, as <component>: output to logs/<component>.log, PID recorded.
#   start_process <component> <command...>
start_process() {
  local name=$1 pid
  shift
  mkdir -p "$RUN_DIR" "$LOG_DIR"
  # setsid: a new session, so the process is immune to the caller's terminal and job control.
  # Not a process-group leader here (no job control), so setsid execs without forking, and so
  # do `ip netns exec`, `nsenter --net` and `unshare --mount` (lib/node.sh): $! is the component.
  # 8>&-: the cluster lock stays with this script, or a later up/down would wait forever.
  if [[ $(id -u) -eq 0 ]]; then
    setsid "$@" </dev/null >>"$LOG_DIR/$name.log" 2>&1 8>&- &
  else
    setsid sudo "$@" </dev/null >>"$LOG_DIR/$name.log" 2>&1 8>&- &
  fi
  pid=$!
  proc_record "$pid" "$RUN_DIR/$name.pid"
  log "started $name (pid $pid, log $LOG_DIR/$name.log)"
}

# Stop the given components by their recorded PIDs: SIGTERM, SIGKILL after <grace> seconds, and
# give up (with a warning) if a process survives SIGKILL for 5 s more (proc_stop).
#   stop_components <grace seconds> <component...>
stop_components() {
  local grace=$1 name files=()
  shift
  for name in "$@"; do files+=("$RUN_DIR/$name.pid"); done
  proc_stop "$grace" "${files[@]}" || true
  rm -f "${files[@]}"
}

# Print the last lines of a component's log to stderr.
log_tail() {
  local file="$LOG_DIR/$1.log"
  [[ -f $file ]] || return 0
  printf -- '----- last lines of %s -----\n' "$file" >&2
  tail -n "${2:-30}" "$file" >&2
  printf -- '----- end of %s -----\n' "$file" >&2
}

# Die if any component that has been started has exited, showing its log tail.
check_components_alive() {
  local name
  for name in "${COMPONENTS[@]}" "${NODE_COMPONENTS[@]}"; do
    [[ -f $RUN_DIR/$name.pid ]] || continue
    if ! component_alive "$name"; then
      log_tail "$name" 40
      die "$name exited during start (log: $LOG_DIR/$name.log)"
    fi
  done
}

# Poll <command> every 0.5 s until it succeeds, for at most WAIT_SECONDS. Fails as soon as a
# started component dies; on timeout, shows the log tails of <components to blame>.
#   wait_for "<description>" "<components to blame>" <command...>
wait_for() {
  local what=$1 blame=$2 deadline=$((SECONDS + WAIT_SECONDS)) start=$SECONDS name
  shift 2
  until "$@" >/dev/null 2>&1; do
    check_components_alive
    if ((SECONDS >= deadline)); then
      for name in $blame; do log_tail "$name" 30; done
      die "timed out after ${WAIT_SECONDS}s waiting for $what"
    fi
    sleep 0.5
  done
  log "ready: $what ($((SECONDS - start))s)"
}

# --- readiness probes (each exits 0 when the condition holds) -----------------------------------

apiserver_ready() { [[ $(kctl get --raw=/readyz 2>/dev/null) == ok ]]; }
default_sa_exists() { kctl -n default get serviceaccount default; }
# Every Node of ours reports Ready=True.
nodes_ready() {
  local statuses
  statuses=$(kctl get nodes -l restarter.test/fake-node=true \
    -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}')
  [[ $(grep -c '^True$' <<<"$statuses") -ge 2 ]] && ! grep -qv '^True$' <<<"$statuses"
}

# --- the components -----------------------------------------------------------------------------

start_etcd() {
  local url="http://127.0.0.1"
  # --unsafe-no-fsync: test data is thrown away on every `up`; fsync only slows the tests.
  # RESTARTER_CLUSTER_ETCD_QUOTA_BYTES: etcd's database quota (its default is 2 GiB; a million
  # ConfigMaps and Secrets of 1 KiB need more: tests/bench/scale.sh).
  start_component etcd \
    --name=default --data-dir="$STATE_DIR/etcd" \
    --listen-client-urls="$url:$ETCD_CLIENT_PORT" --advertise-client-urls="$url:$ETCD_CLIENT_PORT" \
    --listen-peer-urls="$url:$ETCD_PEER_PORT" --initial-advertise-peer-urls="$url:$ETCD_PEER_PORT" \
    --initial-cluster="default=$url:$ETCD_PEER_PORT" --initial-cluster-state=new \
    --unsafe-no-fsync --log-level=warn ${RESTARTER_CLUSTER_ETCD_QUOTA_BYTES:+--quota-backend-bytes=$RESTARTER_CLUSTER_ETCD_QUOTA_BYTES}
}

# With RESTARTER_CLUSTER_APISERVER_TRACING=127.0.0.1:PORT, print the --tracing-config-file flag
# making kube-apiserver export a span for every request (OTLP/gRPC, insecure, to that loopback
# address: tests/bench/webhook.sh receives them); print nothing otherwise.
apiserver_tracing_flag() {
  local endpoint=${RESTARTER_CLUSTER_APISERVER_TRACING:-}
  [[ -n $endpoint ]] || return 0
  [[ $endpoint =~ ^127\.0\.0\.1:[0-9]{1,5}$ ]] \
    || die "RESTARTER_CLUSTER_APISERVER_TRACING must be 127.0.0.1:PORT (loopback only), got '$endpoint'"
  cat >"$RUN_DIR/apiserver-tracing.yaml" <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: TracingConfiguration
endpoint: $endpoint
samplingRatePerMillion: 1000000
EOF
  echo "--tracing-config-file=$RUN_DIR/apiserver-tracing.yaml"
}

# The audit policy: only lists and watches of ConfigMaps and Secrets, at RequestResponse, so a
# test can read what a client was answered (a LIST's responseObject kind says whether it asked
# for PartialObjectMetadataList; kuttl controller-content-configmaps). Nothing else is audited. The
# log is logs/audit.log, capped at 20 MB (one backup). RESTARTER_CLUSTER_AUDIT=off at `up` runs
# the apiserver without it (benchmarks: every LIST page of ConfigMaps and Secrets is written out
# whole, which a 210,000-object sync pays for); any other value but on is refused.
write_audit_policy() {
  cat >"$RUN_DIR/audit-policy.yaml" <<EOF
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: RequestResponse
    verbs: [list, watch]
    resources: [{group: "", resources: [configmaps, secrets]}]
  - level: None
EOF
}

# The admission configuration: the webhook admission plugins get a kubeconfig whose user `*` (every
# webhook, by any host) is the client certificate pki.sh makes for webhooks, so a webhook may
# require a client certificate of that CA (serve-webhook --client-ca-file; kuttl
# webhook-client-auth). A webhook that asks for none gets none: TLS sends a client certificate only
# when the server requests one.
write_admission_config() {
  cat >"$RUN_DIR/webhook-client.kubeconfig" <<EOF
apiVersion: v1
kind: Config
users:
- name: '*'
  user:
    client-certificate: $PKI_DIR/apiserver-webhook-client.crt
    client-key: $PKI_DIR/apiserver-webhook-client.key
EOF
  cat >"$RUN_DIR/admission.yaml" <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: MutatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $RUN_DIR/webhook-client.kubeconfig
- name: ValidatingAdmissionWebhook
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: $RUN_DIR/webhook-client.kubeconfig
EOF
}

start_apiserver() {
  local tracing audit=()
  tracing=$(apiserver_tracing_flag)
  case ${RESTARTER_CLUSTER_AUDIT:-on} in
    on)
      write_audit_policy
      audit=(--audit-policy-file="$RUN_DIR/audit-policy.yaml" --audit-log-path="$LOG_DIR/audit.log"
        --audit-log-maxsize=20 --audit-log-maxbackup=1 --audit-log-format=json)
      ;;
    off) ;;
    *) die "RESTARTER_CLUSTER_AUDIT must be on or off, got '$RESTARTER_CLUSTER_AUDIT'" ;;
  esac
  # Admission: the default plugin set (it includes ServiceAccount, NamespaceLifecycle,
  # MutatingAdmissionWebhook and ValidatingAdmissionWebhook); nothing is disabled. The webhook
  # plugins present a client certificate to webhooks that ask for one (write_admission_config).
  write_admission_config
  # --bind-address=0.0.0.0: every address of the namespace (lo's 127.0.0.1 and NODE_IP, the real
  # node's bridge), none outside it. --advertise-address=NODE_IP: the default (lease) endpoint
  # reconciler then points the `kubernetes` Service at NODE_IP:6443, which the real node's pods
  # reach (it refuses a loopback address, and 127.0.0.1 would be the pod's own).
  # --kubelet-preferred-address-types=InternalIP: reach a kubelet at the address it reports
  # (NODE_IP), never by resolving its host name (a DNS query the namespace cannot send).
  start_component kube-apiserver \
    --etcd-servers="http://127.0.0.1:$ETCD_CLIENT_PORT" \
    --bind-address=0.0.0.0 --secure-port="$APISERVER_PORT" --advertise-address="$NODE_IP" \
    --kubelet-client-certificate="$PKI_DIR/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$PKI_DIR/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP \
    --cert-dir="$PKI_DIR/apiserver-generated" \
    --tls-cert-file="$PKI_DIR/apiserver.crt" --tls-private-key-file="$PKI_DIR/apiserver.key" \
    --client-ca-file="$PKI_DIR/ca.crt" \
    --requestheader-client-ca-file="$PKI_DIR/front-proxy-ca.crt" \
    --requestheader-allowed-names=front-proxy-client \
    --requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
    --requestheader-extra-headers-prefix=X-Remote-Extra- \
    --proxy-client-cert-file="$PKI_DIR/front-proxy-client.crt" \
    --proxy-client-key-file="$PKI_DIR/front-proxy-client.key" \
    --authorization-mode=Node,RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$PKI_DIR/sa.pub" \
    --service-account-signing-key-file="$PKI_DIR/sa.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --allow-privileged=true \
    --admission-control-config-file="$RUN_DIR/admission.yaml" \
    "${audit[@]}" --profiling=false ${tracing:+"$tracing"}
}

start_controller_manager() {
  # Default controllers (StatefulSet, ServiceAccount, namespace, garbage collector, ...), each with
  # its own service-account credentials as in a production cluster. The CA also signs CSRs.
  start_component kube-controller-manager \
    --kubeconfig="$PKI_DIR/kube-controller-manager.kubeconfig" \
    --authentication-kubeconfig="$PKI_DIR/kube-controller-manager.kubeconfig" \
    --authorization-kubeconfig="$PKI_DIR/kube-controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$KCM_PORT" \
    --leader-elect=false \
    --use-service-account-credentials=true \
    --service-account-private-key-file="$PKI_DIR/sa.key" \
    --root-ca-file="$PKI_DIR/ca.crt" \
    --cluster-signing-cert-file="$PKI_DIR/ca.crt" --cluster-signing-key-file="$PKI_DIR/ca.key" \
    --service-cluster-ip-range="$SERVICE_CIDR" \
    --profiling=false
}

start_scheduler() {
  start_component kube-scheduler \
    --kubeconfig="$PKI_DIR/kube-scheduler.kubeconfig" \
    --authentication-kubeconfig="$PKI_DIR/kube-scheduler.kubeconfig" \
    --authorization-kubeconfig="$PKI_DIR/kube-scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --secure-port="$SCHEDULER_PORT" \
    --leader-elect=false \
    --profiling=false
}

start_kwok() {
  # The Stages: those taken from the kwok module at build time, plus our own pod-delete. The
  # pod-ready Stage gets a delay read from the pod's annotation restarter.test/ready-after (a Go
  # duration, "30s"): a pod without it is Ready at once, as before (kwok delays nothing when the
  # expression yields no string); suites that need pods slow to become Ready set it in their pod
  # template (kuttl controller-rollout-progress). Added here, not at build time, so that a warm
  # tools cache needs no rebuild.
  awk -v delay_file="$CLUSTER_DIR/kwok/pod-ready-delay.yaml" '
    BEGIN { while ((getline line < delay_file) > 0) delay = delay (delay == "" ? "" : "\n") line }
    /^---$/ { in_ready = 0 }
    /^  name: pod-ready$/ { in_ready = 1 }
    { print }
    in_ready && /^spec:$/ { print delay; added++ }
    END { if (added != 1) { print "pod-ready Stage not found once: " added > "/dev/stderr"; exit 1 } }
  ' "$KWOK_STAGES" >"$STATE_DIR/kwok-stages.yaml" \
    || die "cannot add the readiness delay to kwok's pod-ready Stage"
  { echo '---'; cat "$CLUSTER_DIR/kwok/pod-delete.yaml"; } >>"$STATE_DIR/kwok-stages.yaml"
  # HOME points into the state directory so that a user's ~/.kwok/kwok.yaml is never read.
  mkdir -p "$STATE_DIR/kwok-home"
  # --node-lease-duration-seconds: kwok keeps a Lease per Node in kube-node-lease, renewed well
  # within the duration. The heartbeat Stage we take from kwok (node-heartbeat-with-lease) updates
  # Node status only every 10-20 minutes because it expects those Leases; without them the node
  # lifecycle controller saw no heartbeat within its grace period, marked the Nodes NotReady every
  # minute for a few seconds and with them their pods, so readiness-based waits timed out at random.
  # 40 s is the kubelet's default.
  # --manage-nodes-with-annotation-selector: only the Nodes of manifests/nodes.yaml (annotated
  # kwok.x-k8s.io/node=fake), never the real node (lib/node.sh), whose kubelet holds its own Lease:
  # kwok leaves a Node's pods alone unless it holds that Node's Lease.
  HOME="$STATE_DIR/kwok-home" start_component kwok \
    --kubeconfig="$PKI_DIR/kwok.kubeconfig" \
    --config="$STATE_DIR/kwok-stages.yaml" \
    --node-lease-duration-seconds=40 \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --cidr="$POD_CIDR" \
    --server-address="127.0.0.1:$KWOK_PORT"
}

# The fake Nodes kwok animates.
apply_nodes() {
  kctl apply -f "$CLUSTER_DIR/manifests/nodes.yaml" >/dev/null
}

# --- commands ---------------------------------------------------------------------------------

# True when every component runs, from the binaries of the current versions, and the apiserver
# is ready.
cluster_healthy() {
  local name
  netns_exists || return 1
  [[ -f $STATE_DIR/versions && $(<"$STATE_DIR/versions") == "$VERSIONS_KEY" ]] || return 1
  for name in "${COMPONENTS[@]}"; do component_alive "$name" || return 1; done
  apiserver_ready
}

# Stop what `up` started (by PID only) and delete the namespace. Safe when nothing runs.
stop_cluster() {
  # The real node first (lib/node.sh; nothing to do when it never ran): its kubelet and
  # kube-proxy are clients of the apiserver, its containers live in the namespace.
  stop_node netns-goes
  # Clients first, then the apiserver (so it can close its etcd connections), then etcd.
  stop_components "$STOP_GRACE_SECONDS" kwok kube-scheduler kube-controller-manager kube-apiserver
  stop_components "$ETCD_STOP_GRACE_SECONDS" etcd
  if netns_exists; then as_root ip netns delete "$NETNS"; fi
}

UP_DONE=0
# EXIT trap of `up`: an `up` that did not finish tears down what it started.
on_up_exit() {
  ((UP_DONE)) && return 0
  log "up failed; stopping what was started (logs stay in $LOG_DIR)"
  stop_cluster
}

# Serialise up and down of one cluster (fd 8, released at exit). Components must not inherit it:
# start_component closes it for them.
lock_cluster() {
  mkdir -p "$(dirname "$STATE_DIR")"
  exec 8>"$STATE_DIR.lock"
  flock -w 600 8 || die "another up/down of cluster '$CLUSTER_NAME' holds $STATE_DIR.lock"
}

cmd_up() {
  build_all >/dev/null
  want_real_node && build_node >/dev/null
  want_network_policy && build_netpol >/dev/null
  lock_cluster
  if cluster_healthy; then
    # Asked for the real node on a cluster that runs without it (or whose node died): start it
    # alone; a failure stops the node and leaves the control plane as it was.
    if want_real_node && ! node_healthy; then
      stop_node netns-stays
      trap on_node_up_exit EXIT
      start_node
      trap - EXIT
    fi
    # Likewise the policy controller (lib/netpol.sh), asked for on a node that runs without it.
    if want_network_policy && ! netpol_running; then
      trap 'stop_netpol netns-stays' EXIT
      start_netpol
      trap - EXIT
    fi
    log "cluster '$CLUSTER_NAME' is already up"
    print_kubeconfig
    return 0
  fi
  stop_cluster          # leftovers of a half-dead cluster
  local start=$SECONDS
  trap on_up_exit EXIT
  # Fresh state, but keep the previous run's logs for debugging.
  mkdir -p "$STATE_DIR"
  if [[ -d $LOG_DIR ]]; then rm -rf "$STATE_DIR/logs.prev"; mv "$LOG_DIR" "$STATE_DIR/logs.prev"; fi
  rm -rf "$PKI_DIR" "$STATE_DIR/etcd" "$RUN_DIR" "$STATE_DIR/kwok-home" "$STATE_DIR/kwok-stages.yaml" \
    "$KUBECONFIG_FILE"
  mkdir -p "$LOG_DIR" "$RUN_DIR"
  echo "$VERSIONS_KEY" >"$STATE_DIR/versions"

  make_pki "$PKI_DIR"
  local server="https://127.0.0.1:$APISERVER_PORT" user
  for user in kube-controller-manager kube-scheduler kwok; do
    make_kubeconfig "$PKI_DIR" "$user" "$server" "$PKI_DIR/$user.kubeconfig"
  done
  make_kubeconfig "$PKI_DIR" admin "$server" "$KUBECONFIG_FILE"
  create_netns

  start_etcd
  start_apiserver
  wait_for "kube-apiserver /readyz ok" "etcd kube-apiserver" apiserver_ready
  start_controller_manager
  start_scheduler
  start_kwok
  wait_for "Nodes created" "kube-apiserver" apply_nodes
  wait_for "ServiceAccount default/default present" "kube-controller-manager" default_sa_exists
  wait_for "Nodes Ready" "kwok kube-controller-manager" nodes_ready
  want_real_node && start_node
  want_network_policy && start_netpol
  UP_DONE=1
  trap - EXIT
  log "cluster '$CLUSTER_NAME' is up in $((SECONDS - start))s"
  print_kubeconfig
}

print_kubeconfig() {
  log "kubeconfig: $KUBECONFIG_FILE (use it inside netns $NETNS: cluster.sh exec -- CMD)"
  echo "$KUBECONFIG_FILE"
}

cmd_down() {
  lock_cluster
  stop_cluster
  log "cluster '$CLUSTER_NAME' is down (logs: $LOG_DIR)"
}

# Exit 0 when the cluster is up and ready, 1 otherwise.
cmd_status() {
  local name ok=0 pid
  echo "cluster:    $CLUSTER_NAME"
  echo "netns:      $NETNS ($(netns_exists && echo present || echo absent))"
  echo "state:      $STATE_DIR"
  echo "bin:        $BIN_DIR"
  echo "versions:   $( [[ -f $STATE_DIR/versions ]] && cat "$STATE_DIR/versions" || echo none) (current: $VERSIONS_KEY)"
  for name in "${COMPONENTS[@]}"; do
    if component_alive "$name"; then
      pid=$(proc_pid "$RUN_DIR/$name.pid")
      printf '%-24s running (pid %s)\n' "$name:" "$pid"
    else
      printf '%-24s not running\n' "$name:"
      ok=1
    fi
  done
  node_status || ok=1
  if ((ok == 0)) && apiserver_ready; then
    echo "readyz:     ok"
    echo "kubeconfig: $KUBECONFIG_FILE"
  else
    echo "readyz:     not ready"
    ok=1
  fi
  return "$ok"
}

# What `exec` sets, as shell code to eval (inside the namespace).
cmd_env() {
  printf 'export KUBECONFIG=%q\n' "$KUBECONFIG_FILE"
  # shellcheck disable=SC2016  # $PATH is expanded by whoever evaluates this
  printf 'export PATH=%q:"$PATH"\n' "$BIN_DIR"
  printf 'export RESTARTER_CLUSTER=%q\n' "$CLUSTER_NAME"
  printf 'export RESTARTER_CLUSTER_NETNS=%q\n' "$NETNS"
  printf 'export RESTARTER_CLUSTER_STATE_DIR=%q\n' "$STATE_DIR"
  printf 'export RESTARTER_CLUSTER_AUDIT_LOG=%q\n' "$LOG_DIR/audit.log"
  # The real node's containerd (lib/node.sh), for ctr (on PATH; root only): the images, containers
  # and tasks of the pods are in its k8s.io namespace. Without containerd's warning at every call
  # that cgroup v1 is deprecated (this kernel has no other).
  printf 'export CONTAINERD_ADDRESS=%q\n' "$CONTAINERD_SOCK"
  printf 'export CONTAINERD_NAMESPACE=k8s.io CONTAINERD_SUPPRESS_DEPRECATION_WARNINGS=1\n'
  # The real node's registry (lib/registry.sh) and the CA its certificate is signed by.
  printf 'export RESTARTER_CLUSTER_REGISTRY=%q RESTARTER_CLUSTER_REGISTRY_CA=%q\n' "$REGISTRY_ADDR" "$PKI_DIR/ca.crt"
  printf '# Clients must run inside the network namespace: ip netns exec %s CMD, or cluster.sh exec -- CMD\n' "$NETNS"
}

# Run CMD inside the namespace with the environment of `env`; exits with CMD's status.
cmd_exec() {
  [[ ${1:-} == -- ]] && shift
  (($#)) || die "usage: cluster.sh exec -- CMD [ARGS...]"
  netns_exists || die "cluster '$CLUSTER_NAME' is not up (no network namespace $NETNS); run: cluster.sh up"
  [[ -f $KUBECONFIG_FILE ]] || die "cluster '$CLUSTER_NAME' has no kubeconfig; run: cluster.sh up"
  export KUBECONFIG="$KUBECONFIG_FILE" PATH="$BIN_DIR:$PATH" RESTARTER_CLUSTER="$CLUSTER_NAME" \
    RESTARTER_CLUSTER_NETNS="$NETNS" RESTARTER_CLUSTER_STATE_DIR="$STATE_DIR" \
    RESTARTER_CLUSTER_AUDIT_LOG="$LOG_DIR/audit.log" CONTAINERD_ADDRESS="$CONTAINERD_SOCK" \
    CONTAINERD_NAMESPACE=k8s.io CONTAINERD_SUPPRESS_DEPRECATION_WARNINGS=1 \
    RESTARTER_CLUSTER_REGISTRY="$REGISTRY_ADDR" RESTARTER_CLUSTER_REGISTRY_CA="$PKI_DIR/ca.crt"
  netns_argv
  exec "${NETNS_ARGV[@]}" "$@"
}
