# shellcheck shell=bash
# The real node's images (lib/node.sh): the test image, which is also the node's pod sandbox
# ("pause") image, and `cluster.sh load-image`. Sourced, never executed. Uses common.sh, build.sh.
#
# The test image, docker.io/restarter-test/busybox:1 (`restarter-test/busybox:1` in a pod spec): the
# busybox of Debian's busybox-static package (sh, sleep, cat, httpd, wget, nc, ...; every applet
# linked under /bin, /sbin, /usr/bin, /usr/sbin as busybox --list-full says), /etc/passwd with root
# and nobody, /tmp, /var/www; default command `sleep infinity`, so a pod without a command just
# runs. No registry is reachable, so it is assembled by hand as an OCI image layout (one
# uncompressed layer, fixed timestamps and owners: the same recipe gives the same digest) and kept
# as an oci-archive in $CACHE_ROOT/images/, keyed on the recipe (the functions below); the node
# imports it into its containerd at every start.
#
# As the sandbox image: containerd runs its default command in every pod's sandbox container, and
# `sleep` does what pause does here (holds the pod's namespaces, exits on SIGKILL, which is how
# containerd stops a sandbox). Kubernetes' pause image also reaps zombies for pods that share their
# process namespace; tests here do not.

TEST_IMAGE=docker.io/restarter-test/busybox:1

# The recipe's key: the source of the functions that make the image, its name and the architecture.
test_image_key() {
  { declare -f make_test_image test_image_rootfs; echo "$TEST_IMAGE $(dpkg --print-architecture)"; } \
    | sha256sum | cut -c1-12
}

# Print the path of the test image's oci-archive, making it first unless cached.
ensure_test_image() {
  local archive
  archive="$CACHE_ROOT/images/busybox-$(test_image_key).oci.tar"
  if [[ ! -f $archive ]]; then
    mkdir -p "$CACHE_ROOT/images"
    make_test_image "$archive"
  fi
  echo "$archive"
}

# The image's root filesystem in directory $2, from the busybox binary $1.
test_image_rootfs() {
  local busybox=$1 root=$2 path
  mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,root,tmp,var/www,proc,sys,dev}
  install -m 0755 "$busybox" "$root/bin/busybox"
  while read -r path; do
    [[ $path == bin/busybox ]] || ln -s /bin/busybox "$root/$path"
  done < <("$busybox" --list-full)
  printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' \
    >"$root/etc/passwd"
  printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$root/etc/group"
  chmod 0644 "$root/etc/passwd" "$root/etc/group"
  find "$root" -type d -exec chmod 0755 {} +
  chmod 1777 "$root/tmp"
}

# Make the test image's oci-archive $1. A subshell, so that its temporary directory goes on any exit.
make_test_image() (
  local out=$1 tmp arch
  case $(dpkg --print-architecture) in
    amd64) arch=amd64 ;;
    arm64) arch=arm64 ;;
    *) die "the test image is made for amd64 and arm64 only, not $(dpkg --print-architecture)" ;;
  esac
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/restarter-test-image.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  log "making the test image $TEST_IMAGE from Debian's busybox-static"
  # Downloaded, not installed: the host's busybox (if any) stays as it is. The package lists may be
  # missing on a fresh machine: update them once and retry. APT::Sandbox::User=root: no warning
  # about the _apt user being unable to write here.
  if ! (cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root busybox-static >/dev/null 2>&1); then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    (cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root busybox-static >/dev/null) \
      || die "apt-get download busybox-static failed"
  fi
  dpkg-deb -x "$tmp"/busybox-static_*.deb "$tmp/deb"
  test_image_rootfs "$tmp/deb/bin/busybox" "$tmp/rootfs"
  # The layer: sorted, owned by root, every time stamp 0, so the same recipe gives the same digest.
  local tar_flags=(--sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu)
  (cd "$tmp/rootfs" && tar "${tar_flags[@]}" -cf "$tmp/layer.tar" bin dev etc proc root sbin sys tmp usr var)
  mkdir -p "$tmp/oci/blobs/sha256"
  local layer layer_size config config_digest manifest manifest_digest
  layer=$(sha256sum "$tmp/layer.tar" | cut -d' ' -f1)
  layer_size=$(stat -c %s "$tmp/layer.tar")
  mv "$tmp/layer.tar" "$tmp/oci/blobs/sha256/$layer"
  config=$(printf '{"architecture":"%s","os":"linux","created":"1970-01-01T00:00:00Z","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":["sleep","infinity"],"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"tests/cluster/lib/images.sh: Debian busybox-static"}]}' \
    "$arch" "$layer")
  config_digest=$(printf '%s' "$config" | sha256sum | cut -d' ' -f1)
  printf '%s' "$config" >"$tmp/oci/blobs/sha256/$config_digest"
  manifest=$(printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%d}]}' \
    "$config_digest" "${#config}" "$layer" "$layer_size")
  manifest_digest=$(printf '%s' "$manifest" | sha256sum | cut -d' ' -f1)
  printf '%s' "$manifest" >"$tmp/oci/blobs/sha256/$manifest_digest"
  # io.containerd.image.name: the full name, which `ctr images import` names the image by
  # (org.opencontainers.image.ref.name holds only the tag, as the OCI layout specification says).
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
    "$manifest_digest" "${#manifest}" "$TEST_IMAGE" "${TEST_IMAGE##*:}" >"$tmp/oci/index.json"
  printf '{"imageLayoutVersion":"1.0.0"}' >"$tmp/oci/oci-layout"
  (cd "$tmp/oci" && tar "${tar_flags[@]}" -cf "$out.tmp.$$" oci-layout index.json blobs)
  mv "$out.tmp.$$" "$out"
  log "test image: $out"
)

# The image names an archive holds: an oci-archive's index (io.containerd.image.name, else
# org.opencontainers.image.ref.name), a docker-archive's manifest.json (RepoTags).
archive_image_names() {
  local archive=$1 members
  members=$(tar -tf "$archive") || die "$archive is not a tar archive"
  if grep -qx 'index.json' <<<"$members"; then
    tar -xOf "$archive" index.json | jq -r '.manifests[].annotations // {}
      | .["io.containerd.image.name"] // .["org.opencontainers.image.ref.name"] // empty'
  elif grep -qx 'manifest.json' <<<"$members"; then
    tar -xOf "$archive" manifest.json | jq -r '.[].RepoTags // [] | .[]'
  else
    die "$archive is neither an oci-archive (index.json) nor a docker-archive (manifest.json)"
  fi
}

# The name the kubelet asks containerd for when a pod says <name>: docker.io/ before a name
# without a registry, library/ before a single-component one, :latest when there is no tag.
normalized_image_name() {
  local name=$1 first=${1%%/*} rest
  if [[ $name != */* ]] || [[ $first != *.* && $first != *:* && $first != localhost ]]; then
    [[ $name == */* ]] || name="library/$name"
    name="docker.io/$name"
  fi
  rest=${name##*/}
  [[ $rest == *:* || $rest == *@* ]] || name="$name:latest"
  echo "$name"
}

# `cluster.sh load-image ARCHIVE...`: import image archives (oci-archive or docker-archive, as
# `buildah push` writes them) into the real node's containerd (namespace k8s.io), so that pods use
# them with imagePullPolicy IfNotPresent or Never. Each image is named as a pod spec refers to it
# (normalized_image_name), tagged so if the archive named it shorter.
cmd_load_image() {
  local archive name full names listed
  (($#)) || die "usage: cluster.sh load-image ARCHIVE..."
  node_running || die "the real node of cluster '$CLUSTER_NAME' is not running (start it: RESTARTER_CLUSTER_REAL_NODE=1 cluster.sh up)"
  for archive in "$@"; do
    [[ -f $archive ]] || die "no such archive: $archive"
    mapfile -t names < <(archive_image_names "$archive")
    import_image "$archive"
    listed=$(node_ctr images ls -q)
    ((${#names[@]})) || log "warning: $archive names no image; imported, but no pod can refer to it by name"
    for name in "${names[@]}"; do
      full=$(normalized_image_name "$name")
      if ! grep -qxF "$full" <<<"$listed"; then
        grep -qxF "$name" <<<"$listed" || die "$name from $archive is not in the node's containerd after the import"
        node_ctr images tag "$name" "$full" >/dev/null
      fi
      log "loaded $full (from $archive)"
      echo "$full"
    done
  done
}
