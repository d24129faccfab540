# shellcheck shell=bash
# shellcheck disable=SC2154  # the variables are cmd/release.sh's, which sources this file
# The push of a release cmd/release.sh built (or --publish reads): every image with its SBOM
# attested and its signature, then the index and its signature, the chart and its signature, and
# the tag last, so that a failure before it tags nothing. Sourced by cmd/release.sh as its last
# step, in its shell (its ERR trap, its variables), never executed.

cosign_dir=$certs/cosign
mkdir -p "$cosign_dir"
# No transparency log, no timestamp authority, no Fulcio: a signing config without services, and a
# trusted root without authorities, so that cosign reaches nothing but the registry.
printf '%s\n' '{"mediaType": "application/vnd.dev.sigstore.signingconfig.v0.2+json", "caUrls": [], "oidcUrls": [], "rekorTlogUrls": [], "tsaUrls": [], "rekorTlogConfig": {"selector": "ANY"}, "tsaConfig": {"selector": "ANY"}}' \
  >"$cosign_dir/signing-config.json"
printf '%s\n' '{"mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1", "tlogs": [], "certificateAuthorities": [], "ctlogs": [], "timestampAuthorities": []}' \
  >"$cosign_dir/trusted-root.json"
cosign_args=(--yes --key "$key" --signing-config "$cosign_dir/signing-config.json" --trusted-root "$cosign_dir/trusted-root.json")
[[ -z $registry_ca ]] || cosign_args+=(--registry-cacert "$registry_ca")
skopeo_args=(--quiet --preserve-digests)
[[ -z $registry_ca ]] || skopeo_args+=(--dest-cert-dir "$certs")

for platform in "${platform_list[@]}"; do
  step "push and sign $platform"
  digest=${image_digest[$platform]}
  skopeo copy "${skopeo_args[@]}" "oci:$out/image:$version-${platform#linux/}" "docker://$image_repo@$digest" ||
    die "pushing the $platform image failed"
  cosign attest "${cosign_args[@]}" --type cyclonedx --predicate "$out/sbom-linux-${platform#linux/}.cdx.json" \
    "$image_repo@$digest" >/dev/null 2>"$certs/cosign.log" || { cat "$certs/cosign.log" >&2; die "attesting the SBOM of $platform"; }
  cosign sign "${cosign_args[@]}" "$image_repo@$digest" >/dev/null 2>"$certs/cosign.log" ||
    { cat "$certs/cosign.log" >&2; die "signing the $platform image"; }
done

step "push and sign the index"
skopeo copy "${skopeo_args[@]}" --multi-arch index-only "oci:$out/image:$version" "docker://$image_repo@$index_digest" ||
  die "pushing the index failed"
cosign sign "${cosign_args[@]}" "$image_repo@$index_digest" >/dev/null 2>"$certs/cosign.log" ||
  { cat "$certs/cosign.log" >&2; die "signing the index"; }

step "push and sign the chart"
helm_args=()
[[ -z $registry_ca ]] || helm_args+=(--ca-file "$registry_ca")
if [[ -n $existing_chart ]]; then
  chart_digest=$existing_chart
  log "the chart $version is in the registry already ($chart_digest, the same content): not pushed again"
else
  helm push "$chart" "oci://$chart_repo" "${helm_args[@]}" >"$certs/helm-push.log" 2>&1 ||
    { cat "$certs/helm-push.log" >&2; die "helm push failed"; }
  chart_digest=$(sed -n 's/^Digest: *\(sha256:[0-9a-f]*\).*/\1/p' "$certs/helm-push.log")
  [[ $chart_digest == sha256:* ]] || die "helm push said no digest: $(cat "$certs/helm-push.log")"
fi
cosign sign "${cosign_args[@]}" "$chart_repo/restarter@$chart_digest" >/dev/null 2>"$certs/cosign.log" ||
  { cat "$certs/cosign.log" >&2; die "signing the chart"; }
jq --arg d "$chart_digest" '.chart.digest = $d' "$out/release.json" >"$certs/release.json" && mv "$certs/release.json" "$out/release.json"
write_checksums

step "tag"
skopeo copy "${skopeo_args[@]}" --multi-arch index-only "oci:$out/image:$version" "docker://$image_repo:$version" ||
  die "tagging $image_repo:$version failed"
[[ $(manifest_digest restarter "$version") == "$index_digest" ]] || die "$image_repo:$version does not serve $index_digest"
trap - ERR
log "released $version ($revision): $image_repo:$version = $index_digest (signed, SBOMs attested),"
log "  chart oci://$chart_repo/restarter:$version = $chart_digest (signed), Krew archives and notes in $out"
