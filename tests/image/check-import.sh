#!/usr/bin/env bash
# Checks that containerd imports an image archive (tests/image/build.sh's output) under its
# reference, as `ctr -n k8s.io images import` on a node does, without a node: it starts a private
# containerd of Debian's containerd package (downloaded and unpacked once into
# ${XDG_CACHE_HOME:-~/.cache}/restarter/images/containerd-VERSION/, not installed), with its own
# root, state and socket in a temporary directory and no CRI plugin, imports the archive into
# namespace k8s.io, lists it, and stops that containerd again (by its process id) and removes
# everything it wrote.
#
# Usage: tests/image/check-import.sh ARCHIVE [REFERENCE]
#   REFERENCE  the name the import must give the image; default: docker.io/library/restarter:TAG
#              with TAG from the archive's file name (restarter-TAG.tar)
# Needs root. Exit status: 0 imported under REFERENCE, 1 not, 2 usage.
set -euo pipefail

usage() { sed -n '/^# Usage:/,/^# Needs root/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
log() { echo "check-import: $*" >&2; }
[[ ${1:-} == -h || ${1:-} == --help ]] && { usage; exit 0; }
(($# == 1 || $# == 2)) || { usage >&2; exit 2; }
archive=$(realpath "$1")
[[ -f $archive ]] || { log "no archive $1"; exit 2; }
if (($# == 2)); then
  ref=$2
else
  tag=$(basename "$archive" .tar)
  tag=${tag#restarter-}
  ref=docker.io/library/restarter:$tag
fi

cache=${RESTARTER_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/restarter/images}
version=$(apt-cache policy containerd | awk '$1 == "Candidate:" { print $2 }')
[[ -n $version && $version != '(none)' ]] || { apt-get update -qq; version=$(apt-cache policy containerd | awk '$1 == "Candidate:" { print $2 }'); }
[[ -n $version && $version != '(none)' ]] || { log "no containerd package in this machine's apt sources"; exit 1; }
bin=$cache/containerd-${version//[:~]/_}/usr/bin
if [[ ! -x $bin/containerd || ! -x $bin/ctr ]]; then
  download=$(mktemp -d "${TMPDIR:-/tmp}/check-import.XXXXXX")
  (cd "$download" && apt-get download -qq -o APT::Sandbox::User=root "containerd=$version")
  rm -rf "$(dirname "$(dirname "$bin")")"
  dpkg-deb -x "$download"/containerd_*.deb "$(dirname "$(dirname "$bin")")"
  rm -rf "$download"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/check-import.XXXXXX")
pid=
cleanup() {
  if [[ -n $pid ]]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  # Whatever containerd left mounted under its root (nothing, when no container ran).
  grep -o " $work/[^ ]*" /proc/mounts | sort -r | xargs -r -n 1 umount -l 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cat >"$work/config.toml" <<EOF
version = 2
root = "$work/root"
state = "$work/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$work/containerd.sock"
[ttrpc]
  address = "$work/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
EOF
"$bin/containerd" --config "$work/config.toml" >"$work/containerd.log" 2>&1 &
pid=$!
ctr=("$bin/ctr" --address "$work/containerd.sock" --namespace k8s.io)
for _ in $(seq 100); do
  "${ctr[@]}" version >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/containerd.log" >&2; log "containerd did not start"; exit 1; }
  sleep 0.1
done
"${ctr[@]}" images import "$archive" >&2
"${ctr[@]}" images ls >&2
if grep -Fxq "$ref" <<<"$("${ctr[@]}" images ls -q)"; then
  log "containerd $version imported $(basename "$archive") as $ref"
else
  log "containerd $version did not import $(basename "$archive") as $ref"
  exit 1
fi
