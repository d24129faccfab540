#!/usr/bin/env bash
# The release as CI proves it (tests/run.sh's release stages; docs/release.md): this checkout
# released with cmd/release.sh into the real node's registry, beside the previous release, for the
# suites of kuttl/kuttl-release.yaml to verify, install and upgrade.
#
# Usage: tests/release/stage.sh build     on this machine (Debian's archive reachable):
#            cmd/release.sh --no-push into build/release/dist, named for the node's registry; the
#            previous release (previous.env: its version and commit) built from its own commit, in a
#            worktree, with its own Dockerfile and chart
#        tests/release/stage.sh publish   inside the cluster's network namespace (cluster.sh exec,
#            which exports the registry's address and CA): a fresh cosign key pair
#            (build/release/cosign.{key,pub}), the previous release pushed (image and chart, unsigned,
#            as it was), then cmd/release.sh --publish of build/release/dist
# The suites read build/release/ (kuttl/lib/release.sh). Needs root (buildah). The source URL is a
# placeholder: no public repository is named by the tests.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
here=$repo/tests/release
work=$repo/build/release
log() { echo "release-stage: $*" >&2; }
die() { echo "release-stage: $*" >&2; exit 1; }
# shellcheck source=SCRIPTDIR/previous.env
source "$here/previous.env"
# The node's registry (tests/cluster/lib/registry.sh): its address is fixed, so the artifacts can
# be named before the cluster runs.
registry=${RESTARTER_CLUSTER_REGISTRY:-10.240.0.1:5000}
source_url=https://example.org/restarter
export COSIGN_PASSWORD=restarter-ci

build() {
  local tools
  local dirty=()
  mkdir -p "$work"
  # CI releases its clean clone as a maintainer would; a developer's run of tests/run.sh releases
  # the checkout as it is (cmd/release.sh says so).
  [[ -z $(git -C "$repo" status --porcelain --untracked-files=normal) ]] || dirty=(--allow-dirty)
  "$repo/cmd/release.sh" --no-push --registry "$registry" --source-url "$source_url" --out "$work/dist" "${dirty[@]}"
  # The previous release, from its commit.
  git -C "$repo" cat-file -e "$PREVIOUS_COMMIT^{commit}" 2>/dev/null ||
    die "the previous release's commit $PREVIOUS_COMMIT is not in this clone (a shallow clone?)"
  rm -rf "$work/previous"
  git -C "$repo" worktree prune
  git -C "$repo" worktree add --detach "$work/previous" "$PREVIOUS_COMMIT" >/dev/null
  "$repo/tests/image/build.sh" --context "$work/previous" --name "localhost/restarter-previous:$PREVIOUS_VERSION" \
    --no-export
  tools=$("$repo/tests/cluster/cluster.sh" build-tools helm)
  mkdir -p "$work/previous-dist"
  "$tools/helm" package "$work/previous/manifests/helm/restarter" --destination "$work/previous-dist" >/dev/null
  [[ -f $work/previous-dist/restarter-$PREVIOUS_VERSION.tgz ]] ||
    die "the previous commit's chart is not version $PREVIOUS_VERSION: $(ls "$work/previous-dist")"
  git -C "$repo" worktree remove --force "$work/previous"
  log "built: $work/dist (this checkout, $(head -n1 "$repo/VERSION")) and the previous release $PREVIOUS_VERSION"
}

publish() {
  [[ -n ${RESTARTER_CLUSTER_REGISTRY:-} ]] || die "run it through tests/cluster/cluster.sh exec (no registry in the environment)"
  local ca=$RESTARTER_CLUSTER_REGISTRY_CA certs
  rm -f "$work/cosign.key" "$work/cosign.pub"
  (cd "$work" && cosign generate-key-pair >/dev/null 2>&1) || die "cosign generate-key-pair failed"
  certs=$(mktemp -d)
  cp "$ca" "$certs/ca.crt"
  skopeo copy --quiet --dest-cert-dir "$certs" "containers-storage:localhost/restarter-previous:$PREVIOUS_VERSION" \
    "docker://$registry/restarter:$PREVIOUS_VERSION" || die "pushing the previous release's image failed"
  rm -rf "$certs"
  helm push "$work/previous-dist/restarter-$PREVIOUS_VERSION.tgz" "oci://$registry/charts" --ca-file "$ca" >/dev/null 2>&1 ||
    die "pushing the previous release's chart failed"
  "$repo/cmd/release.sh" --publish "$work/dist" --registry "$registry" --registry-ca "$ca" --key "$work/cosign.key"
  log "published: $registry/restarter:$PREVIOUS_VERSION and :$(jq -r .version "$work/dist/release.json") with their charts"
}

case ${1:-} in
  build) build ;;
  publish) publish ;;
  *) sed -n '/^# Usage:/,/^# The suites/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
