#!/usr/bin/env bash
# End-to-end proof of the Krew plugin, run inside the local control plane's network namespace:
#   tests/cluster/cluster.sh exec -- krew/test-install.sh
# Packages restarter (krew/package.sh; binary from RESTARTER_BIN, default build/ci), installs it
# with the real krew (built by tests/cluster) from the local manifest and archive into a temporary
# KREW_ROOT, then runs `kubectl restarter ...` through kubectl against the cluster: help speaks as
# the plugin, KUBECONFIG, --context and -n behave as in kubectl, explain-restart explains a
# StatefulSet. Leaves nothing behind (temporary root, test namespace).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
binary=${RESTARTER_BIN:-$repo/build/ci/cmd/restarter/restarter}
for tool in krew kubectl; do
  command -v "$tool" >/dev/null || { echo "test-install.sh: $tool not on PATH (run via tests/cluster/cluster.sh exec)" >&2; exit 1; }
done
: "${KUBECONFIG:?test-install.sh: KUBECONFIG must point at the cluster (run via cluster.sh exec)}"

work=$(mktemp -d)
ns="krew-test-$$"
cleanup() {
  kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$repo/krew/package.sh" --url-base "https://example.org/restarter/releases" \
  --binary "$binary" --out "$work/dist" >/dev/null
archive=$(ls "$work"/dist/kubectl-restarter-*.tar.gz)

export KREW_ROOT="$work/krew-root"
krew install --manifest="$work/dist/restarter.yaml" --archive="$archive" </dev/null
export PATH="$KREW_ROOT/bin:$PATH"
# (krew list needs the central index, which is not reachable here; the receipt is what it reads.)
[ -f "$KREW_ROOT/receipts/restarter.yaml" ] || fail "krew wrote no receipt for restarter"
# Outputs are captured before grep: `cmd | grep -q` under pipefail fails when grep's early exit
# SIGPIPEs cmd.
plugins=$(kubectl plugin list 2>/dev/null || true)
grep -qF "$KREW_ROOT/bin/kubectl-restarter" <<<"$plugins" || fail "kubectl plugin list does not show kubectl-restarter: $plugins"

help=$(kubectl restarter --help)
grep -q 'kubectl restarter <subcommand>' <<<"$help" || fail "plugin help does not speak as kubectl restarter"
grep -q 'explain-restart' <<<"$help" || fail "plugin help does not list explain-restart"
grep -q '^  roll ' <<<"$help" || fail "plugin help does not list roll"
grep -qF 'kubectl restarter roll KIND/NAME' <<<"$(kubectl restarter roll --help)" || fail "roll help does not speak as kubectl restarter"
sub_help=$(kubectl restarter explain-restart --help)
grep -q 'Usage:' <<<"$sub_help" || fail "no explain-restart help"
version=$(kubectl restarter --version)
grep -q '^kubectl restarter v\{0,1\}[0-9]' <<<"$version" || fail "no version: $version"

kubectl create namespace "$ns" >/dev/null
kubectl -n "$ns" create configmap app-config --from-literal=a=1 >/dev/null
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, labels: {restarter.stackable.tech/enabled: "true"}}
spec:
  replicas: 1
  serviceName: web
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: example.org/web:1}]
      volumes: [{name: cfg, configMap: {name: app-config}}]
YAML
kubectl -n "$ns" rollout status statefulset/web --timeout=100s >/dev/null

# -n, and the namespace of a context, as kubectl users expect.
out=$(kubectl restarter explain-restart -n "$ns" statefulset/web --no-color)
echo "$out"
grep -q "StatefulSet $ns/web" <<<"$out" || fail "explain-restart through kubectl did not explain $ns/web"
# No controller runs here: the workload carries no restarter record, so explain-restart says what
# serve-controller would do by default (record a baseline, docs/behaviour.md "Restart only when pods
# need it").
grep -Eq 'configmap/app-config +tracked +opted in: baseline recorded, no restart' <<<"$out" ||
  fail "the ConfigMap's decision is not named"
cp "$KUBECONFIG" "$work/kubeconfig"
KUBECONFIG="$work/kubeconfig" kubectl config set-context plugin-test \
  --cluster="$(kubectl config view --minify -o jsonpath='{.contexts[0].context.cluster}')" \
  --user="$(kubectl config view --minify -o jsonpath='{.contexts[0].context.user}')" --namespace="$ns" >/dev/null
by_context=$(KUBECONFIG="$work/kubeconfig" kubectl restarter explain-restart --context plugin-test sts/web -o json)
jq -e --arg ns "$ns" '.workload.namespace == $ns' <<<"$by_context" >/dev/null || fail "--context with a namespace not honoured"
by_flag=$(kubectl restarter explain-restart --kubeconfig "$work/kubeconfig" --context plugin-test sts/web -o json)
jq -e --arg ns "$ns" '.workload.namespace == $ns' <<<"$by_flag" >/dev/null || fail "--kubeconfig not honoured"
echo "krew plugin: installed with krew from the local manifest and archive, working through kubectl"
