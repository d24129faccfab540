# shellcheck shell=bash
# PKI and kubeconfigs for one cluster, made with openssl. Sourced, never executed.
#
# Contract: make_pki <dir> writes into <dir>:
#   ca.crt ca.key                  cluster CA (signs serving and client certificates, and CSRs)
#   apiserver.crt apiserver.key    kube-apiserver serving certificate (SANs below)
#   sa.key sa.pub                  service-account token signing key pair
#   <user>.crt <user>.key          client certificates: admin (system:masters),
#                                  kube-controller-manager, kube-scheduler, kwok,
#                                  apiserver-kubelet-client (the apiserver's, to the real node's
#                                  kubelet: logs, exec, port-forward, proxy; system:masters)
#   front-proxy-ca.crt/.key        request-header CA; front-proxy-client.crt/.key is signed by it
#   webhook-client-ca.crt/.key     the CA of the apiserver's client certificate for webhooks;
#                                  apiserver-webhook-client.crt/.key (CN kube-apiserver-webhook-client)
#                                  is signed by it and named in the admission configuration (run.sh),
#                                  so a webhook started with --client-ca-file can verify its caller
# Keys are ECDSA P-256 (fast to make); the service-account key is RSA 2048 (RS256, what every
# token consumer supports). Certificates are valid for 10 years: a test cluster must not expire
# under a long-lived state directory.

# Make a self-signed CA <name>.crt/<name>.key in <dir>.
#   make_ca <dir> <name> <common name>
make_ca() {
  local dir=$1 name=$2 cn=$3
  openssl ecparam -name prime256v1 -genkey -noout -out "$dir/$name.key" 2>/dev/null
  openssl req -x509 -new -key "$dir/$name.key" -subj "/CN=$cn" -days 3650 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$dir/$name.crt" 2>/dev/null
}

# Issue a certificate signed by a CA in $dir (default: ca).
#   issue_cert <dir> <name> <subject> <extensions> [<ca name>]
issue_cert() {
  local dir=$1 name=$2 subject=$3 ext=$4 ca=${5:-ca}
  openssl ecparam -name prime256v1 -genkey -noout -out "$dir/$name.key" 2>/dev/null
  openssl req -new -key "$dir/$name.key" -subj "$subject" -out "$dir/$name.csr" 2>/dev/null
  printf '%s\n' "$ext" >"$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$ca.crt" -CAkey "$dir/$ca.key" -CAcreateserial \
    -days 3650 -sha256 -extfile "$dir/$name.ext" -out "$dir/$name.crt" 2>/dev/null
  rm -f "$dir/$name.csr" "$dir/$name.ext" "$dir/$ca.srl"
}

make_pki() {
  local dir=$1
  mkdir -p "$dir"
  chmod 700 "$dir"
  make_ca "$dir" ca restarter-test-ca
  # 10.96.0.1 is the first address of --service-cluster-ip-range: the `kubernetes` Service.
  # NODE_IP (run.sh) is the address the apiserver advertises: what the `kubernetes` Service's
  # endpoints point to, so what pods of the real node reach it at.
  issue_cert "$dir" apiserver "/CN=kube-apiserver" "$(cat <<EOF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:10.96.0.1,IP:$NODE_IP,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local
EOF
)"
  local client_ext='basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth'
  # The controller manager and scheduler users are bound to their roles by the apiserver's
  # bootstrap RBAC policy; admin and kwok are cluster admins.
  issue_cert "$dir" admin "/O=system:masters/CN=admin" "$client_ext"
  issue_cert "$dir" kwok "/O=system:masters/CN=kwok" "$client_ext"
  issue_cert "$dir" kube-controller-manager "/CN=system:kube-controller-manager" "$client_ext"
  issue_cert "$dir" kube-scheduler "/CN=system:kube-scheduler" "$client_ext"
  # Made at every `up` (a few milliseconds) so that the apiserver always has the flags a real node
  # needs, whether or not one is started.
  issue_cert "$dir" apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" "$client_ext"
  # Front proxy (request-header authentication for aggregated APIs): its own CA, as the
  # apiserver requires; without it every component logs "missing content for CA bundle".
  make_ca "$dir" front-proxy-ca restarter-test-front-proxy-ca
  issue_cert "$dir" front-proxy-client "/CN=front-proxy-client" "$client_ext" front-proxy-ca
  # What the apiserver presents to admission webhooks (run.sh write_admission_config): its own
  # CA, so a webhook that trusts it trusts no other client of the cluster CA.
  make_ca "$dir" webhook-client-ca restarter-test-webhook-client-ca
  issue_cert "$dir" apiserver-webhook-client "/CN=kube-apiserver-webhook-client" "$client_ext" webhook-client-ca
  openssl genrsa -out "$dir/sa.key" 2048 2>/dev/null
  openssl rsa -in "$dir/sa.key" -pubout -out "$dir/sa.pub" 2>/dev/null
}

# The real node's certificates (lib/node.sh), in <dir> beside the cluster CA:
#   kubelet.crt/.key          the kubelet's client certificate: user system:node:<node>, group
#                             system:nodes, what the Node authorizer and NodeRestriction expect
#   kubelet-serving.crt/.key  the kubelet's serving certificate (port 10250), signed by the CA
#   kube-proxy.crt/.key       user system:kube-proxy, bound to system:node-proxier by the
#                             apiserver's bootstrap RBAC policy
#   make_node_pki <dir> <node name> <node ip>
make_node_pki() {
  local dir=$1 node=$2 ip=$3 client_ext='basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth'
  issue_cert "$dir" kubelet "/O=system:nodes/CN=system:node:$node" "$client_ext"
  issue_cert "$dir" kubelet-serving "/CN=$node" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:$ip,DNS:$node"
  issue_cert "$dir" kube-proxy "/CN=system:kube-proxy" "$client_ext"
}

# Write a kubeconfig for <user> with the certificates embedded, so it stays valid when copied
# (kuttl, for one, copies it into its working directory).
#   make_kubeconfig <pki dir> <user> <server url> <output file>
make_kubeconfig() {
  local dir=$1 user=$2 server=$3 out=$4
  cat >"$out" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: restarter-$CLUSTER_NAME
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 <"$dir/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 <"$dir/$user.crt")
    client-key-data: $(base64 -w0 <"$dir/$user.key")
contexts:
- name: restarter-$CLUSTER_NAME
  context:
    cluster: restarter-$CLUSTER_NAME
    user: $user
    namespace: default
current-context: restarter-$CLUSTER_NAME
EOF
  chmod 600 "$out"
}
