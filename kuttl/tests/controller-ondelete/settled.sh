#!/usr/bin/env bash
# settled.sh WORKLOAD...: waits (bounded, 150 s) until each named StatefulSet (web) or DaemonSet
# (agent) has the controller's annotation in its template, its status describes that template,
# and every pod runs the update revision and is available (Ready for minReadySeconds). Prints the
# state it last saw on failure.
set -euo pipefail
deadline=$((SECONDS + 150))
state() {
  local kind=statefulset name=$1 want revision pods
  [[ $name == agent ]] && kind=daemonset
  kubectl -n "$NAMESPACE" get "$kind" "$name" -o json | jq -e '
    (.spec.template.metadata.annotations // {} | keys | map(startswith("configmap.restarter")) | any)
    and .status.observedGeneration == .metadata.generation' >/dev/null || { echo "$name: not annotated"; return 1; }
  if [[ $kind == statefulset ]]; then
    want=$(kubectl -n "$NAMESPACE" get statefulset "$name" -o jsonpath='{.status.updateRevision}')
    revision='.metadata.labels["controller-revision-hash"]'
    count=$(kubectl -n "$NAMESPACE" get statefulset "$name" -o jsonpath='{.spec.replicas}')
  else
    want=$(kubectl -n "$NAMESPACE" get controllerrevision -l app=agent -o json |
      jq -r '.items | max_by(.revision) | .metadata.labels["controller-revision-hash"]')
    revision='.metadata.labels["controller-revision-hash"]'
    count=$(kubectl -n "$NAMESPACE" get daemonset "$name" -o jsonpath='{.status.desiredNumberScheduled}')
  fi
  # Available, not only Ready: Ready for minReadySeconds (web has 2), as the roll counts it; a pod
  # Ready for less is what the roll replaces first, which would reorder the next roll.
  min=$(kubectl -n "$NAMESPACE" get "$kind" "$name" -o jsonpath='{.spec.minReadySeconds}')
  pods=$(kubectl -n "$NAMESPACE" get pods -l "app=$name" -o json | jq -r --arg w "$want" --argjson min "${min:-0}" "
    [.items[] | select(.metadata.deletionTimestamp == null)
      | select($revision == \$w)
      | select([.status.conditions[]? | select(.type == \"Ready\" and .status == \"True\"
          and ((.lastTransitionTime | fromdateiso8601) + \$min <= now))] | length == 1)] | length")
  [[ $pods == "$count" ]] || { echo "$name: $pods of $count pods available on $want"; return 1; }
}
for name in "$@"; do
  until out=$(state "$name"); do
    ((SECONDS < deadline)) || { echo "FAIL: $out"; exit 1; }
    sleep 0.5
  done
  echo "$name settled"
done
