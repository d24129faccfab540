#!/usr/bin/env bash
# Assertions on restarter's pod-template annotations, for kuttl TestStep scripts.
#
#   workload.sh version KIND NAME          "<uid>/<resourceVersion>" of a ConfigMap or Secret now
#   workload.sh annotation RES NAME KEY    the template annotation KEY of workload RES/NAME ("" if none)
#   workload.sh expect RES NAME KEY VALUE [SECONDS]
#                                          wait (bounded, default 90 s) until the annotation equals
#                                          VALUE ("" = absent); fails with what it saw
#   workload.sh field RES NAME JSONPATH    one field, e.g. '{.metadata.generation}'
#   workload.sh described RES NAME [SECONDS]
#                                          wait (bounded, default 60 s) until the status describes
#                                          the current template (observedGeneration = generation):
#                                          from then on its ControllerRevision exists
#   workload.sh events RES NAME            reason and note of the Events regarding RES/NAME
#   workload.sh writes RES NAME            one line that changes whenever anyone but the status writers
#                                          (the workload's own controller) writes RES/NAME: spec,
#                                          labels, annotations, generation and the non-status
#                                          managedFields entries. resourceVersion is no use for "was it
#                                          written": status updates (replicas, readiness) change it too.
#
# RES is statefulset, deployment or daemonset; KEY e.g. configmap.restarter.stackable.tech/app.
set -euo pipefail

die() { printf 'workload.sh: %s\n' "$*" >&2; exit 1; }
: "${NAMESPACE:?NAMESPACE must be set (kuttl sets it)}"

version() {
  kubectl -n "$NAMESPACE" get "$1" "$2" -o jsonpath='{.metadata.uid}/{.metadata.resourceVersion}'
}

annotation() {
  kubectl -n "$NAMESPACE" get "$1" "$2" -o json |
    jq -r --arg k "$3" '.spec.template.metadata.annotations[$k] // ""'
}

expect() {
  local res=$1 name=$2 key=$3 want=$4 seconds=${5:-90} got deadline
  deadline=$((SECONDS + seconds))
  while :; do
    got=$(annotation "$res" "$name" "$key")
    [[ $got == "$want" ]] && { echo "$res/$name $key = ${want:-<absent>}"; return 0; }
    ((SECONDS < deadline)) || die "$res/$name $key: want '${want}', got '${got}' after ${seconds}s"
    sleep 0.2
  done
}

field() { kubectl -n "$NAMESPACE" get "$1" "$2" -o jsonpath="$3"; }

described() {
  local res=$1 name=$2 seconds=${3:-60} got deadline
  deadline=$((SECONDS + seconds))
  while :; do
    got=$(field "$res" "$name" '{.status.observedGeneration} {.metadata.generation}')
    [[ ${got% *} == "${got#* }" ]] && return 0
    ((SECONDS < deadline)) || die "$res/$name: observedGeneration and generation are '$got' after ${seconds}s"
    sleep 0.2
  done
}

events() {
  local kind
  kind=$(kubectl -n "$NAMESPACE" get "$1" "$2" -o jsonpath='{.kind}')
  kubectl -n "$NAMESPACE" get events.events.k8s.io -o json |
    jq -r --arg k "$kind" --arg n "$2" \
      '.items[] | select(.regarding.kind == $k and .regarding.name == $n) | "\(.reason)\t\(.note)"'
}

writes() {
  # -o json leaves managedFields out unless asked for.
  kubectl -n "$NAMESPACE" get "$1" "$2" -o json --show-managed-fields |
    jq -c '{generation: .metadata.generation, labels: .metadata.labels,
            annotations: .metadata.annotations, spec: .spec,
            writers: [.metadata.managedFields[] | select(.subresource != "status")
                      | {manager, operation, time}]}'
}

case ${1:-} in
  version) version "$2" "$3" ;;
  annotation) annotation "$2" "$3" "$4" ;;
  expect) expect "$2" "$3" "$4" "${5:-}" "${6:-90}" ;;
  field) field "$2" "$3" "$4" ;;
  described) described "$2" "$3" "${4:-60}" ;;
  events) events "$2" "$3" ;;
  writes) writes "$2" "$3" ;;
  *) die "usage: workload.sh version|annotation|expect|field|described|events|writes ..." ;;
esac
