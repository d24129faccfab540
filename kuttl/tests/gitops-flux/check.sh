#!/bin/sh
# check.sh GENERATION REVISIONS: waits (bounded) until StatefulSet web-flux has metadata generation
# GENERATION, exactly REVISIONS ControllerRevisions, and its template annotation for cfg-flux equal
# to that ConfigMap's current <uid>/<resourceVersion>; then prints what it saw and which field
# managers own that annotation (none: the webhook's, written at creation).
set -eu
generation=$1 revisions=$2
key=configmap.restarter.stackable.tech/cfg-flux
deadline=$(($(date +%s) + 100))
while :; do
  want=$(kubectl -n "$NAMESPACE" get configmap cfg-flux -o jsonpath='{.metadata.uid}/{.metadata.resourceVersion}')
  sts=$(kubectl -n "$NAMESPACE" get statefulset web-flux --show-managed-fields -o json)
  have=$(printf '%s' "$sts" | jq -r --arg k "$key" '.spec.template.metadata.annotations[$k] // "none"')
  gen=$(printf '%s' "$sts" | jq -r '.metadata.generation')
  revs=$(kubectl -n "$NAMESPACE" get controllerrevisions -o json |
    jq '[.items[] | select(any(.metadata.ownerReferences[]?; .kind == "StatefulSet" and .name == "web-flux"))] | length')
  if [ "$have" = "$want" ] && [ "$gen" = "$generation" ] && [ "$revs" = "$revisions" ]; then
    owners=$(printf '%s' "$sts" | jq -r --arg k "f:$key" '[.metadata.managedFields[]
      | select(.fieldsV1["f:spec"]["f:template"]["f:metadata"]["f:annotations"][$k] != null)
      | "\(.manager) (\(.operation))"] | if length == 0 then "no field manager" else join(", ") end')
    echo "web-flux: generation $gen, $revs ControllerRevisions, annotation $have, owned by $owners"
    exit 0
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "FAIL: web-flux: generation $gen (want $generation), $revs ControllerRevisions (want $revisions), annotation $have (want $want)"
    exit 1
  fi
  sleep 0.5
done
