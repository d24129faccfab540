#!/usr/bin/env bash
# Record a point in a test namespace's pod history, and later replay every pod event since then,
# in the order the API server committed them.
#
# Why: the order in which a controller creates, deletes or readies pods cannot be read from
# timestamps (one-second resolution, and kwok makes pods Ready within milliseconds). A watch that
# starts at a resourceVersion replays the events after it in commit order, which is proof.
#
# Usage (in kuttl TestStep scripts; kuttl sets NAMESPACE and KUBECONFIG):
#   pod-events.sh mark NAME     remember "now" (the pod list's resourceVersion) as NAME, kept in
#                               the ConfigMap pod-events-NAME of the test namespace
#   pod-events.sh follow NAME   mark NAME and keep a watch open from it, recording every event
#                               as it comes (bounded: FOLLOW_SECONDS): its replay then does not
#                               need the apiserver's watch cache to still hold the mark, so a
#                               history may take minutes (a PodDisruptionBudget holding a roll
#                               for its 2-minute disruptedPods expiry) without a 410 Gone
#   pod-events.sh replay NAME   print every pod event since mark NAME, oldest first, one a line:
#                               TYPE POD UID READY TERMINATING IMAGE
#                               TYPE: ADDED|MODIFIED|DELETED; READY: true|false (Ready condition);
#                               TERMINATING: true|false (deletionTimestamp set, or DELETED);
#                               IMAGE: the first container's image
#                               A replay briefly creates (and deletes) a sentinel pod
#                               pod-events-end-NAME that is bound to no real Node.
# Needs kubectl and jq. Exits non-zero, with a message on stderr, when the history cannot be
# replayed completely (for example 410 Gone: the mark fell out of the API server's watch cache).
set -euo pipefail

die() { printf 'pod-events: %s\n' "$*" >&2; exit 1; }

: "${NAMESPACE:?NAMESPACE must be set (kuttl sets it)}"
command -v jq >/dev/null || die "jq is needed"

# Upper bound on waiting for the replay (the history itself arrives at once).
REPLAY_SECONDS=60
# Upper bound on a follow's watch (the apiserver ends it then; a replay after that fails).
FOLLOW_SECONDS=900
# Where a follow records its watch: one file a namespace and mark, and the watcher's PID.
FOLLOW_DIR=${TMPDIR:-/tmp}/restarter-kuttl/pod-events
# Pods whose name starts with this are the sentinels of this script, never part of its output.
SENTINEL_PREFIX=pod-events-end-

mark() {
  local rv
  # The list's own resourceVersion (kubectl get would rebuild the list client-side without it).
  rv=$(kubectl get --raw "/api/v1/namespaces/$NAMESPACE/pods?limit=1" | jq -r '.metadata.resourceVersion // empty') \
    || die "cannot list pods"
  [[ -n $rv ]] || die "no resourceVersion from the pod list"
  kubectl -n "$NAMESPACE" create configmap "pod-events-$1" --from-literal=resourceVersion="$rv" >/dev/null \
    || die "cannot create ConfigMap pod-events-$1"
}

follow() {
  local rv record="$FOLLOW_DIR/$NAMESPACE-$1"
  mark "$1"
  rv=$(kubectl -n "$NAMESPACE" get configmap "pod-events-$1" -o jsonpath='{.data.resourceVersion}') \
    || die "no mark named $1"
  mkdir -p "$FOLLOW_DIR"
  kubectl get --raw \
    "/api/v1/namespaces/$NAMESPACE/pods?watch=true&resourceVersion=$rv&timeoutSeconds=$FOLLOW_SECONDS" \
    >"$record.json" 2>&1 </dev/null &
  echo $! >"$record.pid"
}

# Parsed events of file $1 (one watch event a line; a cut-off last line is skipped).
events_in() { jq -cR 'fromjson? // empty' "$1"; }

# Does file $1 hold an event that the jq filter $2 selects? (Not jq -e: jq 1.6 exits 0 on no input.)
has_event() { [[ -n $(events_in "$1" | jq -c "$2") ]]; }

# How do we know the replay is complete? We create a sentinel pod first, then replay until its
# ADDED event arrives: everything committed before it has been seen, and nothing is left to time.
# The sentinel is bound to a Node that does not exist, so neither the scheduler nor kwok touch it.
replay() {
  local rv sentinel="$SENTINEL_PREFIX$1" out watcher deadline
  rv=$(kubectl -n "$NAMESPACE" get configmap "pod-events-$1" -o jsonpath='{.data.resourceVersion}') \
    || die "no mark named $1 (run: pod-events.sh mark $1)"
  kubectl -n "$NAMESPACE" delete pod "$sentinel" --grace-period=0 --force --ignore-not-found >/dev/null 2>&1
  kubectl -n "$NAMESPACE" create -f - >/dev/null <<YAML || die "cannot create sentinel pod $sentinel"
apiVersion: v1
kind: Pod
metadata:
  name: $sentinel
spec:
  nodeName: pod-events-no-such-node
  automountServiceAccountToken: false
  containers:
  - name: sentinel
    image: sentinel.invalid/none
YAML
  if [[ -f $FOLLOW_DIR/$NAMESPACE-$1.pid ]]; then
    # Followed: the watch has been recording since the mark.
    out=$FOLLOW_DIR/$NAMESPACE-$1.json
    watcher=$(<"$FOLLOW_DIR/$NAMESPACE-$1.pid")
    rm -f "$FOLLOW_DIR/$NAMESPACE-$1.pid"
  else
    out=$(mktemp)
    kubectl get --raw \
      "/api/v1/namespaces/$NAMESPACE/pods?watch=true&resourceVersion=$rv&timeoutSeconds=$REPLAY_SECONDS" \
      >"$out" 2>&1 &
    watcher=$!
  fi
  deadline=$((SECONDS + REPLAY_SECONDS))
  until has_event "$out" "select(.type == \"ADDED\" and .object.metadata.name == \"$sentinel\")"; do
    if has_event "$out" 'select(.type == "ERROR")' || ! kill -0 "$watcher" 2>/dev/null; then
      die "watch from resourceVersion $rv ended early: $(head -c 2000 "$out")"
    fi
    ((SECONDS < deadline)) || die "sentinel $sentinel not seen within ${REPLAY_SECONDS}s"
    sleep 0.2
  done
  kill "$watcher" 2>/dev/null || true
  wait "$watcher" 2>/dev/null || true
  kubectl -n "$NAMESPACE" delete pod "$sentinel" --grace-period=0 --force --wait=false >/dev/null 2>&1 || true
  events_in "$out" | jq -r --arg s "$sentinel" --arg p "$SENTINEL_PREFIX" '
    select(.object.metadata.name | startswith($p) | not)
    | [.type, .object.metadata.name, .object.metadata.uid,
       ([.object.status.conditions[]? | select(.type == "Ready") | .status == "True"] | any),
       (.type == "DELETED" or .object.metadata.deletionTimestamp != null),
       .object.spec.containers[0].image] | @tsv'
  rm -f "$out"
}

case ${1:-} in
  mark) [[ -n ${2:-} ]] || die "usage: pod-events.sh mark NAME"; mark "$2" ;;
  follow) [[ -n ${2:-} ]] || die "usage: pod-events.sh follow NAME"; follow "$2" ;;
  replay) [[ -n ${2:-} ]] || die "usage: pod-events.sh replay NAME"; replay "$2" ;;
  *) die "usage: pod-events.sh mark|follow|replay NAME" ;;
esac
