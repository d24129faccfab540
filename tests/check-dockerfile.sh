#!/usr/bin/env bash
# Cheap CI checks of the Dockerfile (tests/image/build.sh builds it, with buildah; these need no
# image build):
#   1. its build stage still runs the build recipe CI runs: tests/install-deps.sh and cmd/build.sh
#      (a RUN of a stage before the last; continuation lines and RUN flags such as --mount are
#      understood), and the runtime stage copies its result from there;
#   2. its runtime stage installs exactly the Debian packages that own the shared libraries the
#      binary links directly (ELF NEEDED entries, resolved with ldd, owner from dpkg -S), minus
#      those the slim base image already has, plus the data packages it reads (data_packages: the
#      tz database); so a new library dependency, or a stale package, fails here instead of in a
#      container that cannot start;
#   3. its base images are the Debian release of this machine (else 2 would compare package names
#      of another release).
# Usage: tests/check-dockerfile.sh BINARY   (a non-sanitizer build, e.g. build/ci/cmd/restarter/restarter)
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
dockerfile=$repo/Dockerfile
binary=${1:?usage: tests/check-dockerfile.sh BINARY}
# In debian:bookworm-slim already (essential or required by apt); the Dockerfile says so too.
base_packages=(libc6 libstdc++6 libgcc-s1)
# Data the binary reads at run time, not linked: the runtime stage must install them too.
# tzdata: the tz database date/tz (libdate-tz3) reads for rollout windows' time zones.
data_packages=(tzdata)
failed=0
fail() { echo "check-dockerfile: $*" >&2; failed=1; }

[[ -f $dockerfile ]] || { echo "check-dockerfile: no Dockerfile at $dockerfile" >&2; exit 1; }
[[ -x $binary ]] || { echo "check-dockerfile: no binary at $binary" >&2; exit 1; }

# The Dockerfile's instructions, one a line: comments dropped, continuation lines joined, each
# prefixed with its stage's number (1, 2, ...; the last is the runtime stage).
instructions=$(sed '/^[[:space:]]*#/d' "$dockerfile" |
  awk '{ if (sub(/\\[[:space:]]*$/, "")) { text = text $0 " "; next } print text $0; text = "" }' |
  awk 'toupper($1) == "FROM" { stage++ } NF { print stage "\t" $0 }')
stages=$(awk -F '\t' 'END { print $1 + 0 }' <<<"$instructions")
stage() { awk -F '\t' -v from="$1" -v to="$2" '$1 >= from && $1 <= to { sub(/^[^\t]*\t/, ""); print }' <<<"$instructions"; }

# 1. The build recipe.
((stages >= 2)) || fail "expected a build stage and a runtime stage, found $stages stage(s)"
build_runs=$(stage 1 $((stages - 1)) | grep -Ei '^RUN[[:space:]]' || true)
for step in 'tests/install-deps.sh' 'cmd/build.sh'; do
  grep -Eq "(^|[[:space:];&|])${step//./\\.}([[:space:]]|\$)" <<<"$build_runs" ||
    fail "the Dockerfile's build stage no longer runs $step (the build CI exercises)"
done
runtime=$(stage "$stages" "$stages")
grep -Eiq '^COPY[[:space:]]+--from=' <<<"$runtime" || fail "the runtime stage copies nothing from the build stage"

# 3. The release.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
while read -r image; do
  [[ $image == "debian:$codename" || $image == "debian:$codename-slim" ]] ||
    fail "base image $image is not Debian $codename (this machine): cannot check its package names"
done < <(awk 'toupper($1) == "FROM" { for (i = 2; i <= NF; i++) if ($i !~ /^--/) { print $i; break } }' "$dockerfile")

# 2. The runtime packages: the arguments of `apt-get install` in the last stage.
declare -A listed=()
while read -r package; do
  [[ -n $package ]] && listed[$package]=1
done < <(grep -o 'apt-get install[^&;|]*' <<<"$runtime" | tr ' ' '\n' |
  grep -Ev '^(apt-get|install|-.*|)$' || true)
(( ${#listed[@]} > 0 )) || fail "found no apt-get install in the runtime stage"

declare -A needed=()
while read -r library; do
  path=$(ldd "$binary" | awk -v lib="$library" '$1 == lib { print $3 }')
  [[ -n $path ]] || { fail "ldd does not resolve $library"; continue; }
  # dpkg knows the path it installed; /lib is a symlink to /usr/lib on merged-/usr systems.
  owner=$(dpkg -S "$path" 2>/dev/null || dpkg -S "$(realpath "$path")" 2>/dev/null ||
          dpkg -S "${path#/usr}" 2>/dev/null || true)
  package=${owner%%:*}
  [[ -n $package ]] || { fail "no Debian package owns $path ($library)"; continue; }
  needed[$package]=1
done < <(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')

for package in "${base_packages[@]}"; do unset "needed[$package]"; done
for package in "${data_packages[@]}"; do needed[$package]=1; done
for package in "${!needed[@]}"; do
  [[ -n ${listed[$package]:-} ]] || fail "the binary needs $package, which the runtime stage does not install"
done
for package in "${!listed[@]}"; do
  [[ -n ${needed[$package]:-} ]] || fail "the runtime stage installs $package, which the binary does not need"
done

if ((failed)); then exit 1; fi
echo "check-dockerfile: build recipe and runtime packages (${!listed[*]}) match"
