# restarter's container image: the one binary, run by the manifests as serve-controller and
# serve-webhook (manifests/). Built by the commands CI runs on every change (tests/run.sh calls
# the same tests/install-deps.sh and cmd/build.sh); tests/check-dockerfile.sh checks in CI that
# this file still calls them and that the runtime packages below are exactly the Debian packages
# of the libraries the binary links.
#   docker build -t <registry>/restarter:<tag> .     (Docker 23 or later, or any BuildKit)
#   docker buildx build --platform linux/amd64,linux/arm64 -t <registry>/restarter:<tag> .
#   tests/image/build.sh                              (buildah, no daemon, no registry: as CI)
#   cmd/release.sh                                    (the release: both platforms, signed; docs/release.md)
# Two platforms from one file: the build stage always runs on the builder's platform and
# cross-compiles for the image's (Debian's aarch64 toolchain and multiarch -dev packages, through
# cmake/toolchains/), so an arm64 image costs one native-speed compile; only the runtime stage's
# apt-get runs under emulation (qemu-user through binfmt_misc). BuildKit sets BUILDPLATFORM,
# TARGETPLATFORM and TARGETARCH itself; buildah 1.28 (Debian 12) is given them by
# tests/image/build.sh.
# RUN --mount=type=cache needs BuildKit or buildah; the caches only make rebuilds quicker, the
# image is the same without them.

# --- build: Debian 12, the distribution CI builds and tests on ---------------------------------
FROM --platform=$BUILDPLATFORM debian:bookworm AS build
# The image's architecture (amd64, arm64); the builder's is this stage's own.
ARG TARGETARCH
WORKDIR /src
# Debian's images delete every downloaded package (apt.conf.d/docker-clean); this stage keeps them
# in the apt cache mount instead, so a rebuild of the next layer downloads nothing twice. The
# stage is not shipped.
RUN rm -f /etc/apt/apt.conf.d/docker-clean \
 && echo 'Binary::apt::APT::Keep-Downloaded-Packages "true";' >/etc/apt/apt.conf.d/keep-downloads
# The dependencies before the sources, so that this layer is reused until install-deps.sh
# changes; --build: the subset of its one package list that building needs (compiler, CMake,
# ccache, the -dev packages; no test tools, no clang); --target-arch: for another architecture,
# its cross compiler and -dev packages.
COPY tests/install-deps.sh tests/
RUN --mount=type=cache,id=restarter-apt-cache,target=/var/cache/apt,sharing=locked \
    --mount=type=cache,id=restarter-apt-lists,target=/var/lib/apt/lists,sharing=locked \
    tests/install-deps.sh --build --target-arch "${TARGETARCH:-$(dpkg --print-architecture)}"
COPY . .
# Release, no tests (CI runs those); warnings are errors as in CI, and so at -O2, the level CI
# compiles at (GCC 12's -O3, CMake's Release default, reports false -Wrestrict in libstdc++'s
# std::string). Every compilation goes through ccache in a cache mount, so a rebuild after a
# source change compiles only what changed. --strip: no debug symbols; the build tree is dropped
# from the layer. RESTARTER_REVISION: the commit, for `restarter version` (cmd/release.sh passes
# it; empty otherwise). Another architecture than the builder's: its toolchain file.
ARG RESTARTER_REVISION=""
RUN --mount=type=cache,id=restarter-ccache,target=/root/.cache/restarter/ccache \
    arch=${TARGETARCH:-$(dpkg --print-architecture)}; cross=; \
    if [ "$arch" != "$(dpkg --print-architecture)" ]; then \
      cross=-DCMAKE_TOOLCHAIN_FILE=/src/cmake/toolchains/linux-$arch.cmake; fi; \
    RESTARTER_CCACHE_DIR=/root/.cache/restarter/ccache \
    cmd/build.sh build/image -DCMAKE_BUILD_TYPE=Release '-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG' \
      -DRESTARTER_BUILD_TESTS=OFF "-DRESTARTER_REVISION=$RESTARTER_REVISION" $cross \
 && cmake --install build/image --prefix /out --strip \
 && rm -rf build

# --- runtime: slim, only the shared libraries the binary needs ---------------------------------
# --platform: the image's (the default; said because buildah 1.28 would otherwise look the base up
# for the build stage's platform).
FROM --platform=$TARGETPLATFORM debian:bookworm-slim
# libc6, libstdc++6 and libgcc-s1 are part of bookworm-slim already. tzdata is data, not a
# library: the tz database (/usr/share/zoneinfo) that libdate-tz3 reads for rollout windows' time
# zones (docs/behaviour.md, "Rollout windows"); bookworm-slim does not have it.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libcurl4 libssl3 libyaml-cpp0.7 libdate-tz3 tzdata \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/bin/restarter /usr/local/bin/restarter
COPY LICENSE /usr/share/doc/restarter/LICENSE
# Numeric, so that Kubernetes' runAsNonRoot can verify it (the manifests set the same IDs). No
# home, no shell use, nothing written: the manifests mount the root filesystem read-only.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/restarter"]
