# shellcheck shell=bash
# The control plane's components: their ports, address ranges and state directories, the flags
# and configuration files each starts with, and the readiness probes `up` waits on. Their
# namespace and processes are netns.sh's, the commands that start and stop them commands.sh's.
# Sourced, never executed. Uses common.sh, build.sh, pki.sh and netns.sh.
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
# shellcheck disable=SC2034  # read by netns.sh and commands.sh
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

RUN_DIR="$STATE_DIR/run"
LOG_DIR="$STATE_DIR/logs"
PKI_DIR="$STATE_DIR/pki"

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
