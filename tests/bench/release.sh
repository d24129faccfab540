#!/usr/bin/env bash
# What a release costs and weighs (docs/benchmarks.md, "The release"): cmd/release.sh --no-push of
# this checkout, RUNS times on a machine that released it before (image layers, ccache and the
# tools cached: the cost of a release after a source change is the compile of what changed, not
# measured here), then the sizes of what it made. Nothing is pushed and no network is used beyond
# what cmd/release.sh itself uses (Debian's archive when a layer is not cached).
#
# Usage: tests/bench/release.sh [RUNS]   (default 3; as root, like cmd/release.sh)
# Prints: the wall time of each run and their median (min-max), the load average before and after,
# each platform's image (compressed layers + config, as pushed) and its uncompressed size, the
# Krew archives, the chart, each SBOM and its package count; whether every run gave the same
# index digest (a release of one commit is reproducible where the tools allow).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=SCRIPTDIR/lib.sh
source "$repo/tests/bench/lib.sh"
runs=${1:-3}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "usage: tests/bench/release.sh [RUNS]" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/release-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
dirty=()
[[ -z $(git -C "$repo" status --porcelain --untracked-files=normal) ]] || dirty=(--allow-dirty)

echo "load before: $(load)"
times=() digests=()
for i in $(seq "$runs"); do
  start=$(date +%s%N)
  "$repo/cmd/release.sh" --no-push --registry 10.240.0.1:5000 --source-url https://example.org/restarter \
    --out "$work/dist" "${dirty[@]}" >"$work/run-$i.log" 2>&1 || { tail -n 20 "$work/run-$i.log" >&2; exit 1; }
  end=$(date +%s%N)
  times+=("$(awk -v ns=$((end - start)) 'BEGIN { printf "%.1f", ns / 1e9 }')")
  digests+=("$(jq -r .index "$work/dist/release.json")")
  echo "run $i: ${times[-1]} s, index ${digests[-1]}"
done
echo "load after: $(load)"
echo "release (--no-push, warm): $(printf '%s\n' "${times[@]}" | stats) s over $runs runs"
if [[ $(printf '%s\n' "${digests[@]}" | sort -u | wc -l) == 1 ]]; then
  echo "every run gave the index ${digests[0]}"
else
  echo "the runs gave different indexes: ${digests[*]}"
fi

dist=$work/dist
blob() { echo "$dist/image/blobs/sha256/${1#sha256:}"; }
index=$(blob "$(jq -r .index "$dist/release.json")")
for digest in $(jq -r '.manifests[].digest' "$index"); do
  manifest=$(blob "$digest")
  platform=$(jq -r --arg d "$digest" '.manifests[] | select(.digest == $d) | .platform | .os + "/" + .architecture' "$index")
  compressed=$(jq '[.layers[].size, .config.size] | add' "$manifest")
  uncompressed=0
  for layer in $(jq -r '.layers[].digest' "$manifest"); do
    uncompressed=$((uncompressed + $(gzip -dc "$(blob "$layer")" | wc -c)))
  done
  sbom=$dist/sbom-linux-${platform#linux/}.cdx.json
  awk -v p="$platform" -v c="$compressed" -v u="$uncompressed" -v n="$(jq '.components | length' "$sbom")" \
    -v s="$(stat -c %s "$sbom")" 'BEGIN { printf "%s: image %.1f MB compressed, %.1f MB uncompressed; SBOM %d packages (%.0f KB)\n", p, c / 1e6, u / 1e6, n, s / 1e3 }'
done
for file in "$dist"/kubectl-restarter-*.tar.gz "$dist"/restarter-*.tgz "$dist"/restarter-manifests-*.tar.gz; do
  awk -v f="${file##*/}" -v s="$(stat -c %s "$file")" 'BEGIN { printf "%s: %.0f KB\n", f, s / 1e3 }'
done
