# restarter's container image: the one binary, run by the manifests as serve-controller and
# serve-webhook (manifests/). Built by the commands CI runs on every change (tests/run.sh calls
# the same tests/install-deps.sh and cmd/build.sh); tests/check-dockerfile.sh checks in CI that
# this file still calls them and that the runtime packages below are exactly the Debian packages
# of the libraries the binary links.
#   docker build -t <registry>/restarter:<tag> .
# (This repository's CI has no container engine: the image itself is not built there.)

# --- build: Debian 12, the distribution CI builds and tests on ---------------------------------
FROM debian:bookworm AS build
WORKDIR /src
COPY . .
# Release, no tests (CI runs those); warnings are errors as in CI. --strip: debug symbols stay in
# the build stage.
RUN tests/install-deps.sh \
 && cmd/build.sh build/image -DCMAKE_BUILD_TYPE=Release -DRESTARTER_BUILD_TESTS=OFF \
 && cmake --install build/image --prefix /out --strip

# --- runtime: slim, only the shared libraries the binary needs ---------------------------------
FROM debian:bookworm-slim
# libc6, libstdc++6 and libgcc-s1 are part of bookworm-slim already.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libcurl4 libssl3 libyaml-cpp0.7 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/bin/restarter /usr/local/bin/restarter
COPY LICENSE /usr/share/doc/restarter/LICENSE
# Numeric, so that Kubernetes' runAsNonRoot can verify it (the manifests set the same IDs). No
# home, no shell use, nothing written: the manifests mount the root filesystem read-only.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/restarter"]
