# shellcheck shell=bash
# `cluster.sh build`: installs missing host tools and builds every pinned tool from the Go module
# proxy into the cache (see common.sh for the layout), each by its recipe (recipes.sh), and links
# them into $BIN_DIR. Sourced, never executed.
#
# Contract: after build_all returns, $BIN_DIR holds etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl and kwok, and $KWOK_STAGES exists; and, unless
# RESTARTER_CLUSTER_CONTROL_PLANE_ONLY=1, the tests' tools (EXTRA_TOOLS: kubectl-kuttl, krew, helm,
# fluxssa, the Rollout CRD). A warm run (everything
# cached) does no Go work at all and takes well under a second.

# Debian packages providing the host commands that cluster.sh uses.
# jq is used by the kuttl suites (kuttl/lib/pod-events.sh).
# unzip reads Argo Rollouts' CRD from its module zip (build_argorollouts).
declare -A HOST_TOOL_PACKAGE=([ip]=iproute2 [openssl]=openssl [setsid]=util-linux [flock]=util-linux [jq]=jq
  [unzip]=unzip)

# Install any missing host command through apt-get (as root, or via sudo).
ensure_host_tools() {
  local missing=() cmd
  for cmd in "${!HOST_TOOL_PACKAGE[@]}"; do
    command -v "$cmd" >/dev/null || missing+=("${HOST_TOOL_PACKAGE[$cmd]}")
  done
  apt_install "${missing[@]}"
}

# Install the given Debian packages (duplicates allowed) through apt-get; nothing when none given.
apt_install() {
  (($#)) || return 0
  local missing
  mapfile -t missing < <(printf '%s\n' "$@" | sort -u)
  log "installing missing Debian packages: ${missing[*]}"
  command -v apt-get >/dev/null || die "missing commands from ${missing[*]} and no apt-get to install them"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Fail clearly unless a Go toolchain at least as new as the tools modules' `go` line is on PATH.
ensure_go() {
  local need=1.26 have
  command -v go >/dev/null || die "go is not on PATH; Go >= $need is needed to build the control plane"
  have=$(go env GOVERSION) || die "'go env GOVERSION' failed"
  have=${have#go}
  if [[ $(printf '%s\n%s\n' "$need" "$have" | sort -V | head -n1) != "$need" ]]; then
    die "Go $have is too old; Go >= $need is needed to build the control plane"
  fi
}

# Environment for every go command here: module mode, no workspace, never switch toolchains
# (which would download one), static binaries (no C compiler needed).
go_env() {
  env GOWORK=off GOTOOLCHAIN=local GOFLAGS=-mod=mod CGO_ENABLED=0 "$@"
}

# Write the tools module of tool $1 into directory $2 (created), versions filled in.
render_module() {
  mkdir -p "$2"
  rendered_module "$1" >"$2/go.mod"
}

# Print the field $2 ("Dir", "GoMod", ...) of `go mod download -json $1` (downloading it if needed).
module_field() {
  local json
  json=$(go_env go mod download -json "$1") || die "go mod download $1 failed"
  sed -n "s/^[[:space:]]*\"$2\": \"\(.*\)\",\{0,1\}\$/\1/p" <<<"$json"
}

# Build one tool into $CACHE_ROOT/tools/<tool>-<version>-<key> unless already complete.
# The work happens in a temporary sibling that is renamed into place, so an interrupted build
# leaves nothing that looks complete.
build_tool() {
  local tool=$1 version=$2 dir tmp start
  dir="$CACHE_ROOT/tools/$tool-$version-${TOOL_KEY[$tool]}"
  [[ -f $dir/.complete ]] && { echo "$dir"; return 0; }
  tmp="$dir.tmp.$$"
  rm -rf "$dir".tmp.*     # leftovers of an interrupted build (we hold the cache lock)
  mkdir -p "$tmp/bin"
  start=$SECONDS
  log "building $tool $version (log: $tmp/build.log)"
  if ! "build_$tool" "$tmp/mod" "$tmp/bin" >"$tmp/build.log" 2>&1; then
    tail -n 40 "$tmp/build.log" >&2
    die "building $tool $version failed; full log: $tmp/build.log"
  fi
  echo "$((SECONDS - start))" >"$tmp/build-seconds"
  touch "$tmp/.complete"
  rm -rf "$dir"
  mv "$tmp" "$dir"
  log "built $tool $version in $((SECONDS - start))s"
  echo "$dir"
}

# Build (or reuse) every tool and link them into $BIN_DIR. Serialised by a lock so that two
# clusters coming up at once do not build twice.
build_all() {
  ensure_host_tools
  if [[ -f $CACHE_ROOT/$VERSIONS_KEY/.complete ]]; then
    link_extra_tools
    echo "$BIN_DIR"
    return 0
  fi
  ensure_go
  mkdir -p "$CACHE_ROOT"
  exec 9>"$CACHE_ROOT/.lock"
  flock 9
  local k8s etcd kwok pids=() f failed=0
  # All three at once: downloads overlap, and etcd and kwok compile while the (much larger)
  # Kubernetes build runs. Each writes its own log; build_tool reports failures.
  build_tool k8s "$K8S_VERSION" >/dev/null & pids+=($!)
  build_tool etcd "$ETCD_VERSION" >/dev/null & pids+=($!)
  build_tool kwok "$KWOK_VERSION" >/dev/null & pids+=($!)
  for f in "${pids[@]}"; do wait "$f" || failed=1; done
  ((failed == 0)) || die "building the control plane failed (see above)"
  k8s=$(build_tool k8s "$K8S_VERSION")
  etcd=$(build_tool etcd "$ETCD_VERSION")
  kwok=$(build_tool kwok "$KWOK_VERSION")
  mkdir -p "$BIN_DIR"
  for f in "$k8s"/bin/* "$etcd"/bin/*; do ln -sfn "$f" "$BIN_DIR/"; done
  ln -sfn "$kwok/bin/kwok" "$BIN_DIR/kwok"
  cp "$kwok/bin/kwok-stages.yaml" "$KWOK_STAGES"
  touch "$CACHE_ROOT/$VERSIONS_KEY/.complete"
  flock -u 9
  exec 9>&-           # not inherited by the components `up` starts next
  link_extra_tools
  echo "$BIN_DIR"
}

# Build (or reuse) each of EXTRA_TOOLS and link it into $BIN_DIR; quick when all are cached.
# Nothing with RESTARTER_CLUSTER_CONTROL_PLANE_ONLY=1.
link_extra_tools() {
  [[ ${RESTARTER_CLUSTER_CONTROL_PLANE_ONLY:-0} == 1 ]] && return 0
  link_tools "${EXTRA_TOOLS[@]}"
}

# Build (or reuse) each tool named and link its binaries into $BIN_DIR, under the cache lock.
link_tools() {
  local tool version dir f
  for tool in "$@"; do
    [[ -n ${TOOL_KEY[$tool]:-} ]] || die "no pinned tool '$tool' (tools/ has: ${!TOOL_KEY[*]})"
    version=$(tool_version "$tool")
    dir="$CACHE_ROOT/tools/$tool-$version-${TOOL_KEY[$tool]}"
    if [[ ! -f $dir/.complete ]]; then
      ensure_go
      mkdir -p "$CACHE_ROOT"
      exec 9>"$CACHE_ROOT/.lock"
      flock 9
      dir=$(build_tool "$tool" "$version")
      flock -u 9
      exec 9>&-
    fi
    mkdir -p "$BIN_DIR"
    for f in "$dir"/bin/*; do ln -sfn "$f" "$BIN_DIR/"; done
  done
}

# Build (or reuse) the real node's tools (NODE_TOOLS) and link them into $BIN_DIR. Built at once,
# like the control plane: containerd compiles while the kubelet does.
build_node_tools() {
  local tool pids=() pid failed=0 missing=()
  for tool in "${NODE_TOOLS[@]}"; do
    [[ -f $CACHE_ROOT/tools/$tool-$(tool_version "$tool")-${TOOL_KEY[$tool]}/.complete ]] || missing+=("$tool")
  done
  if ((${#missing[@]})); then
    ensure_go
    mkdir -p "$CACHE_ROOT"
    exec 9>"$CACHE_ROOT/.lock"
    flock 9
    for tool in "${missing[@]}"; do
      build_tool "$tool" "$(tool_version "$tool")" >/dev/null & pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    flock -u 9
    exec 9>&-
    ((failed == 0)) || die "building the real node's tools failed (see above)"
  fi
  link_tools "${NODE_TOOLS[@]}"
}
