#!/usr/bin/env bash
# Assertions on restarter's pod-template annotations, for kuttl TestStep scripts.
#
#   workload.sh version KIND NAME          "<uid>/<resourceVersion>" of a ConfigMap or Secret now
#   workload.sh annotation RES NAME KEY    the template annotation KEY of workload RES/NAME ("" if none)
#   workload.sh expect RES NAME KEY VALUE [SECONDS]
#                                          wait (bounded, default 90 s) until the annotation equals
#                                          VALUE ("" = absent); fails with what it saw
#   workload.sh field RES NAME JSONPATH    one field, e.g. '{.metadata.generation}'
#   workload.sh same WHAT WANT GOT         a check that says what it saw: fails with
#                                          "FAIL: WHAT: want 'WANT', got 'GOT'" unless equal
#                                          (a bare `test` fails a step without a word)
#   workload.sh described RES NAME [SECONDS]
#                                          wait (bounded, default 60 s) until the status describes
#                                          the current template (observedGeneration = generation):
#                                          from then on its ControllerRevision exists
#   workload.sh events RES NAME            reason and note of the Events regarding RES/NAME
#   workload.sh await-event RES NAME PATTERN [SECONDS]
#                                          wait (bounded, default 60 s) until a line of `events`
#                                          ("<reason>\t<note>") matches the basic regular expression
#                                          PATTERN; fails with the Events it saw. restarter records
#                                          an Event after the write it describes and after its log
#                                          line, so neither seeing the write nor the line means the
#                                          Event is stored yet
#   workload.sh pod-creations COUNT [SECONDS]
#                                          wait (bounded, default 60 s) until the StatefulSet
#                                          controller's Events in the namespace record COUNT pod
#                                          creations; any deletion, or more creations, fail at once.
#                                          It writes each Event after its create returns, from a
#                                          queue, so a pod can be Ready before its Event is stored
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

same() {
  [[ $3 == "$2" ]] || die "FAIL: $1: want '$2', got '$3'"
  echo "$1: $2"
}

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

await_event() {
  local res=$1 name=$2 pattern=$3 seconds=${4:-60} got deadline
  deadline=$((SECONDS + seconds))
  while :; do
    got=$(events "$res" "$name")
    if grep -q -- "$pattern" <<<"$got"; then
      echo "$res/$name Event: $(grep -m1 -- "$pattern" <<<"$got")"
      return 0
    fi
    ((SECONDS < deadline)) || die "FAIL: no Event of $res/$name matches '$pattern' after ${seconds}s; its Events: ${got:-none}"
    sleep 0.3
  done
}

pod_creations() {
  local want=$1 seconds=${2:-60} got creates deletes deadline
  deadline=$((SECONDS + seconds))
  while :; do
    got=$(kubectl -n "$NAMESPACE" get events -o json |
      jq -r '[.items[] | select(.involvedObject.kind == "StatefulSet")] as $e
        | "\([$e[] | select(.reason == "SuccessfulCreate") | .count // 1] | add // 0) \([$e[] | select(.reason == "SuccessfulDelete") | .count // 1] | add // 0)"')
    creates=${got% *} deletes=${got#* }
    ((deletes == 0 && creates <= want)) ||
      die "FAIL: the StatefulSet controller created $creates pods and deleted $deletes (want $want created, none deleted)"
    ((creates == want)) && { echo "StatefulSet controller: $creates pods created, none deleted"; return 0; }
    ((SECONDS < deadline)) || die "FAIL: the StatefulSet controller's Events record $creates of $want pod creations after ${seconds}s"
    sleep 0.5
  done
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
  same) same "$2" "$3" "$4" ;;
  described) described "$2" "$3" "${4:-60}" ;;
  events) events "$2" "$3" ;;
  await-event) await_event "$2" "$3" "$4" "${5:-60}" ;;
  pod-creations) pod_creations "$2" "${3:-60}" ;;
  writes) writes "$2" "$3" ;;
  *) die "usage: workload.sh version|annotation|expect|field|same|described|events|await-event|pod-creations|writes ..." ;;
esac
