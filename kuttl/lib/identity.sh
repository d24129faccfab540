#!/usr/bin/env bash
# The manifests' ServiceAccounts as identities for processes run on the host (tests/run.sh runs
# the kuttl suites' serve-controller and serve-webhook as them, proving the RBAC sufficient).
# Runs inside the cluster's network namespace with an admin KUBECONFIG.
#
#   identity.sh install-rbac
#       apply the install namespace and the controller's and webhook's RBAC of manifests/
#       (ServiceAccounts, roles, bindings; no workloads) and their ValidatingAdmissionPolicies
#       (base/*/policy: every suite's serve-controller and serve-webhook run under them too, which
#       proves them blocking nothing the code does; the controller's with the parameters of
#       --reloader-annotations --auto-reload-all, which some suites run), idempotent
#   identity.sh widen
#       rendered manifests (kubectl kustomize) on stdin to stdout, the controller policy's
#       parameters those install-rbac applies: what a suite applying the install uses, so that no
#       suite's serve-controller ever runs under narrower ones for a moment
#   identity.sh kubeconfig SERVICEACCOUNT OUT [DURATION]
#       a token for restarter-system/SERVICEACCOUNT from the TokenRequest API (kubectl create
#       token; DURATION default 6h, longer than a full kuttl run) and a kubeconfig OUT (mode 0600)
#       holding it, with the admin kubeconfig's server and CA
#       (IDENTITY_NAMESPACE=NS: a ServiceAccount of namespace NS instead)
#   identity.sh render KIND NAME
#       the manifests' Role or ClusterRole NAME as JSON (KIND role|clusterrole)
#   identity.sh grant KIND NAME NAMESPACE SERVICEACCOUNT [RESOURCE_NAME]
#       copy the manifests' Role or ClusterRole NAME (KIND role|clusterrole) into NAMESPACE as a
#       Role (or, for NAMESPACE "-", as a ClusterRole named "NAME.RESOURCE_NAME") and bind it to
#       restarter-system/SERVICEACCOUNT; RESOURCE_NAME replaces the rules' resourceNames. That is
#       what an operator does who runs with other names (--leader-election-namespace,
#       --secret-name, --configuration-name): same rules, their names. Prints the objects made.
#   identity.sh revoke NAME.RESOURCE_NAME   delete a ClusterRole and binding made by grant
set -euo pipefail

die() { printf 'identity.sh: %s\n' "$*" >&2; exit 1; }
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
manifests=$repo/manifests
install_namespace=restarter-system

# Rendered manifests on stdin, with the controller policy's parameters of --reloader-annotations
# --auto-reload-all (see install-rbac) instead of the shipped ones.
widen() {
  sed -e 's/^  reloaderAnnotations: "false"$/  reloaderAnnotations: "true"/' \
    -e 's/^  autoReloadAll: "false"$/  autoReloadAll: "true"/'
}

install_rbac() {
  local part
  for part in base/namespace base/controller/rbac base/webhook/rbac base/webhook/policy; do
    kubectl apply -k "$manifests/$part" >/dev/null || die "cannot apply manifests/$part"
  done
  # The controller's policy with the parameters of the most permissive selection flags any suite
  # runs serve-controller with (--reloader-annotations --auto-reload-all: the reloader-* suites),
  # since one binding serves every suite; least-privilege binds it again, to its namespace, with
  # the shipped parameters. Applied changed rather than patched after, so that a re-apply never
  # narrows it for a moment under a running suite.
  kubectl kustomize "$manifests/base/controller/policy" | widen |
    kubectl apply -f - >/dev/null || die "cannot apply manifests/base/controller/policy"
  # The ServiceAccounts must exist before tokens can be requested for them.
  kubectl -n "$install_namespace" wait --for=create --timeout=60s \
    serviceaccount/restarter-controller serviceaccount/restarter-webhook >/dev/null
  echo "RBAC of manifests/ applied (namespace $install_namespace)"
}

make_kubeconfig() {
  local account=${1:?service account} out=${2:?output file} duration=${3:-6h} token server ca
  local ns=${IDENTITY_NAMESPACE:-$install_namespace}
  token=$(kubectl -n "$ns" create token "$account" --duration "$duration") || die "no token for $ns/$account"
  server=$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.server}')
  ca=$(kubectl config view --raw --minify -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
  [[ -n $server && -n $ca ]] || die "the admin kubeconfig has no server or embedded CA"
  mkdir -p "$(dirname "$out")"
  (umask 077; cat >"$out" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: cluster
  cluster:
    server: $server
    certificate-authority-data: $ca
users:
- name: $account
  user:
    token: $token
contexts:
- name: $account
  context:
    cluster: cluster
    user: $account
    namespace: $ns
current-context: $account
YAML
  )
  echo "kubeconfig for $ns/$account: $out"
}

# The rendered (Cluster)Role of the manifests as JSON.
rendered_role() {
  local kind=$1 name=$2
  kubectl kustomize "$manifests" |
    kubectl create --dry-run=client -o json -f - |
    jq -s -e --arg kind "$kind" --arg name "$name" \
      '[.[] | select((.kind | ascii_downcase) == $kind and .metadata.name == $name)] | first // empty' ||
    die "manifests/ has no $kind $name"
}

grant() {
  local kind=${1:?role|clusterrole} name=${2:?name} ns=${3:?namespace or -} account=${4:?service account}
  local resource_name=${5:-} role_kind=Role target=$name
  [[ $kind == role || $kind == clusterrole ]] || die "grant: KIND must be role or clusterrole"
  if [[ $ns == - ]]; then
    [[ -n $resource_name ]] || die "grant: a ClusterRole copy needs a RESOURCE_NAME"
    role_kind=ClusterRole
    target=$name.$resource_name
  fi
  rendered_role "$kind" "$name" |
    jq --arg kind "$role_kind" --arg name "$target" --arg ns "$ns" --arg rn "$resource_name" '
      {apiVersion, kind: $kind,
       metadata: ({name: $name, labels: {"app.kubernetes.io/name": "restarter", "restarter.stackable.tech/test-grant": "true"}}
                  + (if $ns == "-" then {} else {namespace: $ns} end)),
       rules: [.rules[] | if $rn != "" and has("resourceNames") then .resourceNames = [$rn] else . end]}' |
    kubectl apply -f -
  if [[ $ns == - ]]; then
    kubectl create clusterrolebinding "$target" --clusterrole="$target" \
      --serviceaccount="$install_namespace:$account" --dry-run=client -o yaml | kubectl apply -f -
  else
    kubectl -n "$ns" create rolebinding "$target" --role="$target" \
      --serviceaccount="$install_namespace:$account" --dry-run=client -o yaml | kubectl apply -f -
  fi
}

revoke() {
  local target=${1:?NAME.RESOURCE_NAME}
  kubectl delete clusterrolebinding "$target" --ignore-not-found >/dev/null
  kubectl delete clusterrole "$target" --ignore-not-found >/dev/null
}

case ${1:-} in
  install-rbac) install_rbac ;;
  widen) widen ;;
  kubeconfig) shift; make_kubeconfig "$@" ;;
  render) shift; rendered_role "${1:?KIND}" "${2:?NAME}" ;;
  grant) shift; grant "$@" ;;
  revoke) shift; revoke "$@" ;;
  *) die "usage: identity.sh install-rbac | widen | kubeconfig SA OUT [DURATION] | render KIND NAME | grant KIND NAME NS SA [RESOURCE_NAME] | revoke NAME" ;;
esac
