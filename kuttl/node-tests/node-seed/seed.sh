#!/usr/bin/env bash
# Helpers of the node-seed suite (its step scripts run it from this directory; kuttl sets
# NAMESPACE and KUBECONFIG). The StatefulSet is `web` (3 replicas on the real node), its pods'
# state is kept under the suite's state directory.
#
#   seed.sh apply               the ConfigMap, the Secret and the labeled StatefulSet
#   seed.sh containers          one line per web pod: NAME UID RESTARTS STARTED-AT (sorted)
#   seed.sh settled             wait (bounded) until web has 3 pods Ready on its update revision
#                               and its status describes its template
#   seed.sh files WANT-GREETING WANT-PASSWORD
#                               fail unless `cat` of both subPath files in every web container
#                               prints the values wanted
#   seed.sh replaced-in-order MARK
#                               fail unless, since pod-events mark MARK, web-2, web-1, web-0 were
#                               replaced in that order, each once, and never two unavailable at once
#   seed.sh state               the suite's state directory
set -euo pipefail

die() { printf 'seed.sh: %s\n' "$*" >&2; exit 1; }
: "${NAMESPACE:?NAMESPACE must be set (kuttl sets it)}"
lib=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../lib" && pwd)
state=${TMPDIR:-/tmp}/restarter-kuttl-node-seed/$NAMESPACE
mkdir -p "$state"
WAIT_SECONDS=150

apply() {
  local placement
  placement=$("$lib/node.sh" placement-patch)
  kubectl -n "$NAMESPACE" create configmap app --from-literal=greeting=v1 --from-literal=unused=x
  kubectl -n "$NAMESPACE" create secret generic creds --from-literal=password=s1
  # The container reads both files only by subPath (which Kubernetes never refreshes in a running
  # container): only a new container sees a new value. TERM ends it within a second.
  jq -n --argjson placement "$placement" --arg image "$("$lib/node.sh" test-image)" '{
    apiVersion: "apps/v1", kind: "StatefulSet",
    metadata: {name: "web", labels: {"restarter.stackable.tech/enabled": "true"}},
    spec: {replicas: 3, serviceName: "web", selector: {matchLabels: {app: "web"}},
      template: {metadata: {labels: {app: "web"}},
        spec: ($placement + {terminationGracePeriodSeconds: 5,
          containers: [{name: "app", image: $image,
            command: ["sh", "-c", "trap \"exit 0\" TERM; while :; do sleep 1; done"],
            readinessProbe: {exec: {command: ["cat", "/etc/app/greeting", "/etc/app/password"]}, periodSeconds: 1},
            volumeMounts: [
              {name: "config", mountPath: "/etc/app/greeting", subPath: "greeting"},
              {name: "creds", mountPath: "/etc/app/password", subPath: "password"}]}],
          volumes: [{name: "config", configMap: {name: "app"}}, {name: "creds", secret: {secretName: "creds"}}]})}}}' |
    kubectl -n "$NAMESPACE" create -f -
}

containers() {
  kubectl -n "$NAMESPACE" get pods -l app=web -o json | jq -r '.items[] |
    "\(.metadata.name) \(.metadata.uid) \(.status.containerStatuses[0].restartCount) \(.status.containerStatuses[0].state.running.startedAt // "-")"' | sort
}

settled() {
  local deadline=$((SECONDS + WAIT_SECONDS)) out
  while :; do
    out=$(kubectl -n "$NAMESPACE" get statefulset web -o json | jq -r '
      if .status.observedGeneration == .metadata.generation and .status.readyReplicas == 3
        and .status.updatedReplicas == 3 and .status.currentRevision == .status.updateRevision
      then "" else "generation \(.metadata.generation) observed \(.status.observedGeneration) ready \(.status.readyReplicas) updated \(.status.updatedReplicas)" end')
    [[ -z $out ]] && return 0
    ((SECONDS < deadline)) || die "web not settled after ${WAIT_SECONDS}s: $out"
    sleep 1
  done
}

files() {
  local pod got
  for pod in web-0 web-1 web-2; do
    got=$(kubectl -n "$NAMESPACE" exec "$pod" -- cat /etc/app/greeting)
    [[ $got == "$1" ]] || die "$pod's /etc/app/greeting is '$got', not '$1'"
    got=$(kubectl -n "$NAMESPACE" exec "$pod" -- cat /etc/app/password)
    [[ $got == "$2" ]] || die "$pod's /etc/app/password is '$got', not '$2'"
  done
  echo "every web container reads greeting=$1 password=$2"
}

# From the pod history (pod-events.sh: TYPE POD UID READY TERMINATING IMAGE, tab-separated, in
# commit order): the old pods' uids are those in $state/before.
replaced_in_order() {
  "$lib/pod-events.sh" replay "$1" | awk -F'\t' -v olds="$(awk '{ printf "%s %s ", $1, $2 }' "$state/before")" '
    BEGIN { m = split(olds, f, " "); for (i = 1; i < m; i += 2) { old[f[i + 1]] = f[i]; up[f[i + 1]] = 1 } }
    index($2, "web-") != 1 { next }
    !($3 in old) && !($3 in fresh) { fresh[$3] = $2; nfresh++ }
    {
      up[$3] = ($4 == "true" && $5 == "false")
      if (($3 in old) && $5 == "true" && !($3 in gone)) { gone[$3] = 1; order = order " " $2 }
      avail = 0
      for (u in up) avail += up[u]
      if (3 - avail > max) max = 3 - avail
    }
    END {
      for (u in old) if (!(u in gone)) { print "FAIL: old " old[u] " was not replaced"; exit 1 }
      if (nfresh != 3) { print "FAIL: " nfresh " new web pods, not 3"; exit 1 }
      if (order != " web-2 web-1 web-0") { print "FAIL: replaced in the order" order; exit 1 }
      if (max > 1) { print "FAIL: " max " web pods unavailable at once"; exit 1 }
      print "web replaced in the order" order ", each once, at most " max " unavailable"
    }'
}

case ${1:-} in
  apply) apply ;;
  containers) containers ;;
  settled) settled ;;
  files) files "${2:?GREETING}" "${3:?PASSWORD}" ;;
  replaced-in-order) replaced_in_order "${2:?MARK}" ;;
  state) echo "$state" ;;
  *) die "usage: seed.sh apply|containers|settled|files G P|replaced-in-order MARK|state" ;;
esac
