#!/usr/bin/env bash
# Releases restarter as users install it (docs/release.md): from a clean checkout, without a
# container daemon, the version of the VERSION file (the one place it is written) as
#   - an OCI image index of linux/amd64 and linux/arm64 images of the Dockerfile (arm64
#     cross-compiled in its build stage), with OCI labels, pushed to REGISTRY/restarter, the tag
#     last;
#   - a CycloneDX SBOM per image (cmd/release/sbom.py), attached as a cosign attestation;
#   - cosign signatures by digest on each image and the index, and on the chart;
#   - the Helm chart, packaged with the version and the index's digest, pushed to
#     oci://REGISTRY/charts;
#   - Krew archives for linux/amd64 and linux/arm64 and the filled Krew manifest (krew/package.sh);
#   - the kustomize tree with the image by digest (restarter-manifests-VERSION.tar.gz);
#   - the release notes (the CHANGELOG's section), checksums.txt and release.json (every digest),
# all written to DIR (default dist/) before anything is pushed.
#
# Usage: cmd/release.sh --registry HOST[:PORT][/PATH] --key FILE --source-url URL [flags]
#   --registry R       where the images (R/restarter) and the chart (oci://R/charts) go
#   --registry-ca F    the CA bundle the registry's certificate is signed by (default: the system's)
#   --key FILE         cosign's private key (cosign generate-key-pair); its password in
#                      COSIGN_PASSWORD. Signatures are key-based and go to no transparency log
#                      (docs/release.md says what a public CI does instead)
#   --source-url URL   the project's public repository (https): the images' source label and
#                      the Krew manifest's homepage
#   --krew-url-base U  where the Krew archives will be published (default:
#                      SOURCE-URL/releases/download/vVERSION)
#   --version V        refuse unless VERSION holds V (a maintainer's check that they tag what
#                      they mean)
#   --platforms P      default linux/amd64,linux/arm64
#   --out DIR          default dist/ of this checkout; emptied first
#   --no-push          build DIR only: sign and push nothing (the names still say --registry)
#   --publish DIR      push, sign and tag what a --no-push run built into DIR (its checksums are
#                      checked first): building where the Debian archive is reachable, publishing
#                      where the registry and the key are, as CI jobs split it
#   --allow-dirty      release a checkout with uncommitted changes (tests only: the revision is
#                      then not what was built)
# Exit status: 0 released; 1 a step failed (its name is said, and nothing was tagged); 2 the
# command line is wrong. Needs root (buildah, as tests/image/build.sh), git, and for what is not on
# PATH: cosign and helm are built from their Go modules by tests/cluster (cluster.sh build-tools),
# skopeo comes from Debian, sbom.py's library from PyPI into a virtual environment.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
here=$repo/cmd/release
usage() { sed -n '/^# Usage:/,/^# Exit status/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }
usage_error() { echo "release: $* (try --help)" >&2; exit 2; }
log() { echo "release: $*" >&2; }
current_step="arguments"
die() { echo "release: step '$current_step' failed: $*" >&2; exit 1; }
trap 'echo "release: step '"'"'$current_step'"'"' failed (a command exited $? at line $LINENO); nothing was tagged" >&2' ERR
step() { current_step=$1; log "== $1"; }

registry="" registry_ca="" key="" source_url="" krew_url_base="" want_version=""
platforms=linux/amd64,linux/arm64 out=$repo/dist push=1 allow_dirty=0 publish=0
while (($#)); do
  case $1 in
    --registry) registry=${2:-}; shift 2 || usage_error "--registry needs a value" ;;
    --registry-ca) registry_ca=${2:-}; shift 2 || usage_error "--registry-ca needs a file" ;;
    --key) key=${2:-}; shift 2 || usage_error "--key needs a file" ;;
    --source-url) source_url=${2:-}; shift 2 || usage_error "--source-url needs a URL" ;;
    --krew-url-base) krew_url_base=${2:-}; shift 2 || usage_error "--krew-url-base needs a URL" ;;
    --version) want_version=${2:-}; shift 2 || usage_error "--version needs a value" ;;
    --platforms) platforms=${2:-}; shift 2 || usage_error "--platforms needs a value" ;;
    --out) out=${2:-}; shift 2 || usage_error "--out needs a directory" ;;
    --no-push) push=0; shift ;;
    --publish) publish=1; out=${2:-}; shift 2 || usage_error "--publish needs the directory a --no-push run wrote" ;;
    --allow-dirty) allow_dirty=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage_error "unknown argument $1" ;;
  esac
done

# --- checks: nothing is built before the inputs are right ----------------------------------------
step "checks"
((!publish || push)) || usage_error "--publish and --no-push exclude each other"
[[ $registry =~ ^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._/-]+)?$ ]] || usage_error "--registry must be HOST[:PORT][/PATH], got '$registry'"
if ((publish)); then
  [[ -f $out/release.json && -f $out/checksums.txt ]] || usage_error "--publish $out: no release.json and checksums.txt (a --no-push run's output)"
  (cd "$out" && sha256sum --quiet -c checksums.txt) || die "$out does not match its checksums.txt"
  version=$(jq -r .version "$out/release.json")
  [[ $(jq -r .image "$out/release.json") == "$registry/restarter" ]] ||
    usage_error "$out was built for $(jq -r .image "$out/release.json"), not --registry $registry"
  source_url=$(jq -r .source "$out/release.json")
  revision=$(jq -r .revision "$out/release.json")
fi
version=${version:-$(head -n1 "$repo/VERSION")}
[[ $version =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$ ]] ||
  usage_error "VERSION holds '$version', not a semantic version (MAJOR.MINOR.PATCH[-PRERELEASE])"
[[ -z $want_version || $want_version == "$version" || $want_version == "v$version" ]] ||
  usage_error "--version $want_version, but VERSION holds $version: bump VERSION in a commit first"
[[ $source_url =~ ^https://[^[:space:]]+$ ]] || usage_error "--source-url must be the project's https URL, got '${source_url}'"
source_url=${source_url%/}
krew_url_base=${krew_url_base:-$source_url/releases/download/v$version}
[[ $krew_url_base =~ ^https://[^[:space:]]+$ ]] || usage_error "--krew-url-base must be https, got '$krew_url_base'"
IFS=, read -r -a platform_list <<<"$platforms"
for platform in "${platform_list[@]}"; do
  [[ $platform == linux/amd64 || $platform == linux/arm64 ]] || usage_error "--platforms: linux/amd64 and linux/arm64, not $platform"
done
if ((push)); then
  [[ -n $key ]] || usage_error "--key is required (cosign's private key), or --no-push"
  [[ -f $key ]] || usage_error "--key $key: no such file"
  [[ -z $registry_ca || -f $registry_ca ]] || usage_error "--registry-ca $registry_ca: no such file"
  [[ -n ${COSIGN_PASSWORD+set} ]] || usage_error "COSIGN_PASSWORD is not set (empty for a key without a password)"
fi
[[ $(id -u) -eq 0 ]] || die "run it as root (buildah's storage, as tests/image/build.sh)"
if ((!publish)); then
git -C "$repo" rev-parse --git-dir >/dev/null 2>&1 || die "$repo is not a git checkout: a release names its commit"
dirty=$(git -C "$repo" status --porcelain --untracked-files=normal)
if [[ -n $dirty ]]; then
  ((allow_dirty)) || die "the checkout has uncommitted changes; a release is built from a commit:
$dirty"
  log "warning: releasing a dirty checkout (--allow-dirty): the revision does not name what was built"
fi
revision=$(git -C "$repo" rev-parse HEAD)
created_epoch=$(git -C "$repo" show -s --format=%ct HEAD)
created=$(date -u -d "@$created_epoch" +%Y-%m-%dT%H:%M:%SZ)
notes=$(awk -v v="$version" '
  $0 ~ "^## " { if (found) exit; found = ($2 == v || $2 == "v" v) ; next }
  found { print }' "$repo/CHANGELOG.md")
[[ -n ${notes//[[:space:]]/} ]] || die "CHANGELOG.md has no section '## $version': write the release notes first"
fi
image_repo=$registry/restarter
chart_repo=$registry/charts

# Registry access: the CA for every client, and its state before anything is pushed.
certs=$(mktemp -d "${TMPDIR:-/tmp}/release-certs.XXXXXX")
trap 'rm -rf "$certs"' EXIT
curl_args=(-sS --max-time 20)
if [[ -n $registry_ca ]]; then
  cp "$registry_ca" "$certs/ca.crt"
  curl_args+=(--cacert "$registry_ca")
fi
registry_host=${registry%%/*}
registry_path=${registry#"$registry_host"}
# manifest_digest REPO REF: the digest the registry serves REPO:REF as, empty when absent.
manifest_digest() {
  local headers code
  headers=$(curl "${curl_args[@]}" -o /dev/null -D - -w '%{http_code}' --head \
    -H 'Accept: application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.list.v2+json, application/vnd.docker.distribution.manifest.v2+json' \
    "https://$registry_host/v2${registry_path}/$1/manifests/$2") || die "the registry at https://$registry_host does not answer"
  code=${headers##*$'\n'}
  case $code in
    200) sed -n 's/^[Dd]ocker-[Cc]ontent-[Dd]igest: *\(sha256:[0-9a-f]*\).*/\1/p' <<<"$headers" ;;
    404) ;;
    *) die "the registry answered $code for $1:$2" ;;
  esac
}
existing_index="" existing_chart=""
if ((push)); then
  curl "${curl_args[@]}" -o /dev/null -f "https://$registry_host/v2/" ||
    die "the registry at https://$registry_host is not reachable (or its certificate is not trusted: --registry-ca)"
  existing_index=$(manifest_digest restarter "$version")
  existing_chart=$(manifest_digest charts/restarter "$version")
  [[ -z $existing_index ]] || log "$image_repo:$version exists ($existing_index): only the same build may be pushed again"
fi

# --- tools -----------------------------------------------------------------------------------------
step "tools"
tool_bin=""
need_tool() {  # need_tool NAME: on PATH, else built from its Go module by tests/cluster
  command -v "$1" >/dev/null && return 0
  [[ -n $tool_bin ]] || tool_bin=$("$repo/tests/cluster/cluster.sh" build-tools cosign helm krew) ||
    die "building cosign, helm and krew from their Go modules failed"
  PATH=$PATH:$tool_bin
  command -v "$1" >/dev/null || die "$1 is neither on PATH nor built by tests/cluster"
}
need_tool helm
((publish)) || need_tool validate-krew-manifest
((push == 0)) || need_tool cosign
for package in skopeo python3-venv binutils; do
  if [[ $(dpkg-query -W -f='${Status}' "$package" 2>/dev/null) != *'install ok installed'* ]]; then
    if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$package" >/dev/null; }; then
      die "apt-get install $package failed"
    fi
  fi
done
venv=${XDG_CACHE_HOME:-$HOME/.cache}/restarter/release-venv-$(sha256sum "$here/requirements.txt" | cut -c1-12)
if ((!publish)) && [[ ! -x $venv/bin/python ]]; then
  rm -rf "$venv.tmp"
  if ! { python3 -m venv "$venv.tmp" && "$venv.tmp/bin/pip" install --quiet --only-binary=:all: -r "$here/requirements.txt"; }; then
    rm -rf "$venv.tmp"
    die "installing cmd/release/requirements.txt from PyPI failed"
  fi
  mv "$venv.tmp" "$venv"
fi

if ((!publish)); then
  rm -rf "$out"
  mkdir -p "$out"
fi
out=$(cd "$out" && pwd)
# checksums.txt: the SHA-256 of every file of $out (the image's OCI layout has its own digests).
write_checksums() {
  local files
  files=$(cd "$out" && find . -maxdepth 1 -type f ! -name checksums.txt -printf '%f\n' | sort)
  (cd "$out" && xargs sha256sum <<<"$files" >"$certs/checksums.txt")
  mv "$certs/checksums.txt" "$out/checksums.txt"
}

# build_artifacts: everything a release is, written to $out (a --publish run reads it instead).
# shellcheck source=cmd/release/artifacts.sh
source "$here/artifacts.sh"


if ((publish)); then
  index_digest=$(jq -r .index "$out/release.json")
  mapfile -t platform_list < <(jq -r '.images[].platform' "$out/release.json")
  declare -A image_digest=()
  for platform in "${platform_list[@]}"; do
    image_digest[$platform]=$(jq -r --arg p "$platform" '.images[] | select(.platform == $p) | .digest' "$out/release.json")
  done
  chart=$out/restarter-$version.tgz
else
  build_artifacts
fi
[[ -z $existing_index || $existing_index == "$index_digest" ]] ||
  die "$image_repo:$version exists as $existing_index, this build is $index_digest: tags are immutable; release a new version"
# The chart's tag likewise; helm writes a new manifest (a creation time) at every push, so the same
# chart is recognised by its content, the layer, and then not pushed again.
chart_layer=sha256:$(sha256sum "$chart" | cut -d' ' -f1)
if [[ -n $existing_chart ]]; then
  pushed_layer=$(curl "${curl_args[@]}" -f -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
    "https://$registry_host/v2${registry_path}/charts/restarter/manifests/$existing_chart" | jq -r '.layers[0].digest') ||
    die "reading the pushed chart $chart_repo/restarter:$version failed"
  [[ $pushed_layer == "$chart_layer" ]] ||
    die "$chart_repo/restarter:$version exists with other content ($pushed_layer, this chart is $chart_layer): tags are immutable; release a new version"
fi

if ((push == 0)); then
  log "done (--no-push): $out holds the release of $version ($revision), index $index_digest; nothing pushed"
  exit 0
fi

# The push, the signatures and the tag.
# shellcheck source=cmd/release/push.sh
source "$here/push.sh"
