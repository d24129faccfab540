# shellcheck shell=bash
# shellcheck disable=SC2154  # the variables are kuttl/lib/webhook.sh's, which sources this file
# What a test's webhook needs when it runs as the manifests' restarter-webhook ServiceAccount
# (RESTARTER_WEBHOOK_KUBECONFIG; webhook.sh's header, "Identity"): the manifests' name-bound rules
# granted for this test's names, and the webhook policy's parameters with a binding of the policy
# for this test's configuration. Nothing without that identity. Sourced by kuttl/lib/webhook.sh,
# never executed; uses its NAMESPACE, name, configuration, secret, secret_namespace, here and
# routed_namespaces.

# The webhook policy's parameters for a webhook on PORT (see the header), and for granted names a
# binding of the policy for this test's configuration. Only under the ServiceAccount.
policy_params() {
  local port=$1 params_ns=$NAMESPACE params_name=$name-webhook-policy object_selector arg
  local account=system:serviceaccount:restarter-system:restarter-webhook
  shift
  [[ -n ${RESTARTER_WEBHOOK_KUBECONFIG:-} ]] || return 0
  if [[ ${WEBHOOK_GRANT:-1} == 0 ]]; then
    [[ -n ${WEBHOOK_POLICY_PARAMS:-} ]] || return 0
    params_ns=${WEBHOOK_POLICY_PARAMS%%/*} params_name=${WEBHOOK_POLICY_PARAMS#*/}
    # The install's account (a Helm release's is another).
    account=$(kubectl -n "$params_ns" get configmap "$params_name" -o jsonpath='{.data.serviceAccount}') ||
      die "no policy parameters $WEBHOOK_POLICY_PARAMS"
  fi
  object_selector='restarter.stackable.tech/enabled=true;'
  local argo=false
  for arg in "$@"; do
    [[ $arg == --reloader-annotations ]] && object_selector=';restarter.stackable.tech/enabled NotIn false'
    [[ $arg == --argo-rollouts ]] && argo=true
  done
  kubectl -n "$params_ns" create configmap "$params_name" --dry-run=client -o yaml \
    --from-literal=serviceAccount="$account" \
    --from-literal=clientConfig="url https://127.0.0.1:$port/mutate" \
    --from-literal=namespaceSelector=";kubernetes.io/metadata.name In $(routed_namespaces | paste -sd,)" \
    --from-literal=objectSelector="$object_selector" \
    --from-literal=timeoutSeconds="${WEBHOOK_TIMEOUT_SECONDS:-5}" \
    --from-literal=argoRollouts="$argo" | kubectl apply -f - >/dev/null
  [[ ${WEBHOOK_GRANT:-1} == 0 ]] && return 0
  kubectl apply -f - >/dev/null <<YAML
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: restarter-webhook-configuration.$configuration
  labels: {app.kubernetes.io/name: restarter, restarter.stackable.tech/test-grant: "true"}
spec:
  policyName: restarter-webhook-configuration
  validationActions: [Deny]
  paramRef: {name: $params_name, namespace: $params_ns, parameterNotFoundAction: Deny}
  matchResources:
    resourceRules:
      - apiGroups: [admissionregistration.k8s.io]
        apiVersions: ["*"]
        resources: [mutatingwebhookconfigurations]
        operations: [CREATE, UPDATE]
        resourceNames: [$configuration]
YAML
}

# Under the ServiceAccount: the manifests' rules for the certificate Secret and the configuration,
# bound to this test's names (the Role goes with the namespace; the ClusterRole with the
# configuration, delete_configuration).
# WEBHOOK_GRANT=0: no grants (the names are the manifests' own, already granted).
# The certificate Secret is created empty first (admin), as the installs ship it: the rules give
# no create.
grant_names() {
  [[ -n ${RESTARTER_WEBHOOK_KUBECONFIG:-} && ${WEBHOOK_GRANT:-1} != 0 ]] || return 0
  "$here/identity.sh" grant role restarter-webhook-certificates "$secret_namespace" restarter-webhook "$secret" >/dev/null
  "$here/identity.sh" grant clusterrole restarter-webhook-configuration - restarter-webhook "$configuration" >/dev/null
  "$here/identity.sh" grant role restarter-webhook-digest-key "$NAMESPACE" restarter-webhook >/dev/null
  # (Managed certificates only: with --cert-dir no Secret is used.)
  ((${managed:-1})) || return 0
  kubectl -n "$secret_namespace" get secret "$secret" >/dev/null 2>&1 ||
    kubectl -n "$secret_namespace" create secret generic "$secret" >/dev/null
}
