#!/usr/bin/env bash
# Builds Stakater's Reloader from its Go module, for the side-by-side benchmark
# (controller/controller_bench.sh with BENCH_TOOL=reloader), and prints the binary's path. Cached
# in ~/.cache/restarter/bench/reloader (RESTARTER_CACHE_DIR/bench/reloader): a second call only
# prints the path.
#
# Which version: the Go module proxy this project uses serves v1.4.22 of
# github.com/stakater/Reloader and refuses v1.4.21 (403, "This module version is not available"),
# the release earlier measurements used; v1.4.22 is the next patch release. Its go.mod has replace
# directives, so `go install module@version` refuses it: the module's source is downloaded and
# built as the main module instead. The pseudo-version of github.com/openshift/api its go.mod
# names is refused by the proxy too, so that one module is replaced by a later pseudo-version the
# proxy serves (OpenShift's DeploymentConfig types, which this benchmark does not use).
# Usage: tests/bench/reloader/build.sh   (needs go; the network to the Go module proxy once)
set -euo pipefail
version=v1.4.22
openshift_api=v0.0.0-20260709102940-580f1c1ba691
cache=${RESTARTER_CACHE_DIR:-$HOME/.cache/restarter}/bench/reloader
bin=$cache/reloader-$version
if [[ -x $bin ]]; then
  echo "$bin"
  exit 0
fi
command -v go >/dev/null || { echo "reloader/build.sh: needs go (tests/install-deps.sh installs it)" >&2; exit 1; }
mkdir -p "$cache"
module=$(go mod download -json "github.com/stakater/Reloader@$version" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
src=$(mktemp -d "$cache/src.XXXXXX")
trap 'rm -rf "$src"' EXIT
cp -r "$module/." "$src"
chmod -R u+w "$src"
(
  cd "$src"
  go mod edit -replace "github.com/openshift/api=github.com/openshift/api@$openshift_api"
  go build -mod=mod -trimpath -o "$bin.tmp" . >&2
)
mv "$bin.tmp" "$bin"
echo "$bin"
