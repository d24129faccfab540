#!/usr/bin/env bash
# The Helm chart (manifests/helm/restarter) against the kustomize install it must equal, offline
# (helm and kubectl are the local control plane's tools; no cluster is needed). tests/run.sh runs
# it as a stage; by hand: tests/check-helm.sh (builds the tools first if they are not cached).
#   1. helm lint --strict, with the defaults and with tests/helm/all-values.yaml (every value set);
#   2. helm template with the defaults (release "restarter", namespace restarter-system) equals
#      `kubectl kustomize manifests/`, and with webhook.enabled=false equals
#      manifests/overlays/controller-only, both normalized by tests/helm/normalize.py: sorted by
#      kind/namespace/name, Helm's own labels stripped, the Namespace left out (Helm does not own
#      its release namespace). Any other difference is printed as a diff and fails;
#   3. values.schema.json refuses a wrong type, an unknown value or a bad enum before rendering,
#      with a message naming the value;
#   4. what the values change: other release names rename every object and the names the roles
#      are bound to alike; watchNamespaces binds the read permissions per namespace; the
#      ServiceMonitors appear only when the cluster serves their kind; extra labels and
#      annotations reach every object, not the selectors;
#   5. docs/install.md's values table is what tests/helm/values-table.py generates from the schema.
# Exit status: 0 when all hold, 1 otherwise.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
chart=manifests/helm/restarter
if ! command -v helm >/dev/null || ! command -v kubectl >/dev/null; then
  bin=$(tests/cluster/cluster.sh build) || { echo "check-helm: cannot build the tools" >&2; exit 1; }
  PATH=$bin:$PATH
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/check-helm.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
fail() { printf 'check-helm: FAIL: %s\n' "$*"; failures=$((failures + 1)); }
ok() { printf 'check-helm: ok: %s\n' "$*"; }

# render [RELEASE [NAMESPACE]] -- [helm template flags]: the chart's objects as YAML.
render() {
  local release=restarter namespace=restarter-system
  if [[ ${1:-} != -- ]]; then release=$1; shift; fi
  if [[ ${1:-} != -- ]]; then namespace=$1; shift; fi
  shift
  helm template "$release" "$chart" --namespace "$namespace" "$@"
}
# YAML documents on stdin as one JSON array.
to_json() {
  python3 -c 'import json, sys, yaml; print(json.dumps([d for d in yaml.safe_load_all(sys.stdin) if d]))'
}
# check DESCRIPTION JQ-FILTER < JSON: the filter must give true.
check() {
  local what=$1 filter=$2
  if jq -e "$filter" >/dev/null; then ok "$what"; else fail "$what"; fi
}

echo "check-helm: $(helm version --short), $chart"

# --- 1. lint ---------------------------------------------------------------------------------
if helm lint --strict "$chart" >"$work/lint" 2>&1 &&
   helm lint --strict "$chart" -f tests/helm/all-values.yaml >>"$work/lint" 2>&1; then
  ok "helm lint --strict (defaults, all-values.yaml)"
else
  cat "$work/lint"; fail "helm lint --strict"
fi

# --- 2. the defaults render manifests/ ------------------------------------------------------
compare() {  # compare NAME KUSTOMIZE-DIR [helm flags]
  local name=$1 dir=$2; shift 2
  if ! render -- "$@" >"$work/$name.helm.yaml" 2>"$work/$name.err"; then
    cat "$work/$name.err"; fail "helm template $* failed"; return
  fi
  kubectl kustomize "$dir" >"$work/$name.kustomize.yaml"
  python3 tests/helm/normalize.py --drop-namespace restarter-system \
    <"$work/$name.kustomize.yaml" >"$work/$name.kustomize.norm" || { fail "normalizing $dir"; return; }
  python3 tests/helm/normalize.py <"$work/$name.helm.yaml" >"$work/$name.helm.norm" ||
    { fail "normalizing the chart's $name"; return; }
  if diff -u --label "kubectl kustomize $dir" --label "helm template $*" \
       "$work/$name.kustomize.norm" "$work/$name.helm.norm"; then
    ok "helm template ${*:-(defaults)} = kubectl kustomize $dir ($(grep -c '^kind:' "$work/$name.helm.norm") objects)"
  else
    fail "helm template ${*:-(defaults)} differs from kubectl kustomize $dir (diff above)"
  fi
}
compare defaults manifests
compare controller-only manifests/overlays/controller-only --set webhook.enabled=false
compare argo-rollouts tests/helm/argo-rollouts --set argoRollouts.enabled=true

# --- 3. the schema refuses wrong values -------------------------------------------------------
refuse() {  # refuse EXPECTED-MESSAGE-PART helm-flags...: helm template fails naming it
  local want=$1; shift
  if render -- "$@" >/dev/null 2>"$work/refused"; then
    fail "helm template $* was accepted"
  elif grep -qF -- "$want" "$work/refused"; then
    ok "helm template $* refused: $(grep -F -- "$want" "$work/refused" | head -1 | sed 's/^[[:space:]]*//')"
  else
    cat "$work/refused"; fail "helm template $* refused without saying '$want'"
  fi
}
refuse "at '/controller/replicas': got string, want integer" --set controller.replicas=abc
refuse "at '/webhook/replicas': got string, want integer" --set webhook.replicas=two
refuse "at '/controller/debounce': 'soon' does not match pattern" --set controller.debounce=soon
refuse "at '/contentAware': value must be one of" --set contentAware=sometimes
refuse "at '/webhook/enabled': got string, want boolean" --set webhook.enabled=maybe
refuse "additional properties 'controler' not allowed" --set controler.replicas=1
refuse "cannot be combined with watchNamespaces" --set 'watchNamespaces={a}' --set 'webhook.excludeNamespaces={b}'

# --- 4. what the values change ----------------------------------------------------------------
# Another release name and namespace: every name the roles bind (resourceNames) is the one the
# servers are started with, and no object keeps a manifests/ name (so a second install, e.g. the
# kuttl suite's, collides with nothing cluster-scoped).
render other shop -- | to_json >"$work/other.json"
check "release 'other': names prefixed, roles bound to the names the servers use" '
  def obj(k; n): first(.[] | select(.kind == k and .metadata.name == n));
  def args(n): obj("Deployment"; n).spec.template.spec.containers[0].args;
  (args("other-restarter-controller") | index("--leader-election-id=other-restarter-controller")) and
  (obj("Role"; "other-restarter-controller-leader-election").rules[0].resourceNames == ["other-restarter-controller"]) and
  (args("other-restarter-webhook") | index("--configuration-name=other-restarter-webhook.stackable.tech")
     and index("--secret-name=other-restarter-webhook-certs") and index("--service=other-restarter-webhook")) and
  (obj("ClusterRole"; "other-restarter-webhook-configuration").rules[0].resourceNames == ["other-restarter-webhook.stackable.tech"]) and
  (obj("Role"; "other-restarter-webhook-certificates").rules[0].resourceNames == ["other-restarter-webhook-certs"]) and
  (obj("Service"; "other-restarter-webhook") != null) and
  all(.[]; (.metadata.name | startswith("other-restarter-")) and (.metadata.namespace // "shop") == "shop") and
  all(.[] | select(.kind | endswith("RoleBinding")); .subjects[0].namespace == "shop")' <"$work/other.json"
check "release 'other': the admission policies check its accounts, configuration and Service" '
  def obj(k; n): first(.[] | select(.kind == k and .metadata.name == n));
  (obj("ValidatingAdmissionPolicy"; "other-restarter-controller-writes").spec.matchConditions[0].expression |
     contains("system:serviceaccount:shop:other-restarter-controller")) and
  (obj("ValidatingAdmissionPolicyBinding"; "other-restarter-webhook-configuration").spec |
     .paramRef.name == "other-restarter-webhook-configuration" and .paramRef.namespace == "shop" and
     .matchResources.resourceRules[0].resourceNames == ["other-restarter-webhook.stackable.tech"]) and
  (obj("ConfigMap"; "other-restarter-webhook-configuration").data |
     .serviceAccount == "system:serviceaccount:shop:other-restarter-webhook" and
     .clientConfig == "service shop/other-restarter-webhook:443/mutate")' <"$work/other.json"
render -- --set admissionPolicies.enabled=false | to_json >"$work/no-policies.json"
check "admissionPolicies.enabled=false: no policy, binding or parameters" '
  [.[] | select(.kind | startswith("ValidatingAdmissionPolicy"))] == [] and
  [.[] | select(.kind == "ConfigMap")] == []' <"$work/no-policies.json"
render -- --set 'watchNamespaces={a,b}' --set webhook.timeoutSeconds=9 | to_json >"$work/policy-params.json"
check "the webhook policy's parameters follow watchNamespaces and webhook.timeoutSeconds" '
  first(.[] | select(.kind == "ConfigMap" and .metadata.name == "restarter-webhook-configuration")).data |
  .namespaceSelector == ";kubernetes.io/metadata.name In a,b" and
  .timeoutSeconds == "9"' <"$work/policy-params.json"
render -- --set 'controller.extraArgs={--reloader-annotations,--auto-reload-all}' | to_json >"$work/controller-params.json"
check "the controller policy's parameters follow controller.extraArgs (--reloader-annotations, --auto-reload-all)" '
  first(.[] | select(.kind == "ConfigMap" and .metadata.name == "restarter-controller-writes")).data ==
  {"reloaderAnnotations": "true", "autoReloadAll": "true"}' <"$work/controller-params.json"
render restarter-kuttl -- | to_json >"$work/contains.json"
check "release 'restarter-kuttl' (contains the chart name): names restarter-kuttl-*" '
  all(.[]; .metadata.name | startswith("restarter-kuttl-") and (startswith("restarter-kuttl-restarter") | not))' \
  <"$work/contains.json"
render -- --set 'watchNamespaces={shop,billing}' | to_json >"$work/watch.json"
check "watchNamespaces: RoleBindings per namespace, no cluster-wide read, the flags" '
  def args(n): first(.[] | select(.kind == "Deployment" and .metadata.name == n)).spec.template.spec.containers[0].args;
  ([.[] | select(.kind == "ClusterRoleBinding") | .metadata.name] == ["restarter-webhook-configuration"]) and
  ([.[] | select(.kind == "RoleBinding" and .roleRef.kind == "ClusterRole") | "\(.metadata.namespace)/\(.metadata.name)"] | sort ==
     ["billing/restarter-controller", "billing/restarter-webhook", "shop/restarter-controller", "shop/restarter-webhook"]) and
  (args("restarter-controller") | index("--namespace=shop,billing") and index("--leader-election-namespace=restarter-system")) and
  (args("restarter-webhook") | index("--only-namespace=shop") and index("--only-namespace=billing"))' <"$work/watch.json"
monitoring=(--api-versions monitoring.coreos.com/v1/ServiceMonitor)
render -- "${monitoring[@]}" | to_json >"$work/monitor.json"
# shellcheck disable=SC2016  # $m, $all, $s and $sm are jq's variables
check "ServiceMonitor kind served: a metrics Service and a ServiceMonitor per Deployment, selecting each other" '
  [.[] | select(.kind == "ServiceMonitor")] as $m | [.[] | select(.kind == "Service")] as $all |
  [$all[] | select(.spec.clusterIP == "None")] as $s |
  ($m | length) == 2 and ($s | length) == 2 and
  all($m[]; . as $sm | [$all[] | select(.metadata.labels | contains($sm.spec.selector.matchLabels))] as $hit |
    ($hit | length) == 1 and $hit[0].spec.clusterIP == "None" and
    $hit[0].spec.selector["app.kubernetes.io/component"] == $sm.metadata.labels["app.kubernetes.io/component"]) and
  all($s[]; .spec.ports == [{"name": "metrics", "port": 8080, "targetPort": "metrics"}])' <"$work/monitor.json"
render -- --set networkPolicy.metricsNamespace=prometheus | to_json >"$work/metrics-ns.json"
check "networkPolicy.metricsNamespace: rule 0 of both policies selects that namespace alone" '
  [.[] | select(.kind == "NetworkPolicy") | .spec.ingress[0].from] ==
    [range(2) | [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "prometheus"}}}]]' <"$work/metrics-ns.json"
check "networkPolicy defaults: the https port from anywhere, no rule for the health port (as manifests/base)" '
  [.[] | select(.kind == "NetworkPolicy") | .spec.ingress[1:]] == [[], [{"ports": [{"port": "https", "protocol": "TCP"}]}]]' \
  <"$work/metrics-ns.json"
render -- --set-json 'networkPolicy.webhookSources=["10.0.0.10/32",{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"kube-system"}},"podSelector":{"matchLabels":{"app":"konnectivity-agent"}}}]' \
  --set-json 'networkPolicy.healthSources=["192.168.0.0/16"]' | to_json >"$work/sources.json"
# shellcheck disable=SC2016  # $np is jq's variable
check "networkPolicy.webhookSources/healthSources: CIDRs become ipBlocks, peers stay whole; the health rule on both policies" '
  [.[] | select(.kind == "NetworkPolicy")] as $np |
  ($np | map(.metadata.name)) == ["restarter-controller", "restarter-webhook"] and
  $np[0].spec.ingress[1:] == [{"ports": [{"port": "health", "protocol": "TCP"}], "from": [{"ipBlock": {"cidr": "192.168.0.0/16"}}]}] and
  $np[1].spec.ingress[1:] == [
    {"ports": [{"port": "https", "protocol": "TCP"}], "from": [{"ipBlock": {"cidr": "10.0.0.10/32"}},
      {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}, "podSelector": {"matchLabels": {"app": "konnectivity-agent"}}}]},
    {"ports": [{"port": "health", "protocol": "TCP"}], "from": [{"ipBlock": {"cidr": "192.168.0.0/16"}}]}]' <"$work/sources.json"
render -- "${monitoring[@]}" --set serviceMonitor.enabled=false | to_json >"$work/nomonitor.json"
check "serviceMonitor.enabled=false: none, even where the kind is served" \
  '[.[] | select(.kind == "ServiceMonitor")] | length == 0' <"$work/nomonitor.json"
render -- "${monitoring[@]}" --set webhook.enabled=false | to_json >"$work/monitor-ctl.json"
check "webhook off: only the controller's ServiceMonitor" \
  '[.[] | select(.kind == "ServiceMonitor") | .metadata.name] == ["restarter-controller"]' <"$work/monitor-ctl.json"
digest=sha256:$(printf '%064d' 7)
render -- --set image.repository=registry.example.com/restarter --set image.tag=ignored --set "image.digest=$digest" |
  to_json >"$work/digest.json"
check "image.digest: both Deployments pull repository@digest, the tag ignored (a released chart's default)" \
  "[.[] | select(.kind == \"Deployment\") | .spec.template.spec.containers[0].image] == [range(2) | \"registry.example.com/restarter@$digest\"]" \
  <"$work/digest.json"
render -- -f tests/helm/all-values.yaml "${monitoring[@]}" | to_json >"$work/all.json"
check "all-values.yaml: extra labels and annotations on every object, pod labels on the pods, selectors unchanged" '
  all(.[]; .metadata.labels["example.com/team"] == "platform" and .metadata.annotations["example.com/owner"] == "platform-team") and
  all(.[] | select(.kind == "Deployment"); .spec.template.metadata.labels["example.com/pods"] == "restarter" and
      .spec.template.metadata.annotations["example.com/scrape"] == "true" and
      (.spec.selector.matchLabels | keys) == ["app.kubernetes.io/component", "app.kubernetes.io/instance", "app.kubernetes.io/name"])' \
  <"$work/all.json"
check "all-values.yaml: the scheduling values and flags reach both Deployments" '
  def dep(n): first(.[] | select(.kind == "Deployment" and .metadata.name == n));
  def spec(n): dep(n).spec.template.spec;
  spec("restarter-controller").nodeSelector == {"example.com/pool": "system"} and
  spec("restarter-webhook").tolerations[0].key == "example.com/dedicated" and
  spec("restarter-controller").priorityClassName == "system-cluster-critical" and
  spec("restarter-webhook").affinity.nodeAffinity != null and
  spec("restarter-controller").imagePullSecrets == [{"name": "registry"}] and
  spec("restarter-controller").containers[0].image == "registry.example.com/restarter:custom-build" and
  spec("restarter-controller").containers[0].imagePullPolicy == "Always" and
  dep("restarter-controller").spec.replicas == 3 and dep("restarter-webhook").spec.replicas == 3 and
  (spec("restarter-controller").containers[0].args | contains(["--debounce=250ms", "--min-rollout-interval=10m",
     "--rollout-window=Mon-Fri 02:00-04:00 Europe/Berlin",
     "--max-writes-per-second=20", "--write-burst=100", "--dry-run", "--content-aware=all", "--log-level=debug",
     "--ondelete-ready-timeout=20m", "--argo-rollouts"])) and
  (spec("restarter-webhook").containers[0].args | contains(["--timeout-seconds=10", "--exclude-namespace=kube-system",
     "--content-aware=all", "--threads=8", "--argo-rollouts"])) and
  any(.[] | select(.kind == "ClusterRole" and .metadata.name == "restarter-controller") | .rules[];
      .apiGroups == ["argoproj.io"] and .resources == ["rollouts"]) and
  any(.[] | select(.kind == "ValidatingAdmissionPolicy" and .metadata.name == "restarter-controller-writes")
      | .spec.matchConstraints.resourceRules[]; .apiGroups == ["argoproj.io"]) and
  first(.[] | select(.kind == "ConfigMap" and .metadata.name == "restarter-webhook-configuration")).data.argoRollouts == "true" and
  spec("restarter-webhook").containers[0].resources.limits.memory == "256Mi" and
  first(.[] | select(.kind == "PodDisruptionBudget")).spec.minAvailable == 2 and
  all(.[] | select(.kind == "NetworkPolicy"); .spec.ingress[0].from[0].namespaceSelector == {"matchLabels": {"example.com/scrape": "true"}}) and
  all(.[] | select(.kind == "ServiceMonitor"); .metadata.labels.release == "prometheus" and .spec.endpoints[0].interval == "15s")' \
  <"$work/all.json"

# --- 5. docs/install.md's table ---------------------------------------------------------------
if python3 tests/helm/values-table.py --check; then
  ok "docs/install.md's values table = tests/helm/values-table.py (values.schema.json, values.yaml)"
else
  fail "docs/install.md's values table is out of date"
fi

if ((failures)); then echo "check-helm: $failures check(s) failed"; exit 1; fi
echo "check-helm: all checks passed"
