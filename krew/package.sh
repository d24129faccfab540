#!/usr/bin/env bash
# Builds restarter's Krew release archives and the complete plugin manifest for them.
#
#   krew/package.sh --url-base URL [--binary [linux/ARCH=]PATH]... [--homepage URL] [--out DIR]
#
# One archive per binary, kubectl-restarter-v<version>-linux-<arch>.tar.gz: the binary as
# `kubectl-restarter` and the LICENSE, with fixed owners, modes and times and no gzip time stamp,
# so the same binary gives the same archive. The manifest is krew/restarter.yaml filled in: the
# version from the VERSION file (each binary must report it too), each platform's uri
# (URL/<archive name>) and sha256, the homepage; a platform without a binary is left out. Written
# to DIR/restarter.yaml (without the template's leading comments); the archives beside it.
#   --binary PATH           a binary for this machine's architecture; linux/arm64=PATH for another
#                           (its architecture is read from its ELF header; it runs here only to
#                           say its version when binfmt_misc can run it). Default: a fresh Release
#                           build (build/release) for this machine.
#   --url-base URL          where the archives will be published (https in a real release)
#   --url URL               (deprecated: use --url-base) the one archive's full URL
#   --homepage URL          the plugin's homepage (default: https://example.org/restarter, for
#                           tests; cmd/release.sh passes the project's)
#   --out DIR               default: dist/
# Prints the archives' paths and the manifest's.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "package.sh: $*" >&2; exit 1; }
usage_error() { echo "package.sh: $* (try --help)" >&2; exit 2; }
url_base="" single_url="" homepage="https://example.org/restarter" out="$repo/dist"
binaries=()
while [ $# -gt 0 ]; do
  case "$1" in
    --url-base) url_base=${2:?--url-base needs a value}; shift 2 ;;
    --url)
      echo "package.sh: warning: --url is deprecated, use --url-base (the archives' directory URL)" >&2
      single_url=${2:?--url needs a value}; shift 2 ;;
    --binary) binaries+=("${2:?--binary needs a value}"); shift 2 ;;
    --homepage) homepage=${2:?--homepage needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage_error "unknown argument $1" ;;
  esac
done
[ -n "$url_base$single_url" ] || usage_error "--url-base is required (where the archives will be published)"
[ -z "$url_base" ] || [ -z "$single_url" ] || usage_error "give --url-base or --url, not both"
case "${url_base:-$single_url}" in
  https://*|http://*|file://*) ;;
  *) usage_error "the URL must be http(s) or file, got ${url_base:-$single_url}" ;;
esac
case "$single_url" in ''|*.tar.gz) ;; *) usage_error "--url must end in .tar.gz, got $single_url" ;; esac
case "$homepage" in https://*) ;; *) usage_error "--homepage must be an https URL, got $homepage" ;; esac

version=v$(head -n1 "$repo/VERSION")
[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || die "VERSION does not hold a semantic version: ${version#v}"
host_arch=$(dpkg --print-architecture 2>/dev/null || uname -m)
case "$host_arch" in x86_64) host_arch=amd64 ;; aarch64) host_arch=arm64 ;; esac

if [ ${#binaries[@]} -eq 0 ]; then
  cmake -S "$repo" -B "$repo/build/release" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRESTARTER_BUILD_TESTS=OFF >/dev/null
  cmake --build "$repo/build/release" --target restarter >/dev/null
  binaries=("$repo/build/release/cmd/restarter/restarter")
fi
[ -z "$single_url" ] || [ ${#binaries[@]} -eq 1 ] || usage_error "--url names one archive: give one --binary, or --url-base"

# elf_arch FILE: amd64 or arm64, from the ELF header's machine.
elf_arch() {
  local machine
  machine=$(readelf -h "$1" 2>/dev/null | sed -n 's/^ *Machine: *//p') || true
  case "$machine" in
    *X86-64*) echo amd64 ;;
    *AArch64*) echo arm64 ;;
    *) die "$1 is not a Linux amd64 or arm64 executable (ELF machine: ${machine:-none})" ;;
  esac
}

mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
declare -A uri=() sha=()
for spec in "${binaries[@]}"; do
  platform=linux/$host_arch binary=$spec
  if [[ $spec == linux/*=* ]]; then platform=${spec%%=*}; binary=${spec#*=}; fi
  arch=${platform#linux/}
  [[ $arch == amd64 || $arch == arm64 ]] || usage_error "--binary: linux/amd64 or linux/arm64, not $platform"
  [ -z "${sha[$arch]:-}" ] || usage_error "two binaries for $platform"
  [ -x "$binary" ] || die "$binary is not an executable"
  [ "$(elf_arch "$binary")" = "$arch" ] || die "$binary is built for linux/$(elf_arch "$binary"), not $platform"
  # The version it reports, when this machine can run it (natively or through binfmt_misc).
  if reported=$("$binary" --version 2>/dev/null); then
    [ "v${reported##* }" = "$version" ] || die "$binary is v${reported##* } but VERSION says ${version#v}"
  elif [ "$arch" = "$host_arch" ]; then
    die "$binary --version failed"
  fi
  rm -rf "${stage:?}"/*
  install -m 0755 "$binary" "$stage/kubectl-restarter"
  install -m 0644 "$repo/LICENSE" "$stage/LICENSE"
  archive="$out/kubectl-restarter-$version-linux-$arch.tar.gz"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2026-01-01 00:00:00Z' \
      -C "$stage" -cf - kubectl-restarter LICENSE | gzip -n -9 >"$archive"
  sha[$arch]=$(sha256sum "$archive" | cut -d' ' -f1)
  uri[$arch]=${single_url:-${url_base%/}/${archive##*/}}
  echo "$archive"
done

# Fill the template: the version, the homepage, and each platform that has an archive.
awk -v version="$version" -v homepage="$homepage" \
    -v amd64_uri="${uri[amd64]:-}" -v amd64_sha="${sha[amd64]:-}" \
    -v arm64_uri="${uri[arm64]:-}" -v arm64_sha="${sha[arm64]:-}" '
  function flush() {
    if (block ~ /arch: amd64\n/ && amd64_sha != "") {
      sub(/RELEASE_URI_AMD64/, amd64_uri, block); sub(/RELEASE_SHA256_AMD64/, amd64_sha, block); printf "%s", block
    }
    if (block ~ /arch: arm64\n/ && arm64_sha != "") {
      sub(/RELEASE_URI_ARM64/, arm64_uri, block); sub(/RELEASE_SHA256_ARM64/, arm64_sha, block); printf "%s", block
    }
    block = ""; collecting = 0; tos = 0
  }
  /^    - selector:/ { block = ""; collecting = 1 }
  collecting { block = block $0 "\n"; if ($0 ~ /^          to: \.$/ && ++tos == 2) { flush() }; next }
  /^#/ && !started { next }
  { started = 1; sub(/RELEASE_VERSION/, version); sub(/RELEASE_HOMEPAGE/, homepage); print }' \
  "$repo/krew/restarter.yaml" >"$out/restarter.yaml"
! grep -q 'RELEASE_' "$out/restarter.yaml" || die "krew/restarter.yaml has a RELEASE_ value this script does not fill"
echo "$out/restarter.yaml"
