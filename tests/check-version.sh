#!/usr/bin/env bash
# The version is written once (docs/release.md, "One version, written once"): the first line of
# VERSION. This fails when any other tracked text file holds it, but CHANGELOG.md (whose section
# headings name each release); a chart, a manifest, a doc or a test that types it again would
# drift at the next release. The release stamps the version everywhere it must appear.
# Usage: tests/check-version.sh. Exit status: 0 written once, 1 found elsewhere.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
version=$(head -n1 VERSION)
[[ -n $version ]] || { echo "check-version: VERSION is empty" >&2; exit 1; }
# Whole versions only (1.2.3 is not found in 11.2.3 or 1.2.30).
pattern="(^|[^0-9.])${version//./\\.}([^0-9]|$)"
found=$(git ls-files -z --cached --others --exclude-standard -- . ':!VERSION' ':!CHANGELOG.md' ':!tests/fuzz/corpus' |
  xargs -0 grep -IEn -- "$pattern" 2>/dev/null || true)
if [[ -n $found ]]; then
  printf '%s\n' "$found" >&2
  echo "check-version: the version $version is written again above; take it from VERSION (docs/release.md)" >&2
  exit 1
fi
echo "check-version: $version is written once (VERSION; CHANGELOG.md's headings)"
