#!/usr/bin/env bash
# Builds the Krew release archive of restarter and the complete plugin manifest for it.
#
#   krew/package.sh --url URL [--binary PATH] [--out DIR]
#
# URL is where the archive will be published (the manifest's uri). The archive
# kubectl-restarter-<version>-linux-<arch>.tar.gz holds the binary as `kubectl-restarter` and the
# LICENSE, with fixed owners, modes and times so the same binary gives the same archive. The
# manifest is krew/restarter.yaml with uri and sha256 filled in, written to DIR/restarter.yaml.
# --binary defaults to a fresh Release build (build/release); --out defaults to dist/.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
url="" binary="" out="$repo/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --url) url=${2:?--url needs a value}; shift 2 ;;
    --binary) binary=${2:?--binary needs a value}; shift 2 ;;
    --out) out=${2:?--out needs a value}; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
[ -n "$url" ] || { echo "package.sh: --url is required (where the archive will be published)" >&2; exit 2; }
case "$url" in
  https://*.tar.gz|http://*.tar.gz|file://*.tar.gz) ;;
  *) echo "package.sh: --url must be an http(s) or file URL ending in .tar.gz, got $url" >&2; exit 2 ;;
esac

if [ -z "$binary" ]; then
  cmake -S "$repo" -B "$repo/build/release" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRESTARTER_BUILD_TESTS=OFF >/dev/null
  cmake --build "$repo/build/release" --target restarter >/dev/null
  binary="$repo/build/release/cmd/restarter/restarter"
fi
[ -x "$binary" ] || { echo "package.sh: $binary is not an executable" >&2; exit 1; }

version=$(sed -n 's/^  version: \(v[0-9][0-9.]*\)$/\1/p' "$repo/krew/restarter.yaml")
[ -n "$version" ] || { echo "package.sh: no spec.version in krew/restarter.yaml" >&2; exit 1; }
binary_version=$("$binary" --version | awk '{print "v" $2}')
[ "$binary_version" = "$version" ] ||
  { echo "package.sh: the binary is $binary_version but the manifest says $version" >&2; exit 1; }
case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  *) echo "package.sh: unsupported machine $(uname -m)" >&2; exit 1 ;;
esac

mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
install -m 0755 "$binary" "$stage/kubectl-restarter"
strip "$stage/kubectl-restarter"
install -m 0644 "$repo/LICENSE" "$stage/LICENSE"
archive="$out/kubectl-restarter-$version-linux-$arch.tar.gz"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2026-01-01 00:00:00Z' \
    -C "$stage" -cf - kubectl-restarter LICENSE | gzip -n -9 >"$archive"
sha=$(sha256sum "$archive" | cut -d' ' -f1)

# Fill the template: only the platform that was built keeps its entry.
awk -v arch="$arch" -v uri="$url" -v sha="$sha" '
  /^    - selector:/ { block = ""; collecting = 1 }
  collecting { block = block $0 "\n"; if ($0 ~ /^          to: \.$/ && ++tos == 2) { flush() }; next }
  { print }
  function flush() {
    if (block ~ ("arch: " arch "\n")) {
      sub(/RELEASE_URI/, uri, block); sub(/RELEASE_SHA256/, sha, block); printf "%s", block
    }
    block = ""; collecting = 0; tos = 0
  }' "$repo/krew/restarter.yaml" >"$out/restarter.yaml"
grep -q "sha256: $sha" "$out/restarter.yaml" ||
  { echo "package.sh: krew/restarter.yaml has no platform entry for linux/$arch" >&2; exit 1; }
echo "$archive"
echo "$out/restarter.yaml"
