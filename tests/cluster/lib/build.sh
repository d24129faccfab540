# shellcheck shell=bash
# `cluster.sh build`: installs missing host tools and builds every pinned tool from the Go module
# proxy into the cache (see common.sh for the layout). Sourced, never executed.
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

# --- one function per tool: build_<tool> <module dir> <output bin dir> ---------------------------

# Render the tools module of tool $2 (k8s or kubenode: both require k8s.io/kubernetes) into $1,
# replace its staging modules with their published versions, and set K8S_LDFLAGS to the version
# stamp. Both tools get the same requirements, so the same build list.
k8s_tools_module() {
  local mod=$1 tool=$2 gomod minor patch staging=() name
  render_module "$tool" "$mod"
  gomod=$(module_field "k8s.io/kubernetes@$K8S_VERSION" GoMod)
  [[ -f $gomod ]] || die "no go.mod found for k8s.io/kubernetes@$K8S_VERSION"
  # Staging modules: every k8s.io/<name> that k8s.io/kubernetes requires at v0.0.0.
  mapfile -t staging < <(sed -n 's/^[[:space:]]*\(k8s\.io\/[^[:space:]]*\) v0\.0\.0\([[:space:]].*\)\{0,1\}$/\1/p' "$gomod")
  ((${#staging[@]} > 0)) || die "found no staging modules in $gomod"
  IFS=. read -r _ minor patch <<<"${K8S_VERSION#v}"
  local edits=()
  for name in "${staging[@]}"; do edits+=(-replace="$name=$name@v0.$minor.$patch"); done
  (cd "$mod" && go_env go mod edit "${edits[@]}")
  log "$tool: replaced ${#staging[@]} staging modules with v0.$minor.$patch"
  # Stamp the version like Kubernetes' hack/lib/version.sh does, so `kubectl version` and /version
  # are truthful. buildDate is the module's publication time, so the build is reproducible.
  local date
  date=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "${gomod%.mod}.info")
  K8S_LDFLAGS="-s -w"
  for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    K8S_LDFLAGS+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
    K8S_LDFLAGS+=" -X $pkg.gitTreeState=archive -X $pkg.buildDate=$date"
  done
}

build_k8s() {
  local mod=$1 out=$2
  k8s_tools_module "$mod" k8s
  # One invocation: the four commands share most packages.
  (cd "$mod" && go_env go build -trimpath -ldflags="$K8S_LDFLAGS" -o "$out/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
}

# The real node's kubelet and kube-proxy: the same module and flags as build_k8s, so what they share
# with the control plane (client-go, apimachinery, ...) comes from the Go build cache.
build_kubenode() {
  local mod=$1 out=$2
  k8s_tools_module "$mod" kubenode
  (cd "$mod" && go_env go build -trimpath -ldflags="$K8S_LDFLAGS" -o "$out/" \
    k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy)
}

# containerd 2, its runc shim and ctr, static. Tags as containerd's Makefile sets them, and:
# no_btrfs (its snapshotter needs cgo and btrfs headers), no_zfs and no_devmapper (snapshotters the
# node does not use; overlayfs is the one). The shim gets no_grpc as in the Makefile (it speaks ttrpc).
build_containerd() {
  local mod=$1 out=$2 pkg=github.com/containerd/containerd/v2 flags tags
  render_module containerd "$mod"
  flags="-s -w -X $pkg/version.Version=$CONTAINERD_VERSION -X $pkg/version.Revision=module"
  flags+=" -X $pkg/version.Package=github.com/containerd/containerd"
  tags="urfave_cli_no_docs no_btrfs no_zfs no_devmapper"
  (cd "$mod" && go_env go build -trimpath -tags "$tags" -ldflags="$flags" -o "$out/" \
    "$pkg/cmd/containerd" "$pkg/cmd/ctr")
  (cd "$mod" && go_env go build -trimpath -tags "$tags no_grpc" -ldflags="$flags" -o "$out/" \
    "$pkg/cmd/containerd-shim-runc-v2")
}

build_etcd() {
  local mod=$1 out=$2
  render_module etcd "$mod"
  (cd "$mod" && go_env go build -trimpath -ldflags="-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3)
}

build_kwok() {
  local mod=$1 out=$2 dir
  render_module kwok "$mod"
  (cd "$mod" && go_env go build -trimpath -ldflags="-s -w" -o "$out/" sigs.k8s.io/kwok/cmd/kwok)
  # Stages: kwok >= v0.8 has none built in. Take these from the module's own kustomize tree:
  # node initialize + heartbeat (Nodes become Ready and stay so) and pod ready (Running/Ready).
  # Pod delete is our own (tests/cluster/kwok/pod-delete.yaml), added by `up`.
  dir=$(module_field "sigs.k8s.io/kwok@$KWOK_VERSION" Dir)
  local stage
  : >"$out/kwok-stages.yaml"
  for stage in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
               pod/fast/pod-ready; do
    [[ -f $dir/kustomize/stage/$stage.yaml ]] \
      || die "kwok $KWOK_VERSION ships no stage $stage.yaml under $dir/kustomize/stage"
    { echo '---'; cat "$dir/kustomize/stage/$stage.yaml"; } >>"$out/kwok-stages.yaml"
  done
}

build_kuttl() {
  local mod=$1 out=$2
  render_module kuttl "$mod"
  # Stamp the version as kuttl's Makefile does (without the "v"), else `version` says "dev".
  local pkg=github.com/kudobuilder/kuttl/internal/version
  (cd "$mod" && go_env go build -trimpath \
    -ldflags="-s -w -X $pkg.gitVersion=${KUTTL_VERSION#v} -X $pkg.gitCommit=$KUTTL_VERSION" -o "$out/" \
    github.com/kudobuilder/kuttl/cmd/kubectl-kuttl)
}

# krew and validate-krew-manifest, the validator krew-index's CI runs on a submitted manifest.
build_krew() {
  local mod=$1 out=$2
  render_module krew "$mod"
  (cd "$mod" && go_env go get sigs.k8s.io/krew/cmd/validate-krew-manifest@"$KREW_VERSION" &&
    go_env go build -trimpath -ldflags="-s -w" -o "$out/" sigs.k8s.io/krew/cmd/krew \
      sigs.k8s.io/krew/cmd/validate-krew-manifest)
}

# cosign, stamped as its Makefile does (sigs.k8s.io/release-utils), else `cosign version` says devel.
build_cosign() {
  local mod=$1 out=$2 pkg=sigs.k8s.io/release-utils/version
  render_module cosign "$mod"
  (cd "$mod" && go_env go build -trimpath \
    -ldflags="-s -w -X $pkg.gitVersion=$COSIGN_VERSION -X $pkg.gitTreeState=archive" -o "$out/" \
    github.com/sigstore/cosign/v3/cmd/cosign)
}

# The registry, stamped as distribution's Makefile does.
build_registry() {
  local mod=$1 out=$2 pkg=github.com/distribution/distribution/v3/version
  render_module registry "$mod"
  (cd "$mod" && go_env go build -trimpath \
    -ldflags="-s -w -X $pkg.version=$REGISTRY_VERSION -X $pkg.mainpkg=github.com/distribution/distribution/v3" \
    -o "$out/" github.com/distribution/distribution/v3/cmd/registry)
}

build_helm() {
  local mod=$1 out=$2 client_go major minor flags
  render_module helm "$mod"
  # Stamp as helm's Makefile does: the version (else `helm version` says only "v3.22"), and the
  # Kubernetes version that `helm template` and `helm lint` assume offline, derived from the
  # client-go the module resolves (v0.37.x -> 1.37).
  client_go=$(cd "$mod" && go_env go list -m -f '{{.Version}}' k8s.io/client-go) \
    || die "could not resolve k8s.io/client-go in the helm tools module"
  IFS=. read -r major minor _ <<<"${client_go#v}"
  major=$((major + 1))
  flags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
  flags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=archive"
  for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    flags+=" -X $pkg.k8sVersionMajor=$major -X $pkg.k8sVersionMinor=$minor"
  done
  (cd "$mod" && go_env go build -trimpath -ldflags="$flags" -o "$out/" helm.sh/helm/v3/cmd/helm)
}

build_fluxssa() {
  local mod=$1 out=$2
  render_module fluxssa "$mod"
  cp "$CLUSTER_DIR/tools/fluxssa/main.go" "$mod/"
  (cd "$mod" && go_env go build -trimpath -ldflags="-s -w" -o "$out/fluxssa" .)
}

# Argo Rollouts' Rollout CRD as its module ships it, into $out/argo-rollouts-crd.yaml; nothing is
# built. The module's go line (>= 1.26.10) is newer than the Go the control plane needs, and the go
# command refuses to extract such a module; it still downloads the zip, verified against the
# checksum database like every download, and reports it in its JSON: the file is read from there.
build_argorollouts() {
  local mod=$1 out=$2 path=github.com/argoproj/argo-rollouts@$ARGOROLLOUTS_VERSION json zip
  render_module argorollouts "$mod"
  json=$(go_env go mod download -json "$path") || true
  zip=$(sed -n 's/^[[:space:]]*"Zip": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")
  [[ -n $zip && -f $zip ]] || die "go mod download $path gave no module zip: $json"
  grep -q '"Sum": "h1:' <<<"$json" || die "go mod download $path gave no checksum: $json"
  unzip -p "$zip" "$path/manifests/crds/rollout-crd.yaml" >"$out/argo-rollouts-crd.yaml" ||
    die "$path has no manifests/crds/rollout-crd.yaml"
  grep -q '^  name: rollouts.argoproj.io$' "$out/argo-rollouts-crd.yaml" ||
    die "$path's manifests/crds/rollout-crd.yaml is not the Rollout CRD"
}

# kube-router's one command; the node runs only its policy controller (lib/netpol.sh). Stamped as
# its Makefile does, so that `kube-router --version` is truthful.
build_kuberouter() {
  local mod=$1 out=$2 pkg=github.com/cloudnativelabs/kube-router/v2
  render_module kuberouter "$mod"
  (cd "$mod" && go_env go build -trimpath \
    -ldflags="-s -w -X $pkg/pkg/version.Version=$KUBEROUTER_VERSION -X $pkg/pkg/version.BuildDate=module" \
    -o "$out/" "$pkg/cmd/kube-router")
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
