#!/usr/bin/env bash
# Builds restarter's container image from the repository's Dockerfile, as `docker build .` does,
# without a container daemon or a registry (as CI does), and exports it as an archive that
# containerd imports with its name.
#
# Usage: tests/image/build.sh [--tag TAG] [--output FILE] [--format oci|docker] [--no-smoke]
#                             [--check-import] [--refresh-base] [--platform linux/ARCH]
#                             [--name NAME] [--revision COMMIT] [--label KEY=VALUE]... [--timestamp EPOCH]
#                             [--no-export] [--context DIR]
#   --tag TAG       the image's tag; default: the tag manifests/kustomization.yaml deploys (dev)
#   --output FILE   the archive; default: build/image/restarter-TAG.tar in this checkout
#   --format oci    an oci-archive, layers gzipped (the default); docker: a docker-archive,
#                   uncompressed, for `docker load` older than Docker 25
#   --no-smoke      skip the smoke test of the built image
#   --check-import  then import the archive into a private containerd and check its name
#                   (tests/image/check-import.sh; about 10 s)
#   --refresh-base  make the base images anew from Debian's archive (tests/image/base.sh --refresh)
#   --platform P    linux/amd64 or linux/arm64 (default: this machine's): another architecture is
#                   cross-compiled in the build stage (the Dockerfile says how) and its runtime
#                   stage and smoke test run under qemu-user (installed and registered here)
#   --name NAME     the image's name in buildah's storage (default: docker.io/library/restarter:TAG)
#   --revision C    the commit, for `restarter version` (the Dockerfile's RESTARTER_REVISION)
#   --label K=V     an image label (repeatable; cmd/release.sh sets the OCI ones)
#   --timestamp E   the image's created time and its files' times, in epoch seconds (a release
#                   uses its commit's time, so two builds of one commit are alike)
#   --no-export     no archive (the release pushes from buildah's storage)
#   --context DIR   build DIR/Dockerfile in DIR instead of this checkout's (another commit's
#                   worktree: the previous release, tests/release/stage.sh)
# Output: the image docker.io/library/restarter:TAG (what the manifests' `restarter:TAG` means) in
# buildah's storage (`buildah images`), and FILE, whose reference is that name:
#   ctr -n k8s.io images import FILE          (tests/cluster/cluster.sh load-image FILE)
#   podman load -i FILE, docker load -i FILE  (docker-archive before Docker 25)
# Needs root (as CI runs). Exit status: non-zero when a step failed. Each build leaves its
# superseded layers (some MB after a source change; the whole chain, about 700 MB, after the base
# images change) in buildah's storage: `buildah rmi --prune` drops unused ones; to start from cold,
# `buildah rmi --all --force && rm -rf /var/tmp/buildah-cache ~/.cache/restarter/images`.
#
# Steps:
#   1. Installs what it needs when missing, with apt-get: buildah and mmdebstrap (Debian's).
#   2. Makes or reuses the base images debian:bookworm and debian:bookworm-slim
#      (tests/image/base.sh: from Debian's packages with mmdebstrap, cached outside the work tree).
#   3. buildah build of the Dockerfile with --pull=never (the base images are local), host
#      networking for the RUN steps (they apt-get from this machine's Debian archive), --layers
#      (each step's result is reused until its inputs change) and the Dockerfile's cache mounts
#      (apt, ccache; buildah keeps them in /var/tmp/buildah-cache): a warm run takes seconds, one
#      after a source change recompiles only what changed.
#   4. Smoke test: in the image, `restarter --help` runs as the image's user and ldd resolves every
#      shared library; the user is 65532 and the entrypoint the binary.
#   5. Exports the archive (buildah push); with --check-import, imports it as a node would.
#
# The builder is buildah, not podman (both Debian 12 packages, the same build code: podman build is
# buildah 1.28 inside): buildah is the builder alone, without podman's conmon, networks and
# service machinery, and its from/mount/run/push cover the base images' import, the smoke test and
# the export. RUN steps use buildah's chroot isolation (BUILDAH_ISOLATION=chroot, as buildah's own
# images do for builds inside CI jobs): it needs no OCI runtime and no cgroups, where crun refuses
# this machine's hybrid cgroup v1/v2 layout ("cgroups in hybrid mode not supported").
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
usage() { sed -n '/^# Usage:/,/^#   podman load/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
log() { echo "image: $*" >&2; }

tag=
output=
format=oci
smoke=1
check_import=0
base_args=()
platform=linux/$(dpkg --print-architecture)
name=
extra_args=()
export_archive=1
context=$repo
while (($#)); do
  case $1 in
    --tag) tag=${2:?--tag TAG}; shift 2 ;;
    --platform) platform=${2:?--platform linux/ARCH}; shift 2 ;;
    --name) name=${2:?--name NAME}; shift 2 ;;
    --revision) extra_args+=(--build-arg "RESTARTER_REVISION=${2:?--revision COMMIT}"); shift 2 ;;
    --label) extra_args+=(--label "${2:?--label KEY=VALUE}"); shift 2 ;;
    --timestamp) extra_args+=(--timestamp "${2:?--timestamp EPOCH}"); shift 2 ;;
    --no-export) export_archive=0; shift ;;
    --context) context=$(cd "${2:?--context DIR}" && pwd); shift 2 ;;
    --output) output=${2:?--output FILE}; shift 2 ;;
    --format) format=${2:?--format oci|docker}; shift 2 ;;
    --no-smoke) smoke=0; shift ;;
    --check-import) check_import=1; shift ;;
    --refresh-base) base_args=(--refresh); shift ;;
    -h | --help) usage; exit 0 ;;
    *) log "unknown argument $1"; usage >&2; exit 2 ;;
  esac
done
[[ $format == oci || $format == docker ]] || { usage >&2; exit 2; }
build_arch=$(dpkg --print-architecture)
target_arch=${platform#linux/}
[[ $platform == linux/amd64 || $platform == linux/arm64 ]] || { log "--platform: linux/amd64 or linux/arm64, not $platform"; exit 2; }
[[ $(id -u) -eq 0 ]] || { log "run it as root (mmdebstrap --mode=root, buildah's storage in /var/lib/containers)"; exit 1; }
if [[ -z $tag ]]; then
  tag=$(awk '$1 == "newTag:" { print $2; exit }' "$repo/manifests/kustomization.yaml")
  [[ -n $tag ]] || tag=$(awk '$1 == "appVersion:" { gsub(/"/, "", $2); print $2; exit }' "$repo/manifests/helm/restarter/Chart.yaml")
  [[ -n $tag ]] || { log "no tag in manifests/kustomization.yaml or the chart: pass --tag"; exit 1; }
fi
ref=${name:-docker.io/library/restarter:$tag}
output=${output:-$repo/build/image/restarter-$tag.tar}
export BUILDAH_ISOLATION=${BUILDAH_ISOLATION:-chroot}
start=$SECONDS
step() { log "$* (at $((SECONDS - start)) s)"; }

# 1. The tools; for another architecture, the emulator its runtime stage and smoke test run under
# (qemu-user-static registers itself with binfmt_misc, with the F flag: usable inside a chroot) and
# arch-test (mmdebstrap's check that the emulation works).
tools=(buildah mmdebstrap)
[[ $target_arch == "$build_arch" ]] || tools+=(qemu-user-static arch-test)
missing=()
for package in "${tools[@]}"; do
  [[ $(dpkg-query -W -f='${Status}' "$package" 2>/dev/null) == *'install ok installed'* ]] || missing+=("$package")
done
if ((${#missing[@]})); then
  step "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ $target_arch != "$build_arch" ]]; then
  [[ -e /proc/sys/fs/binfmt_misc/register ]] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  if [[ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]]; then
    # Registered by the package's trigger on a system with systemd-binfmt or binfmt-support;
    # without either (a container), from the package's own binfmt.d entry.
    entry=/usr/lib/binfmt.d/qemu-aarch64.conf
    [[ -f $entry ]] || { log "no $entry: cannot register qemu-aarch64 with binfmt_misc"; exit 1; }
    sed -n 's/^\(:qemu-aarch64:.*\)$/\1/p' "$entry" >/proc/sys/fs/binfmt_misc/register
  fi
  [[ $(head -n1 /proc/sys/fs/binfmt_misc/qemu-aarch64) == enabled ]] || { log "qemu-aarch64 is registered but disabled in binfmt_misc"; exit 1; }
fi

# 2. The base images: the builder's and the image's architectures.
step "base images"
base_arches=$build_arch
[[ $target_arch == "$build_arch" ]] || base_arches+=",$target_arch"
"$here/base.sh" "${base_args[@]}" --arch "$base_arches"

# 3. The build.
step "building $ref from $context/Dockerfile"
build_log=$repo/build/image/build.log
mkdir -p "$(dirname "$build_log")"
# The whole output to the log; here each step, and whether it came from the cache.
# BuildKit sets the platform arguments itself; buildah 1.28 is told them.
platform_args=(--platform "$platform" --build-arg "BUILDPLATFORM=linux/$build_arch"
  --build-arg "TARGETPLATFORM=$platform" --build-arg "TARGETARCH=$target_arch" --build-arg TARGETOS=linux)
if ! buildah build --layers --pull=never --network=host "${platform_args[@]}" "${extra_args[@]}" --tag "$ref" \
  --file "$context/Dockerfile" "$context" 2>&1 |
  tee "$build_log" | grep --line-buffered -E '^\[[0-9]+/[0-9]+\] STEP|^--> Using cache|^install-deps:' | cut -c1-160 >&2; then
  tail -n 40 "$build_log" >&2
  log "buildah build failed (whole log: $build_log)"
  exit 1
fi

# 4. The smoke test.
if ((smoke)); then
  step "smoke test"
  container=$(buildah from --pull=never "$ref")
  trap 'buildah rm "$container" >/dev/null 2>&1 || true' EXIT
  config=$(buildah inspect --type image --format '{{.OCIv1.Config.User}} {{.OCIv1.Config.Entrypoint}} {{.OCIv1.OS}}/{{.OCIv1.Architecture}}' "$ref")
  echo "$ref: user, entrypoint and platform: $config" >&2
  [[ $config == "65532:65532 [/usr/local/bin/restarter] $platform" ]] ||
    { log "expected user 65532:65532, entrypoint [/usr/local/bin/restarter] and platform $platform"; exit 1; }
  uid=$(buildah run "$container" -- id -u)
  echo "$ref: runs as uid $uid; ldd /usr/local/bin/restarter:" >&2
  [[ $uid == 65532 ]] || { log "runs as uid $uid, not 65532"; exit 1; }
  libraries=$(buildah run "$container" -- ldd /usr/local/bin/restarter)
  echo "$libraries" >&2
  if grep -q 'not found' <<<"$libraries"; then log "a shared library does not resolve in the image"; exit 1; fi
  buildah run "$container" -- /usr/local/bin/restarter --help >&2 ||
    { log "restarter --help failed in the image"; exit 1; }
  # The binary's own word on its platform (a restarter older than `version` is not asked).
  if machine=$(buildah run "$container" -- /usr/local/bin/restarter version -o json 2>/dev/null); then
    echo "$ref: restarter version: $(tr -d '\n' <<<"$machine")" >&2
    grep -q "\"platform\": \"$platform\"" <<<"$machine" || { log "the binary in the image is not built for $platform"; exit 1; }
  fi
  buildah rm "$container" >/dev/null
  trap - EXIT
fi

# 5. The archive.
if ((!export_archive)); then
  log "done in $((SECONDS - start)) s: $ref ($(buildah images --format '{{.Size}}' "$ref") in buildah's storage)"
  exit 0
fi
step "exporting $output"
mkdir -p "$(dirname "$output")"
rm -f "$output"
transport=oci-archive
[[ $format == docker ]] && transport=docker-archive
buildah push --quiet "$ref" "$transport:$output:$ref"
size=$(buildah images --format '{{.Size}}' "$ref")
log "done in $((SECONDS - start)) s: $ref ($size in buildah's storage), $output ($(du -h "$output" | cut -f1), $format archive)"
if ((check_import)); then
  step "checking the import"
  "$here/check-import.sh" "$output" "$ref"
fi
