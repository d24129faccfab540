# shellcheck shell=bash
# The build recipe of each pinned tool, one function per tool: build_<tool> MODULE_DIR OUT_BIN_DIR
# renders the tool's module (tools/<tool>/go.mod.in) into MODULE_DIR and builds its binaries (or
# copies its files) into OUT_BIN_DIR, stamped as the tool's own Makefile stamps them. build.sh's
# build_tool calls them into the cache. A change here that changes what a tool is built as needs
# RECIPE_REVISION bumped (versions.env). Sourced, never executed. Uses common.sh and build.sh.

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
