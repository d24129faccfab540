#!/usr/bin/env bash
# webhook-annotation-limit (README.md): a labeled StatefulSet whose pod-template annotations are
# MARGIN bytes under the apiserver's limit (the sum of len(key) + len(value) of one object's
# annotations may be at most 262144 bytes), referencing ConfigMap big-config, so restarter's
# annotation for it (45 bytes of key alone) cannot fit.
#   limit.sh create      create it: the apiserver accepts it (the webhook must not push it over
#                        the limit); kubectl prints the webhook's warning, which names restarter;
#                        no restarter annotation was added; generation 1
#   limit.sh controller  serve-controller records exactly one Warning Event on it, and no more
#                        after POKES further reconciles of it (each poke changes an ignore
#                        annotation naming a ConfigMap it does not reference: nothing to do, but
#                        a reconcile; each awaited on the controller's reconcile count); the
#                        controller made no StatefulSet write for them; generation still 1, still
#                        no restarter annotation
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

restarter_annotations() {
  kubectl -n "$NAMESPACE" get statefulset "$name" -o json |
    jq -c '[.spec.template.metadata.annotations // {} | keys[] | select(test("restarter\\.stackable\\.tech/"))]'
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

case ${1:-} in
  create) create ;;
  controller) controller ;;
  *) echo "usage: limit.sh create|controller" >&2; exit 2 ;;
esac
if ((failures > 0)); then
  echo "$failures checks failed"
  exit 1
fi
echo "all checks passed"
