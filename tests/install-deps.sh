#!/usr/bin/env bash
# Installs the Debian packages restarter needs to build and test: compilers and CMake, libcurl
# (OpenSSL flavour), OpenSSL 3, Boost 1.81 headers (Asio, Beast), cxxopts, nlohmann/json, yaml-cpp,
# Catch2, and the tools the tests use; clang with libclang-rt-14-dev (which holds libFuzzer,
# libclang_rt.fuzzer-x86_64.a, on Debian 12) builds the fuzz targets; shellcheck and python3-yaml
# (for the kuttl steps' scripts) run tests/check-shell.sh, clang-format tests/check-format.sh.
# Idempotent and quick when everything is there: apt-get runs only for missing packages. Uses sudo
# only when not root.
# Usage: tests/install-deps.sh [--build]
#   --build  only what building the binary needs (a Release build without tests, with ccache): the
#            Dockerfile's build stage, which needs neither the test tools nor clang.
set -euo pipefail

# What `cmd/build.sh DIR -DCMAKE_BUILD_TYPE=Release -DRESTARTER_BUILD_TESTS=OFF` needs.
build_packages=(
  build-essential cmake ninja-build pkg-config ccache
  libcurl4-openssl-dev libssl-dev libboost1.81-dev libcxxopts-dev nlohmann-json3-dev libyaml-cpp-dev
)
# The rest: tests, fuzzing and lints.
test_packages=(
  git ca-certificates curl catch2
  libcpp-httplib-dev python3-jsonschema jq
  clang libclang-rt-14-dev
  iproute2 openssl util-linux procps
  shellcheck python3-yaml clang-format
)
case ${1:-} in
  --build) packages=("${build_packages[@]}") ;;
  '') packages=("${build_packages[@]}" "${test_packages[@]}") ;;
  *) sed -n '9,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) != *'install ok installed'* ]]; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
echo "install-deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
