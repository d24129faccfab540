# shellcheck shell=bash
# The real node's registry: CNCF distribution's OCI registry (REGISTRY_VERSION, built from its Go
# module like the other tools), started with the real node and stopped with it, so that releases
# are pushed and pulled as users do (cmd/release.sh, kuttl/release-tests). Sourced, never executed.
# Uses common.sh, run.sh (start_process, wait_for), pki.sh (issue_cert), node.sh (NODE_DIR).
#
# Served at https://$REGISTRY_ADDR (the node's address, inside the cluster's network namespace)
# with a serving certificate of the cluster's CA ($PKI_DIR/ca.crt), no authentication (nothing
# outside the namespace reaches it), deletes allowed (a test may drop what it pushed), its storage
# in $NODE_DIR/registry (gone with the node). The node's containerd pulls from it through its
# ordinary registry host configuration: certs.d/<host:port>/hosts.toml naming that CA.
# Clients run inside the namespace and trust the same CA: `cluster.sh env` exports
# RESTARTER_CLUSTER_REGISTRY (host:port) and RESTARTER_CLUSTER_REGISTRY_CA (the CA file).

REGISTRY_PORT=5000
REGISTRY_ADDR="$NODE_IP:$REGISTRY_PORT"
REGISTRY_DIR="$NODE_DIR/registry"
# containerd's registry host configuration (config_path of its CRI image service).
CONTAINERD_CERTS_DIR="$NODE_DIR/containerd/certs.d"

write_registry_config() {
  mkdir -p "$REGISTRY_DIR/data"
  issue_cert "$PKI_DIR" registry "/CN=restarter-test-registry" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:$NODE_IP,IP:127.0.0.1"
  # http.secret: one instance, so any fixed value; set so that the registry does not warn.
  cat >"$REGISTRY_DIR/config.yml" <<EOF
version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: $REGISTRY_DIR/data
  delete:
    enabled: true
http:
  addr: $REGISTRY_ADDR
  secret: restarter-test-registry
  tls:
    certificate: $PKI_DIR/registry.crt
    key: $PKI_DIR/registry.key
  draintimeout: 5s
EOF
  mkdir -p "$CONTAINERD_CERTS_DIR/$REGISTRY_ADDR"
  cat >"$CONTAINERD_CERTS_DIR/$REGISTRY_ADDR/hosts.toml" <<EOF
server = "https://$REGISTRY_ADDR"

[host."https://$REGISTRY_ADDR"]
  capabilities = ["pull", "resolve"]
  ca = "$PKI_DIR/ca.crt"
EOF
}

start_registry() {
  write_registry_config
  start_process registry ip netns exec "$NETNS" "$BIN_DIR/registry" serve "$REGISTRY_DIR/config.yml"
  wait_for "registry serving at https://$REGISTRY_ADDR" registry registry_ready
}

# The registry answers its API's base endpoint over TLS with the cluster's CA.
registry_ready() {
  node_exec curl -sf --max-time 2 --cacert "$PKI_DIR/ca.crt" "https://$REGISTRY_ADDR/v2/" >/dev/null
}
