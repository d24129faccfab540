#!/usr/bin/env bash
# The arm64 binary proven where CI has no arm64 machine: restarter and its unit tests
# cross-compiled for linux/arm64 with Debian's aarch64 toolchain (cmake/toolchains/linux-arm64.cmake,
# the same as the image's build stage), then every unit test and `restarter --help` run under
# qemu-user (tests/run.sh's stage "arm64 under qemu-user"; docs/release.md "On a tag: what a maintainer runs").
#
# Usage: tests/cross/unit-tests.sh
# Runs in a buildah container of tests/cross/Containerfile (Debian 12 with the cross packages: no
# change to this machine's own packages, whose yaml-cpp -dev package cannot be installed for two
# architectures at once), the checkout mounted at /src, the build in build/arm64, compilations
# cached in ${RESTARTER_CCACHE_DIR:-~/.cache/restarter/ccache}/../ccache-arm64. The arm64 test
# binaries run through ctest's CMAKE_CROSSCOMPILING_EMULATOR (qemu-aarch64-static), and so do
# Catch2's test discovery and the smoke run. Needs root (buildah). Exit status: non-zero when the
# build or a test failed.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
log() { echo "cross: $*" >&2; }
[[ $(id -u) -eq 0 ]] || { log "run it as root (buildah)"; exit 1; }
[[ $(dpkg --print-architecture) == amd64 ]] || { log "cross-compiles from amd64 only, this is $(dpkg --print-architecture)"; exit 1; }
export BUILDAH_ISOLATION=${BUILDAH_ISOLATION:-chroot}
start=$SECONDS

# The base image (tests/image/base.sh, cached) and the build environment on top of it.
command -v buildah >/dev/null || { log "needs buildah (tests/image/build.sh installs it)"; exit 1; }
"$repo/tests/image/base.sh" --arch amd64
env_image=localhost/restarter-cross-arm64:latest
mkdir -p "$repo/build"
if ! buildah build --layers --pull=never --network=host --platform linux/amd64 --tag "$env_image" \
  --file "$repo/tests/cross/Containerfile" "$repo" >"$repo/build/cross-env.log" 2>&1; then
  tail -n 30 "$repo/build/cross-env.log" >&2
  log "building the cross environment failed (log: $repo/build/cross-env.log)"
  exit 1
fi

ccache_dir=${RESTARTER_CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/restarter/ccache}-arm64
mkdir -p "$ccache_dir"
container=$(buildah from --pull=never "$env_image")
trap 'buildah rm "$container" >/dev/null 2>&1 || true' EXIT
jobs=${RESTARTER_BUILD_JOBS:-$(nproc)}
# Release flags as the image's build stage has them, the unit tests without the integration tests
# and benchmarks (they need the local control plane), in unity batches of 8 as the dev build
# (cmake/unity.cmake: about half the compile time); warnings are errors as in every CI build.
log "building for linux/arm64 (the unit tests) in build/arm64"
buildah run --network=host -v "$repo:/src" -v "$ccache_dir:/ccache" "$container" -- env \
  RESTARTER_CCACHE_DIR=/ccache RESTARTER_BUILD_JOBS="$jobs" \
  /src/cmd/build.sh /src/build/arm64 -DCMAKE_TOOLCHAIN_FILE=/src/cmake/toolchains/linux-arm64.cmake \
    -DCMAKE_BUILD_TYPE=Release '-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG' -DRESTARTER_BUILD_INTEGRATION=OFF \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8
log "running the unit tests under qemu-user"
buildah run -v "$repo:/src" "$container" -- \
  ctest --test-dir /src/build/arm64 -L unit --output-on-failure --no-tests=error -j "$jobs"
log "restarter --help and version under qemu-user"
binary=/src/build/arm64/cmd/restarter/restarter
buildah run -v "$repo:/src" "$container" -- sh -c "
  file=\$(readelf -h $binary | sed -n 's/^ *Machine: *//p'); echo \"ELF machine: \$file\"
  case \$file in *AArch64*) ;; *) echo 'not an arm64 binary'; exit 1 ;; esac
  qemu-aarch64-static $binary --help | head -n 3
  qemu-aarch64-static $binary version -o json"
log "arm64: built, unit tests and --help passed under qemu-user in $((SECONDS - start)) s"
