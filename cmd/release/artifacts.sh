# shellcheck shell=bash
# shellcheck disable=SC2154  # the variables are cmd/release.sh's, which sources this file
# What cmd/release.sh builds before anything is pushed: the images of every platform, the index's
# OCI layout, an SBOM per image, the Krew archives and manifest, the chart, the kustomize tree, the
# notes, release.json and checksums.txt, all in $out. Sourced by cmd/release.sh after its checks,
# never executed; uses its variables (version, revision, created, platform_list, out, certs, ...),
# log, die, step and write_checksums.

# build_artifacts: the images, the index's OCI layout, the SBOMs, Krew, the chart, the kustomize
# tree, the notes, release.json and checksums.txt, all in $out; sets index_digest and image_digest.
build_artifacts() {
  # --- images ------------------------------------------------------------------------------------------
  labels=(
    "org.opencontainers.image.title=restarter"
    "org.opencontainers.image.description=Rolls Kubernetes workloads when the ConfigMaps and Secrets they use change"
    "org.opencontainers.image.version=$version"
    "org.opencontainers.image.revision=$revision"
    "org.opencontainers.image.source=$source_url"
    "org.opencontainers.image.url=$source_url"
    "org.opencontainers.image.licenses=Apache-2.0"
    "org.opencontainers.image.created=$created"
  )
  local_list=localhost/restarter-release:$version
  local_image() { echo "localhost/restarter-release:$version-${1#linux/}"; }
  for platform in "${platform_list[@]}"; do
    step "image $platform"
    label_args=()
    for label in "${labels[@]}"; do label_args+=(--label "$label"); done
    "$repo/tests/image/build.sh" --platform "$platform" --name "$(local_image "$platform")" --revision "$revision" \
      --timestamp "$created_epoch" "${label_args[@]}" --no-export || die "building the $platform image failed"
  done

  step "index"
  buildah manifest rm "$local_list" >/dev/null 2>&1 || true
  buildah manifest create "$local_list" >/dev/null
  for platform in "${platform_list[@]}"; do
    buildah manifest add --os linux --arch "${platform#linux/}" "$local_list" "containers-storage:$(local_image "$platform")" >/dev/null
  done
  # The OCI layout of the index as it will be pushed (layers compressed, digests final): what is
  # signed is what this directory holds.
  buildah manifest push --quiet --all --format oci "$local_list" "oci:$out/image:$version" ||
    die "writing the index's OCI layout failed"
  index_digest=$(jq -r --arg v "$version" '.manifests[] | select(.annotations["org.opencontainers.image.ref.name"] == $v) | .digest' "$out/image/index.json")
  index_blob=$out/image/blobs/sha256/${index_digest#sha256:}
  declare -gA image_digest=()
  for platform in "${platform_list[@]}"; do
    image_digest[$platform]=$(jq -r --arg arch "${platform#linux/}" \
      '.manifests[] | select(.platform.architecture == $arch) | .digest' "$index_blob")
    [[ ${image_digest[$platform]} == sha256:* ]] || die "the index has no $platform image"
    # Each image also by name in the layout (VERSION-ARCH), so that it can be pushed alone, before
    # the index that lists it.
    jq --arg ref "$version-${platform#linux/}" --argjson image "$(jq --arg d "${image_digest[$platform]}" \
        '.manifests[] | select(.digest == $d)' "$index_blob")" \
      '.manifests += [$image + {annotations: {"org.opencontainers.image.ref.name": $ref}}]' \
      "$out/image/index.json" >"$certs/index.json" && mv "$certs/index.json" "$out/image/index.json"
  done

  # --- SBOMs, Krew, chart, kustomize, notes, checksums -------------------------------------------------
  binaries=()
  for platform in "${platform_list[@]}"; do
    step "SBOM $platform"
    arch=${platform#linux/}
    container=$(buildah from --pull=never --platform "$platform" "$(local_image "$platform")" 2>/dev/null)
    rootfs=$(buildah mount "$container")
    "$venv/bin/python" "$here/sbom.py" --rootfs "$rootfs" --version "$version" --platform "$platform" \
      --revision "$revision" --created "$created" --image-digest "${image_digest[$platform]}" \
      --out "$out/sbom-linux-$arch.cdx.json" || { buildah rm "$container" >/dev/null; die "the SBOM of $platform"; }
    mkdir -p "$certs/bin-$arch"
    cp "$rootfs/usr/local/bin/restarter" "$certs/bin-$arch/restarter"
    binaries+=(--binary "$platform=$certs/bin-$arch/restarter")
    buildah umount "$container" >/dev/null
    buildah rm "$container" >/dev/null
  done

  step "Krew"
  "$repo/krew/package.sh" --url-base "$krew_url_base" --homepage "$source_url" "${binaries[@]}" --out "$out" >/dev/null
  validate-krew-manifest -manifest "$out/restarter.yaml" -skip-install >"$certs/krew-validate.log" 2>&1 ||
    { cat "$certs/krew-validate.log" >&2; die "validate-krew-manifest refused the Krew manifest"; }

  step "chart"
  chart_src=$certs/chart/restarter
  mkdir -p "$certs/chart"
  cp -r "$repo/manifests/helm/restarter" "$chart_src"
  # The released chart pulls the signed index by digest; the tag stays as documentation.
  python3 "$here/stamp.py" values "$chart_src/values.yaml" "$image_repo" "$index_digest" ||
    die "pointing the chart at $image_repo@$index_digest failed"
  helm lint --strict "$chart_src" >"$certs/helm-lint.log" 2>&1 || { cat "$certs/helm-lint.log" >&2; die "helm lint refused the chart"; }
  helm package "$chart_src" --version "$version" --app-version "$version" --destination "$out" >/dev/null
  chart=$out/restarter-$version.tgz
  [[ -f $chart ]] || die "helm package wrote no $chart"

  step "kustomize"
  mkdir -p "$certs/kustomize"
  cp -r "$repo/manifests" "$certs/kustomize/restarter-manifests-$version"
  rm -rf "$certs/kustomize/restarter-manifests-$version/helm"
  for kustomization in "$certs/kustomize/restarter-manifests-$version"/kustomization.yaml \
                       "$certs/kustomize/restarter-manifests-$version"/overlays/controller-only/kustomization.yaml; do
    python3 "$here/stamp.py" kustomization "$kustomization" "$image_repo" "$index_digest" ||
      die "pointing $kustomization at $image_repo@$index_digest failed"
  done
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$created_epoch" -C "$certs/kustomize" \
    -cf - "restarter-manifests-$version" | gzip -n -9 >"$out/restarter-manifests-$version.tar.gz"

  step "notes and checksums"
  {
    echo "# restarter $version"
    echo
    printf '%s\n' "$notes" | sed -e '/./,$!d'
  } >"$out/RELEASE-NOTES.md"
  json_platforms=$(for platform in "${platform_list[@]}"; do
    jq -n --arg p "$platform" --arg d "${image_digest[$platform]}" --arg a "${platform#linux/}" --arg v "$version" \
      '{platform: $p, digest: $d, sbom: ("sbom-linux-" + $a + ".cdx.json"), krew: ("kubectl-restarter-v" + $v + "-linux-" + $a + ".tar.gz")}'
  done | jq -s .)
  jq -n --arg version "$version" --arg revision "$revision" --arg created "$created" \
    --arg image "$image_repo" --arg index "$index_digest" --arg source "$source_url" --arg chart "oci://$chart_repo/restarter" \
    --argjson images "$json_platforms" \
    '{version: $version, revision: $revision, created: $created, source: $source, image: $image, index: $index,
      images: $images, chart: {ref: $chart, version: $version, digest: null}}' >"$out/release.json"
  write_checksums
}
