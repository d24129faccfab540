#!/usr/bin/env bash
# Installs the Debian packages restarter needs to build and test: compilers and CMake, libcurl
# (OpenSSL flavour), OpenSSL 3, Boost 1.81 headers (Asio, Beast), cxxopts, nlohmann/json, yaml-cpp,
# Howard Hinnant's date/tz (with tzdata, the tz database it reads), Catch2, and the tools the tests use; clang with libclang-rt-14-dev (which holds libFuzzer,
# libclang_rt.fuzzer-x86_64.a, on Debian 12) builds the fuzz targets; shellcheck and python3-yaml
# (for the kuttl steps' scripts) run tests/check-shell.sh, clang-format tests/check-format.sh,
# clang-tidy tests/check-tidy.sh.
# Idempotent and quick when everything is there: apt-get runs only for missing packages. Uses sudo
# only when not root.
# Usage: tests/install-deps.sh [--build | --unit] [--target-arch ARCH]
#   --build  only what building the binary needs (a Release build without tests, with ccache): the
#            Dockerfile's build stage, which needs neither the test tools nor clang.
#   --unit   what building and running the unit tests needs too (Catch2, cpp-httplib), no more.
#   --target-arch ARCH  also what cross-compiling for ARCH (arm64, or this machine's own: nothing
#            more) needs: Debian's cross compiler, the -dev packages of ARCH through multiarch
#            (dpkg --add-architecture) and qemu-user-static to run what was built. yaml-cpp's -dev
#            package is not co-installable across architectures: its ARCH copy replaces this
#            machine's, so use this option where only ARCH is built (the Dockerfile's build stage,
#            the arm64 test container of tests/run.sh), never on a machine that also builds natively.
set -euo pipefail

# What `cmd/build.sh DIR -DCMAKE_BUILD_TYPE=Release -DRESTARTER_BUILD_TESTS=OFF` needs.
build_packages=(
  build-essential cmake ninja-build pkg-config ccache
  libcurl4-openssl-dev libssl-dev libboost1.81-dev libcxxopts-dev nlohmann-json3-dev libyaml-cpp-dev
  libhowardhinnant-date-dev tzdata
)
# What the unit tests add.
unit_packages=(catch2 libcpp-httplib-dev)
# The rest: tests, fuzzing and lints.
test_packages=(
  git ca-certificates curl
  python3-jsonschema jq
  clang libclang-rt-14-dev
  iproute2 openssl util-linux procps
  shellcheck python3-yaml clang-format clang-tidy
)
# What the release's Krew suite runs on this machine besides its own binary: the arm64 plugin, under
# qemu-user through binfmt_misc, with this machine's arm64 runtime libraries (multiarch; runtime
# packages only, which install beside this machine's own, unlike yaml-cpp's -dev package).
plugin_runtime_arch=arm64
plugin_runtime_packages=(libcurl4 libssl3 libyaml-cpp0.7 libdate-tz3 libstdc++6)
usage() { sed -n '/^# Usage:/,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2; }
mode=all
target_arch=
while (($#)); do
  case $1 in
    --build) mode=build; shift ;;
    --unit) mode=unit; shift ;;
    --target-arch) target_arch=${2:-}; [[ -n $target_arch ]] || usage; shift 2 ;;
    *) usage ;;
  esac
done
packages=("${build_packages[@]}")
[[ $mode == build ]] || packages+=("${unit_packages[@]}")
[[ $mode != all ]] || packages+=("${test_packages[@]}")
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
add_architecture() {
  grep -qx "$1" <<<"$(dpkg --print-foreign-architectures)" || "${sudo_cmd[@]}" dpkg --add-architecture "$1"
}
if [[ $mode == all && -z $target_arch && $(dpkg --print-architecture) != "$plugin_runtime_arch" ]]; then
  add_architecture "$plugin_runtime_arch"
  packages+=("${plugin_runtime_packages[@]/%/:$plugin_runtime_arch}")
fi
if [[ -n $target_arch && $target_arch != "$(dpkg --print-architecture)" ]]; then
  case $target_arch in
    arm64) triplet=aarch64-linux-gnu ;;
    *) echo "install-deps: cross-compiling for $target_arch is not supported (arm64 is)" >&2; exit 2 ;;
  esac
  # The target's libraries (the -dev packages that have architecture-specific files; yaml-cpp's
  # replaces this machine's), the cross compiler and the emulator that runs the target's test
  # binaries; with the tests, cpp-httplib's for the target too (Catch2 is headers only).
  packages=("${packages[@]/#libyaml-cpp-dev/libyaml-cpp-dev:$target_arch}")
  packages+=("g++-$triplet" qemu-user-static
    libcurl4-openssl-dev:"$target_arch" libssl-dev:"$target_arch" libboost1.81-dev:"$target_arch"
    libhowardhinnant-date-dev:"$target_arch")
  packages=("${packages[@]/#libcpp-httplib-dev/libcpp-httplib-dev:$target_arch}")
  add_architecture "$target_arch"
fi

missing=()
for p in "${packages[@]}"; do
  if [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) != *'install ok installed'* ]]; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
