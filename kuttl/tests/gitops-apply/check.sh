#!/bin/sh
# check.sh MODE GENERATION REVISIONS: waits (bounded) until StatefulSet web-MODE has metadata
# generation GENERATION, exactly REVISIONS ControllerRevisions, and its template annotation for
# cfg-MODE equal to that ConfigMap's current <uid>/<resourceVersion>; then prints what it saw.
set -eu
mode=$1 generation=$2 revisions=$3
deadline=$(($(date +%s) + 100))
while :; do
  want=$(kubectl -n "$NAMESPACE" get configmap "cfg-$mode" -o jsonpath='{.metadata.uid}/{.metadata.resourceVersion}')
  sts=$(kubectl -n "$NAMESPACE" get statefulset "web-$mode" -o json)
  have=$(printf '%s' "$sts" | jq -r --arg k "configmap.restarter.stackable.tech/cfg-$mode" '.spec.template.metadata.annotations[$k] // "none"')
  gen=$(printf '%s' "$sts" | jq -r '.metadata.generation')
  revs=$(kubectl -n "$NAMESPACE" get controllerrevisions -o json |
    jq --arg n "web-$mode" '[.items[] | select(any(.metadata.ownerReferences[]?; .kind == "StatefulSet" and .name == $n))] | length')
  if [ "$have" = "$want" ] && [ "$gen" = "$generation" ] && [ "$revs" = "$revisions" ]; then
    echo "web-$mode: generation $gen, $revs ControllerRevisions, annotation $have"
    exit 0
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "FAIL: web-$mode: generation $gen (want $generation), $revs ControllerRevisions (want $revisions), annotation $have (want $want)"
    exit 1
  fi
  sleep 0.5
done
