#!/usr/bin/env bash
# Makes the Dockerfile's base images, debian:CODENAME and debian:CODENAME-slim (CODENAME: this
# machine's Debian release, bookworm), from Debian's packages with mmdebstrap, and puts them into
# buildah's local storage as docker.io/library/debian:CODENAME[-slim], the names `FROM debian:...`
# resolves to, so that a build with --pull=never needs no registry. tests/image/build.sh runs it;
# run it alone to make or refresh the base images only.
#
# Usage: tests/image/base.sh [--refresh] [--arch ARCH[,ARCH...]]
#   --refresh  make them anew from the archive (e.g. for security updates) instead of reusing them.
#   --arch     the architectures to make them for (default: this machine's; arm64 needs
#              qemu-user-static, arch-test and binfmt_misc, which tests/image/build.sh sets up).
#
# Names: each architecture's image is kept as debian:CODENAME-ARCH and debian:CODENAME-slim-ARCH
# (local names only), and debian:CODENAME[-slim] are manifest lists of the architectures asked for
# here, so that `FROM --platform=... debian:CODENAME-slim` finds the image of each platform (buildah
# picks the list's instance, as a registry's index is picked from).
#
# The recipe follows Docker Hub's official images (debuerreotype, examples/debian.sh), trimmed to
# what matters for a current release:
#   debian:CODENAME       mmdebstrap --variant=minbase (Essential, Priority: required, apt), its
#                         sources in /etc/apt/sources.list.d/ as this machine's apt has them (the
#                         archive is never named here), debuerreotype-minimizing-config (policy-rc.d,
#                         dpkg force-unsafe-io, apt's docker-clean, docker-gzip-indexes,
#                         docker-no-languages, docker-autoremove-suggests), debuerreotype-fixup (no
#                         machine-id, no logs, no apt lists or caches), PATH and CMD ["bash"].
#   debian:CODENAME-slim  the same, debuerreotype-slimify'd: /etc/dpkg/dpkg.cfg.d/docker keeps
#                         /usr/share/{doc,info,locale,man,...} out of every later install (the
#                         copyright files stay) and the files already there are removed.
# Cache: both images are kept as OCI archives outside the work tree, in
# ${RESTARTER_IMAGE_CACHE:-${XDG_CACHE_HOME:-~/.cache}/restarter/images}/base-KEY/, KEY being a hash of
# this script and of the apt sources it uses: a warm run, or a fresh clone on the same machine,
# finds them in buildah's storage (nothing to do) or loads them from there (seconds); a change of
# this recipe makes new ones. Needs root (mmdebstrap --mode=root, buildah mount) and buildah,
# mmdebstrap (tests/image/build.sh installs them).
set -euo pipefail

refresh=0
usage() { sed -n '/^# Usage:/,/^#              qemu-user-static/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
arches=$(dpkg --print-architecture)
while (($#)); do
  case $1 in
    --refresh) refresh=1; shift ;;
    --arch) arches=${2:?--arch ARCH[,ARCH...]}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
log() { echo "image-base: $*" >&2; }
IFS=, read -r -a arch_list <<<"$arches"
for arch in "${arch_list[@]}"; do
  [[ $arch == amd64 || $arch == arm64 ]] || { log "--arch: amd64 or arm64, not '$arch'"; exit 2; }
done

codename=$(. /etc/os-release && echo "${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}")
lists=("docker.io/library/debian:$codename" "docker.io/library/debian:$codename-slim")

# This machine's apt sources for its own release (never a host name written here): the files of
# /etc/apt/sources.list(.d) that name the release, or RESTARTER_IMAGE_SOURCES (a file, one-line or
# deb822 .sources). Third-party repositories (other suites) stay out.
sources=()
if [[ -n ${RESTARTER_IMAGE_SOURCES:-} ]]; then
  sources=("$RESTARTER_IMAGE_SOURCES")
else
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -f $file ]] && grep -Eq "(^|[[:space:]])$codename([[:space:]]|$)" <<<"$(grep -v '^[[:space:]]*#' "$file")" &&
      sources+=("$file")
  done
fi
((${#sources[@]})) || { log "no apt sources for $codename in /etc/apt (set RESTARTER_IMAGE_SOURCES)"; exit 1; }

key=$(cat "${BASH_SOURCE[0]}" "${sources[@]}" | sha256sum | cut -c1-16)
cache_root=${RESTARTER_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/restarter/images}
cache=$cache_root/base-$key
archive() { echo "$cache/$(basename "${1//:/-}").oci.tar"; }

# make_arch ARCH: the two images of ARCH in buildah's storage under their per-architecture names,
# reused, loaded from the cache or made. A subshell: its temporary files and containers go on exit.
make_arch() (
  arch=$1
  names=("docker.io/library/debian:$codename-$arch" "docker.io/library/debian:$codename-slim-$arch")
  # 1. In buildah's storage already, as this recipe made it: nothing to do.
  current() {
    local name
    for name in "${names[@]}"; do
      [[ -f $(archive "$name").id ]] || return 1
      [[ $(buildah inspect --type image --format '{{.FromImageID}}' "$name" 2>/dev/null) == "$(<"$(archive "$name").id")" ]] ||
        return 1
    done
  }
  if ((!refresh)) && current; then
    log "reusing ${names[*]} (recipe $key)"
    exit 0
  fi

  # 2. Made by this recipe before (another clone, storage reset): load the archives.
  if ((!refresh)) && [[ -f $cache/done-$arch ]]; then
    for name in "${names[@]}"; do
      id=$(buildah pull --quiet "oci-archive:$(archive "$name")" | tail -n 1)
      buildah tag "$id" "$name"
    done
    if current; then
      log "loaded ${names[*]} from $cache"
      exit 0
    fi
    log "the archives in $cache do not match their image IDs: making the images anew"
  fi

  # 3. Make them.
  if ! command -v mmdebstrap >/dev/null || ! command -v buildah >/dev/null; then
    log "needs mmdebstrap and buildah (tests/image/build.sh installs them)"
    exit 1
  fi
  work=$(mktemp -d "${TMPDIR:-/tmp}/image-base.XXXXXX")
  containers=()
  # shellcheck disable=SC2317  # called by the trap
  cleanup() {
    local c
    for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
    rm -rf "$work"
  }
  trap cleanup EXIT
  rootfs=$work/rootfs
  start=$SECONDS
  log "making ${names[*]} with mmdebstrap from ${sources[*]} (log: $work/mmdebstrap.log)"
  # mmdebstrap's own apt runs with this machine's apt configuration (Acquire::* settings included).
  # merged-usr hook: merged /usr the way debootstrap (and so debuerreotype) makes it, with
  # usr-is-merged; else apt satisfies init-system-helpers' dependency with usrmerge and perl.
  mmdebstrap --mode=root --variant=minbase --format=directory --architectures="$arch" \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr "$codename" "$rootfs" "${sources[@]}" \
    >"$work/mmdebstrap.log" 2>&1 || { cat "$work/mmdebstrap.log" >&2; exit 1; }

  # The sources as the official images have them: the release's file(s) in sources.list.d/.
  rm -f "$rootfs/etc/apt/sources.list" "$rootfs"/etc/apt/sources.list.d/*
  for file in "${sources[@]}"; do
    case $file in
      *.sources) install -m 0644 "$file" "$rootfs/etc/apt/sources.list.d/$(basename "$file")" ;;
      *) install -m 0644 "$file" "$rootfs/etc/apt/sources.list.d/$(basename "${file%.list}").list" ;;
    esac
  done

  # debuerreotype-minimizing-config.
  printf '%s\n' '#!/bin/sh' '# No service starts during a build (debuerreotype-minimizing-config).' 'exit 101' \
    >"$rootfs/usr/sbin/policy-rc.d"
  chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
  echo 'force-unsafe-io' >"$rootfs/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"
  echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$rootfs/etc/apt/apt.conf.d/docker-autoremove-suggests"
  clean='"rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true";'
  cat >"$rootfs/etc/apt/apt.conf.d/docker-clean" <<EOF
DPkg::Post-Invoke { $clean };
APT::Update::Post-Invoke { $clean };

Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Acquire::GzipIndexes "true";' >"$rootfs/etc/apt/apt.conf.d/docker-gzip-indexes"
  echo 'Acquire::Languages "none";' >"$rootfs/etc/apt/apt.conf.d/docker-no-languages"
  chmod 0644 "$rootfs"/etc/dpkg/dpkg.cfg.d/docker-apt-speedup "$rootfs"/etc/apt/apt.conf.d/docker-*

  # debuerreotype-fixup and its tar excludes: nothing of this build or of this machine.
  rm -rf "$rootfs/etc/machine-id" "$rootfs/etc/apt/apt.conf.d/01autoremove-kernels" \
    "$rootfs"/var/log/{dpkg.log,bootstrap.log,alternatives.log} "$rootfs"/var/log/apt/{history.log,term.log,eipp.log.xz} \
    "$rootfs/var/cache/ldconfig/aux-cache" "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb \
    "$rootfs/run/mount/utab" "$rootfs/etc/hostname" "$rootfs/etc/resolv.conf"
  find "$rootfs/var/lib/apt/lists" -mindepth 1 -maxdepth 1 -type f -delete

  # debuerreotype-slimify, on a copy.
  slim=$work/rootfs-slim
  cp -a "$rootfs" "$slim"
  excludes=(/usr/share/doc/'*' /usr/share/info/'*' /usr/share/linda/'*' /usr/share/lintian/overrides/'*'
    /usr/share/locale/'*' /usr/share/man/'*' /usr/share/doc/kde/HTML/'*'/'*' /usr/share/gnome/help/'*'/'*'
    /usr/share/omf/'*'/'*-*.emf')
  includes=(/usr/share/doc/'*'/copyright /usr/share/doc/kde/HTML/C/'*' /usr/share/gnome/help/'*'/C/'*'
    /usr/share/locale/all_languages /usr/share/locale/currency/'*' /usr/share/locale/l10n/'*'
    /usr/share/locale/languages /usr/share/locale/locale.alias /usr/share/omf/'*'/'*-C.emf')
  {
    echo '# This is the "slim" variant of the Debian base image.'
    echo '# Many files which are normally unnecessary in containers are excluded,'
    echo '# and this configuration file keeps them that way.'
    echo
    printf 'path-exclude %s\n' "${excludes[@]}"
    echo
    printf 'path-include %s\n' "${includes[@]}"
  } >"$slim/etc/dpkg/dpkg.cfg.d/docker"
  chmod 0644 "$slim/etc/dpkg/dpkg.cfg.d/docker"
  keep=()
  for pattern in "${includes[@]}"; do keep+=(${keep[@]:+-o} -path "$pattern"); done
  mans=()
  for dir in "$slim"/usr/share/man/man[0-9]; do [[ -d $dir ]] && mans+=("$dir"); done
  # In the chroot, as debuerreotype does: its absolute symlinks (update-alternatives' man pages) must
  # resolve there, not on this machine.
  for pattern in "${excludes[@]}"; do
    top=$(dirname "$pattern")
    [[ $top != *'*'* && -d $slim$top ]] || continue
    chroot "$slim" find "$top" -depth -mindepth 1 -not \( -type d -o -type l \) -not \( "${keep[@]}" \) -delete
    while [[ -n $(chroot "$slim" find "$top" -depth -mindepth 1 \( -empty -o -xtype l \) -exec rm -rf {} \; -printf .) ]]; do :; done
  done
  # Some postinst scripts (openjdk's, for one) expect these to exist (debuerreotype issue 10).
  ((${#mans[@]})) && mkdir -p "${mans[@]}"

  # Into buildah's storage, with the official images' configuration; then cache them.
  rm -f "$cache/done-$arch"
  mkdir -p "$cache"
  commit() {  # ROOTFS NAME
    local container mount
    container=$(buildah from --pull=never scratch)
    containers+=("$container")
    mount=$(buildah mount "$container")
    tar --numeric-owner --xattrs --xattrs-include='*' -C "$1" -cf - . | tar --numeric-owner --xattrs --xattrs-include='*' -C "$mount" -xpf -
    buildah umount "$container" >/dev/null
    buildah config --os linux --arch "$arch" --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd '["bash"]' \
      --created-by "tests/image/base.sh (mmdebstrap --variant=minbase $codename $arch, recipe $key)" "$container"
    buildah commit --quiet --rm "$container" "$2" >/dev/null
    containers=("${containers[@]/$container}")
    buildah inspect --type image --format '{{.FromImageID}}' "$2" >"$(archive "$2").id"
    buildah push --quiet "$2" "oci-archive:$(archive "$2"):$2"
  }
  commit "$rootfs" "${names[0]}"
  commit "$slim" "${names[1]}"
  touch "$cache/done-$arch"
  log "made ${names[*]} in $((SECONDS - start)) s (cached in $cache)"
)

for arch in "${arch_list[@]}"; do make_arch "$arch"; done
# Older recipes' archives.
find "$cache_root" -mindepth 1 -maxdepth 1 -name 'base-*' ! -name "base-$key" -exec rm -rf {} +

# The manifest lists debian:CODENAME and debian:CODENAME-slim, of the architectures asked for. A
# plain image of the same name (an earlier recipe's) gives way.
for list in "${lists[@]}"; do
  buildah manifest rm "$list" >/dev/null 2>&1 || buildah rmi "$list" >/dev/null 2>&1 || true
  buildah manifest create "$list" >/dev/null
  for arch in "${arch_list[@]}"; do
    buildah manifest add --os linux --arch "$arch" "$list" "containers-storage:$list-$arch" >/dev/null
  done
done
log "${lists[*]}: ${arch_list[*]}"
