#!/usr/bin/env bash
# What the suites that attack serve-webhook share (webhook-hostile, webhook-fair-admission,
# webhook-client-auth, webhook-lookup-bounds): sourced by their scripts, never run. kuttl sets
# NAMESPACE and KUBECONFIG; the scripts run from their suite's directory and use `set -euo pipefail`.
#
# Sourcing it defines:
#   tool, work             tests/tools/hostile_client.py; a scratch directory, removed on exit
#                          (a hold's output goes to $work/hold.out: await_hold prints it)
#   fail TEXT              prints "FAIL: TEXT" and counts it in $failures; the script goes on
#   finish TEXT            exits 1 when any check failed (saying how many), else prints TEXT
#   track PID              a background tool to stop (SIGTERM, bounded wait) on exit
#   stop_tool PID          stops one now (SIGTERM; SIGKILL after 15 s), after its report is written
#   fail_lines             reads lines on stdin: "FAIL: ..." ones are counted by fail, others echoed
#                          (feed it by redirection, `fail_lines < <(...)`: in a pipe it would
#                          count in a subshell)
#   webhook_metric PREFIX  the sum of the series of the webhook `wh` (kuttl/lib/webhook.sh) whose
#                          line starts with PREFIX
#   statefulsets PREFIX COUNT REPLICAS CONFIGMAP [LABEL]
#                          YAML of COUNT labeled StatefulSets PREFIX-1..COUNT, each with REPLICAS
#                          replicas mounting the ConfigMap CONFIGMAP ("{i}" in it is the index),
#                          the extra label LABEL ("key: value") if given
#   await_hold PID STATUS N SECONDS
#                          waits (bounded) until every group of `hostile_client.py hold` (process
#                          PID, its --status file STATUS) has reached N connections or all it has; a
#                          failure if not within SECONDS, and exits 1 if the tool died
#   check_probes STATUS THRESHOLD
#                          `hostile_client.py probe`'s report (its --status file): prints every
#                          URL's figures; a failure for each URL never probed or with THRESHOLD
#                          probes in a row unanswered within the probe timeout: what makes a
#                          kubelet restart the container (failureThreshold). The prober probes
#                          every 0.25 s, the kubelet every 10 s, so this is the stricter test; one
#                          probe late on a loaded machine (an ASan build: 1.0017 s) restarts nothing
#   check_no_warning FILE  a failure when kubectl's stderr FILE holds a warning naming restarter
#   check_annotated SELECTOR PREFIX CONFIGMAP COUNT [--revisions]
#                          the StatefulSets of SELECTOR were annotated at creation: COUNT of them,
#                          each PREFIX-i at generation 1 whose template annotation for CONFIGMAP
#                          ("{i}" is its index) is that ConfigMap's <uid>/<resourceVersion>; with
#                          --revisions each has one ControllerRevision
#   check_no_fail_open     a failure when the apiserver counted a review of `wh` that failed open

# shellcheck disable=SC2034  # used by the scripts that source this one
tool=../../../tests/tools/hostile_client.py
work=$(mktemp -d)
failures=0
tracked=()

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

finish() {
  if ((failures > 0)); then
    echo "$failures checks failed"
    exit 1
  fi
  echo "$1"
}

stop_tool() {
  local pid=$1 deadline=$((SECONDS + 15))
  [[ -n $pid ]] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null; do
    ((SECONDS < deadline)) || { kill -KILL "$pid" 2>/dev/null || true; break; }
    sleep 0.1
  done
  wait "$pid" 2>/dev/null || true
}

track() { tracked+=("$1"); }

hostile_cleanup() {
  local pid
  for pid in "${tracked[@]}"; do stop_tool "$pid"; done
  rm -rf "$work"
}
trap hostile_cleanup EXIT

fail_lines() {
  local line
  while read -r line; do
    case $line in
      FAIL:*) fail "${line#FAIL: }" ;;
      *) echo "$line" ;;
    esac
  done
}

webhook_metric() {
  ../../lib/webhook.sh metrics wh | awk -v p="$1" 'index($0, p) == 1 { s += $NF } END { printf "%d\n", s }'
}

statefulsets() {
  local prefix=$1 count=$2 replicas=$3 configmap=$4 label=${5:-} i
  for i in $(seq 1 "$count"); do
    cat <<YAML
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: $prefix-$i
  labels:
    restarter.stackable.tech/enabled: "true"
${label:+    $label
}spec:
  serviceName: $prefix-$i
  replicas: $replicas
  selector:
    matchLabels:
      app: $prefix-$i
  template:
    metadata:
      labels:
        app: $prefix-$i
    spec:
      terminationGracePeriodSeconds: 1
      volumes:
        - name: config
          configMap:
            name: ${configmap//\{i\}/$i}
      containers:
        - name: app
          image: registry.invalid/$prefix:1
YAML
  done
}

await_hold() {
  local holder=$1 status=$2 n=$3 seconds=$4 deadline
  deadline=$((SECONDS + seconds))
  until jq -e --argjson n "$n" '[.groups[] | .reached >= ([.count, $n] | min)] | all' "$status" >/dev/null 2>&1; do
    kill -0 "$holder" 2>/dev/null || { cat "$work/hold.out" 2>/dev/null; echo "FAIL: hostile_client.py hold exited"; exit 1; }
    if ((SECONDS >= deadline)); then
      fail "not every group had $n connections open within $seconds s: $(jq -c '[.groups[] | {hold, reached, open, connecting, handshake_timeouts, connect_errors, last_connect_error}]' "$status")"
      return 0
    fi
    sleep 0.2
  done
}

check_probes() {
  local status=$1 threshold=$2 bad
  jq -r '"probe timeout \(.timeout_seconds) s", (.probes[] | "/healthz \(.url): \(.probes) probes, \(.failures) failed (at most \(.longest_failure_run) in a row), max \(.max_seconds) s, p99 \(.p99_seconds) s, p50 \(.p50_seconds) s")' \
    "$status"
  while read -r bad; do
    fail "/healthz failed $threshold probes in a row (a kubelet would restart the container): $bad"
  done < <(jq -c --argjson n "$threshold" \
    '.probes[] | select(.probes == 0 or .longest_failure_run >= $n) | {url, probes, failures, longest_failure_run, max_seconds, first_failures}' \
    "$status")
}

check_no_warning() {
  if grep -qi restarter "$1"; then
    fail "the webhook warned: $(grep -i restarter "$1" | head -3)"
  fi
}

check_annotated() {
  local selector=$1 prefix=$2 configmap=$3 count=$4 revisions=false
  [[ ${5:-} == --revisions ]] && revisions=true
  kubectl -n "$NAMESPACE" get statefulsets -l "$selector" -o json >"$work/annotated-sts.json"
  kubectl -n "$NAMESPACE" get configmaps -o json >"$work/annotated-cms.json"
  if $revisions; then
    kubectl -n "$NAMESPACE" get controllerrevisions -o json >"$work/annotated-revs.json"
  else
    echo '{"items": []}' >"$work/annotated-revs.json"
  fi
  fail_lines < <(jq -n -r --argjson count "$count" --arg prefix "$prefix" --arg configmap "$configmap" \
    --argjson revisions "$revisions" --slurpfile s "$work/annotated-sts.json" \
    --slurpfile c "$work/annotated-cms.json" --slurpfile r "$work/annotated-revs.json" '
    $s[0] as $sts | $c[0] as $cms | $r[0] as $revs |
    def version(name): ($cms.items[] | select(.metadata.name == name) | "\(.metadata.uid)/\(.metadata.resourceVersion)");
    if ($sts.items | length) != $count then "FAIL: \($sts.items | length) StatefulSets, not \($count)" else empty end,
    ([$sts.items[] | .metadata.name as $n | ($n | ltrimstr("\($prefix)-")) as $i
      | ($configmap | split("{i}") | join($i)) as $cm
      | ((.spec.template.metadata.annotations // {})["configmap.restarter.stackable.tech/\($cm)"] // "") as $a
      | ([$revs.items[] | select(any(.metadata.ownerReferences[]?; .kind == "StatefulSet" and .name == $n))] | length) as $nrev
      | if .metadata.generation != 1 then "FAIL: \($n) has generation \(.metadata.generation) (annotation \($a))"
        elif $a != version($cm) then "FAIL: \($n) was not annotated at creation with its ConfigMap (\($a))"
        elif $revisions and $nrev != 1 then "FAIL: \($n) has \($nrev) ControllerRevisions"
        else empty end]
      | if length == 0 then "all \($count) annotated at creation: generation 1, their ConfigMaps\(if $revisions then ", one ControllerRevision" else "" end)" else .[] end)')
}

check_no_fail_open() {
  local open
  open=$(../../lib/webhook.sh apiserver-count wh apiserver_admission_webhook_fail_open_count)
  ((open == 0)) || fail "the apiserver failed open $open times (the webhook did not answer in time)"
}
