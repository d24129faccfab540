#!/usr/bin/env bash
# webhook-annotation-limit (README.md): labeled StatefulSets whose pod-template annotations (big)
# or own metadata annotations (bigmeta, biglabel) are MARGIN bytes under the apiserver's limit (the
# sum of len(key) + len(value) of one object's annotations may be at most 262144 bytes, for the
# metadata and the pod template separately), referencing ConfigMap big-config, so restarter's
# write (its template annotation for it, 45 bytes of key alone; or its content record in the
# metadata) cannot fit.
#   limit.sh create      create big: the apiserver accepts it (the webhook must not push it over
#                        the limit); kubectl prints the webhook's warning, which names restarter;
#                        no restarter annotation was added; generation 1
#   limit.sh controller  serve-controller records exactly one Warning Event on big, and no more
#                        after POKES further reconciles of it (each poke changes an ignore
#                        annotation naming a ConfigMap it does not reference: nothing to do, but
#                        a reconcile; each awaited on the controller's reconcile count); the
#                        controller made no StatefulSet write for them; generation still 1, still
#                        no restarter annotation
#   limit.sh metadata    create bigmeta (labeled, metadata annotations near the limit) and
#                        biglabel (the same, not labeled), then `kubectl label` biglabel to opt it
#                        in: both accepted with the webhook's warning naming the metadata
#                        annotations, nothing of restarter's added to either; then one Warning
#                        Event AnnotationsTooLarge from serve-controller on each, and explain-restart
#                        and status show the write as refused (refused-too-large), not as due
# Prints every failure, then exits 1.
set -euo pipefail

LIMIT=262144          # the apiserver's TotalAnnotationSizeLimitB (256 KiB)
MARGIN=40             # bytes left under it
POKES=3
WAIT_SECONDS=90       # bound on each wait; each returns as soon as its condition holds
name=big
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# Sum of len(key) + len(value) over the pod template's annotations, in bytes (as the apiserver counts).
template_bytes() {
  kubectl -n "$NAMESPACE" get statefulset "$name" -o json |
    jq '[.spec.template.metadata.annotations // {} | to_entries[] | (.key | utf8bytelength) + (.value | utf8bytelength)] | add // 0'
}

metadata_bytes() {  # metadata_bytes NAME
  kubectl -n "$NAMESPACE" get statefulset "$1" -o json |
    jq '[.metadata.annotations // {} | to_entries[] | (.key | utf8bytelength) + (.value | utf8bytelength)] | add // 0'
}

restarter_annotations() {
  kubectl -n "$NAMESPACE" get statefulset "$name" -o json |
    jq -c '[.spec.template.metadata.annotations // {} | keys[] | select(test("restarter\\.stackable\\.tech/"))]'
}

# Every restarter.stackable.tech/ annotation of statefulset NAME, template and metadata (the
# metadata's ignore rules excepted: the test writes those).
all_restarter_annotations() {
  kubectl -n "$NAMESPACE" get statefulset "$1" -o json |
    jq -c '[(.spec.template.metadata.annotations // {} | keys[]), (.metadata.annotations // {} | keys[])
            | select(test("restarter\\.stackable\\.tech/") and (test("/ignore-") | not))]'
}

check_untouched() {
  local generation annotations bytes
  generation=$(../../lib/workload.sh field statefulset "$name" '{.metadata.generation}')
  annotations=$(restarter_annotations)
  bytes=$(template_bytes)
  echo "statefulset/$name: generation $generation, template annotations $bytes bytes, restarter annotations $annotations"
  [[ $generation == 1 ]] || fail "generation is $generation, not 1"
  [[ $annotations == "[]" ]] || fail "restarter annotations were added: $annotations"
  [[ $bytes == $((LIMIT - MARGIN)) ]] || fail "the template annotations are $bytes bytes, not $((LIMIT - MARGIN))"
}

create() {
  python3 - "$name" "$LIMIT" "$MARGIN" >"$work/statefulset.json" <<'PY'
import json
import sys

name, limit, margin = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
total = limit - margin
annotations = {"example.com/owner": "webhook-annotation-limit", "example.com/filler": ""}
used = sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items())
annotations["example.com/filler"] = "x" * (total - used)
assert sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items()) == total
json.dump({
    "apiVersion": "apps/v1", "kind": "StatefulSet",
    "metadata": {"name": name, "labels": {"restarter.stackable.tech/enabled": "true"}},
    "spec": {
        "serviceName": name, "replicas": 1,
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}, "annotations": annotations},
            "spec": {
                "terminationGracePeriodSeconds": 1,
                "volumes": [{"name": "config", "configMap": {"name": "big-config"}}],
                "containers": [{"name": "app", "image": "registry.invalid/annotation-limit:1"}],
            },
        },
    },
}, sys.stdout)
PY
  echo "creating statefulset/$name: template annotations $((LIMIT - MARGIN)) bytes, $MARGIN under the limit of $LIMIT"
  # create, not apply: apply would also store the whole object in an annotation of the StatefulSet.
  if ! kubectl -n "$NAMESPACE" create -f "$work/statefulset.json" >"$work/out" 2>"$work/err"; then
    echo "FAIL: the StatefulSet was not created: $(cat "$work/err")"
    exit 1
  fi
  cat "$work/out"
  if grep -E '^Warning: .*restarter' "$work/err"; then
    echo "(the webhook's warning, as kubectl printed it)"
  else
    fail "kubectl printed no warning naming restarter (stderr: $(cat "$work/err"))"
  fi
  check_untouched
}

# The Warning Events restarter recorded on the StatefulSet (a series counts as its count).
warnings() {
  kubectl -n "$NAMESPACE" get events.events.k8s.io -o json |
    jq --arg n "$name" '[.items[] | select(.regarding.kind == "StatefulSet" and .regarding.name == $n
                           and .type == "Warning" and ((.reportingController // "") | test("restarter")))]'
}
count_warnings() { jq '[.[] | .series.count // .deprecatedCount // 1] | add // 0'; }

counter() {  # counter REGEX: the sum of the controller's metric lines matching REGEX
  ../../lib/controller.sh metrics | awk -v re="$1" '$0 ~ re { s += $NF } END { print s + 0 }'
}
reconciles() { counter '^restarter_controller_reconciles_total\\{controller="statefulset"'; }
applies() { counter '^restarter_controller_writes_total\\{resource="statefulsets"'; }

controller() {
  local deadline count before after k applies_before
  deadline=$((SECONDS + WAIT_SECONDS))
  until [[ $(warnings | count_warnings) -ge 1 ]]; do
    if ((SECONDS >= deadline)); then
      echo "FAIL: no Warning Event from restarter on statefulset/$name within ${WAIT_SECONDS} s; controller log:"
      ../../lib/controller.sh log | tail -5
      exit 1
    fi
    sleep 0.5
  done
  warnings | jq -r '.[] | "Warning Event \(.reason) by \(.reportingController): \(.note)"'
  applies_before=$(applies)
  for k in $(seq 1 "$POKES"); do
    before=$(reconciles)
    kubectl -n "$NAMESPACE" annotate statefulset "$name" --overwrite \
      "restarter.stackable.tech/ignore-configmap.poke=not-referenced-$k" >/dev/null
    deadline=$((SECONDS + WAIT_SECONDS))
    until (($(reconciles) > before)); do
      if ((SECONDS >= deadline)); then
        fail "poke $k: the controller did not reconcile statefulset/$name within ${WAIT_SECONDS} s"
        break
      fi
      sleep 0.2
    done
  done
  after=$(applies)
  count=$(warnings | count_warnings)
  echo "after $POKES more reconciles ($(reconciles) in all): $count Warning Event(s); StatefulSet writes $applies_before -> $after"
  [[ $count == 1 ]] || fail "$count Warning Events from restarter, not exactly 1: $(warnings | jq -c '[.[] | {reason, note}]')"
  [[ $after == "$applies_before" ]] || fail "the controller wrote the StatefulSet $((after - applies_before)) more times though nothing changed"
  check_untouched
}

# A StatefulSet NAME (labeled when LABELED is true) whose metadata annotations total MARGIN bytes
# under the limit, as JSON on stdout.
metadata_statefulset() {
  python3 - "$1" "$2" "$LIMIT" "$MARGIN" <<'PY'
import json
import sys

name, labeled, limit, margin = sys.argv[1], sys.argv[2] == "true", int(sys.argv[3]), int(sys.argv[4])
total = limit - margin
annotations = {"example.com/owner": "webhook-annotation-limit", "example.com/filler": ""}
used = sum(len(k.encode()) + len(v.encode()) for k, v in annotations.items())
annotations["example.com/filler"] = "x" * (total - used)
labels = {"restarter.stackable.tech/enabled": "true"} if labeled else {}
json.dump({
    "apiVersion": "apps/v1", "kind": "StatefulSet",
    "metadata": {"name": name, "labels": labels, "annotations": annotations},
    "spec": {
        "serviceName": name, "replicas": 1,
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {
                "terminationGracePeriodSeconds": 1,
                "volumes": [{"name": "config", "configMap": {"name": "big-config"}}],
                "containers": [{"name": "app", "image": "registry.invalid/annotation-limit:1"}],
            },
        },
    },
}, sys.stdout)
PY
}

# The warning kubectl printed in FILE names restarter and the metadata annotations.
expect_metadata_warning() {
  if grep -E '^Warning: .*restarter.*metadata annotations' "$1"; then
    echo "(the webhook's warning, as kubectl printed it)"
  else
    fail "$2: kubectl printed no warning naming restarter and the metadata annotations (stderr: $(cat "$1"))"
  fi
}

# statefulset NAME carries nothing of restarter's and its metadata annotations are as sent.
check_metadata_untouched() {
  local annotations bytes
  annotations=$(all_restarter_annotations "$1")
  bytes=$(metadata_bytes "$1")
  echo "statefulset/$1: metadata annotations $bytes bytes, restarter annotations $annotations"
  [[ $annotations == "[]" ]] || fail "$1: restarter annotations were added: $annotations"
  [[ $bytes == $((LIMIT - MARGIN)) ]] || fail "$1: the metadata annotations are $bytes bytes, not $((LIMIT - MARGIN))"
}

# The Warning Events AnnotationsTooLarge restarter recorded on statefulset NAME.
too_large_events() {
  kubectl -n "$NAMESPACE" get events.events.k8s.io -o json |
    jq --arg n "$1" '[.items[] | select(.regarding.kind == "StatefulSet" and .regarding.name == $n
                       and .type == "Warning" and .reason == "AnnotationsTooLarge")]'
}

metadata() {
  local sts deadline explanation
  metadata_statefulset bigmeta true >"$work/bigmeta.json"
  metadata_statefulset biglabel false >"$work/biglabel.json"
  echo "creating statefulset/bigmeta (labeled) and biglabel: metadata annotations $((LIMIT - MARGIN)) bytes"
  if ! kubectl -n "$NAMESPACE" create -f "$work/bigmeta.json" >"$work/out" 2>"$work/err"; then
    echo "FAIL: statefulset/bigmeta was not created: $(cat "$work/err")"
    exit 1
  fi
  expect_metadata_warning "$work/err" "create bigmeta"
  kubectl -n "$NAMESPACE" create -f "$work/biglabel.json" >/dev/null
  if ! kubectl -n "$NAMESPACE" label statefulset biglabel restarter.stackable.tech/enabled=true \
    >"$work/out" 2>"$work/err"; then
    echo "FAIL: kubectl label of statefulset/biglabel was refused: $(cat "$work/err")"
    exit 1
  fi
  expect_metadata_warning "$work/err" "label biglabel"
  for sts in bigmeta biglabel; do
    check_metadata_untouched "$sts"
    deadline=$((SECONDS + WAIT_SECONDS))
    until [[ $(too_large_events "$sts" | count_warnings) -ge 1 ]]; do
      if ((SECONDS >= deadline)); then
        fail "no AnnotationsTooLarge Event on statefulset/$sts within ${WAIT_SECONDS} s"
        ../../lib/controller.sh log | tail -5
        break
      fi
      sleep 0.5
    done
    too_large_events "$sts" | jq -r '.[] | "Warning Event \(.reason): \(.note)"'
    check_metadata_untouched "$sts"
    # Nothing restarter does waits for the StatefulSet controller here (it writes nothing), and
    # explain-restart exits 5 while the workload has no ControllerRevision yet.
    ../../lib/workload.sh described statefulset "$sts"
    explanation=$(sh ../../lib/restarter.sh explain-restart "statefulset/$sts" -n "$NAMESPACE" -o json)
    printf '%s\n' "$explanation" | jq -e '.pending.status == "refused-too-large"
      and (.pending.reason | test("metadata annotations would be [0-9]+ bytes"))' >/dev/null ||
      fail "$sts: explain-restart's pending is not refused-too-large: $(printf '%s' "$explanation" | jq -c .pending)"
    text=$(sh ../../lib/restarter.sh explain-restart "statefulset/$sts" -n "$NAMESPACE" --no-color)
    grep -q '^Pending: refused: annotations too large: ' <<<"$text" ||
      fail "$sts: explain-restart's text does not say the write is refused: $(grep '^Pending' <<<"$text")"
    sh ../../lib/restarter.sh status -n "$NAMESPACE" | grep -E "^statefulset/$sts .*refused: annotations too large" ||
      fail "$sts: status does not show the refusal: $(sh ../../lib/restarter.sh status -n "$NAMESPACE")"
  done
}

case ${1:-} in
  create) create ;;
  controller) controller ;;
  metadata) metadata ;;
  *) echo "usage: limit.sh create|controller|metadata" >&2; exit 2 ;;
esac
if ((failures > 0)); then
  echo "$failures checks failed"
  exit 1
fi
echo "all checks passed"
