#!/usr/bin/env bash
# Requests as restarter's ServiceAccounts for the least-privilege suite, run from its step scripts
# (in this directory; kuttl sets NAMESPACE and KUBECONFIG). Tokens from the TokenRequest API
# (kuttl/lib/identity.sh), kept in the suite's state directory.
#
#   lp.sh tokens                    kubeconfigs of restarter-system/restarter-controller and
#                                   restarter-webhook (state/controller, state/webhook)
#   lp.sh kubeconfig ACCOUNT        the path of ACCOUNT's kubeconfig (controller|webhook)
#   lp.sh can yes|no ACCOUNT VERB RESOURCE [ARGS...]
#                                   kubectl auth can-i as ACCOUNT (RBAC's own answer) must say so
#   lp.sh request ACCOUNT METHOD PATH CONTENT-TYPE [BODY]
#                                   one API request as ACCOUNT, as the stolen token would send it
#                                   (curl: no GET before a PATCH, which kubectl patch does); prints
#                                   "CODE MESSAGE" (the Status's message, or "ok")
#   lp.sh denied WHAT CODE-PATTERN MESSAGE-PART ACCOUNT METHOD PATH CONTENT-TYPE [BODY]
#                                   the request must be refused: code matching CODE-PATTERN and a
#                                   message containing MESSAGE-PART; fails naming WHAT otherwise
#   lp.sh allowed WHAT ACCOUNT METHOD PATH CONTENT-TYPE [BODY]
#                                   the request must succeed (2xx)
set -euo pipefail

die() { printf 'lp.sh: %s\n' "$*" >&2; exit 1; }
: "${NAMESPACE:?NAMESPACE must be set (kuttl sets it)}"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
state=${TMPDIR:-/tmp}/restarter-kuttl-least-privilege/$NAMESPACE
mkdir -p "$state"

request() {
  local account=${1:?account} method=${2:?method} path=${3:?path} type=${4:?content type} body=${5:-}
  local server token out code
  [[ -f $state/$account.token ]] || die "no token for $account (lp.sh tokens)"
  server=$(cat "$state/server") token=$(cat "$state/$account.token")
  out=$(curl -sS --max-time 30 --cacert "$state/ca.crt" -H "Authorization: Bearer $token" \
    -H "Content-Type: $type" -H 'Accept: application/json' -X "$method" --data-binary "$body" \
    -w '\n%{http_code}' "$server$path") || die "curl $method $path failed"
  code=${out##*$'\n'}
  out=${out%$'\n'*}
  if [[ $code == 2* ]]; then
    echo "$code ok"
  else
    echo "$code $(printf '%s' "$out" | jq -r '.message // "no message"' 2>/dev/null || echo "$out")"
  fi
}

case ${1:-} in
  tokens)
    "$here/../../lib/identity.sh" kubeconfig restarter-controller "$state/controller" 1h >/dev/null
    "$here/../../lib/identity.sh" kubeconfig restarter-webhook "$state/webhook" 1h >/dev/null
    # What curl needs, read once: the server, its CA, each token (mode 0600 like the kubeconfigs).
    kubectl --kubeconfig "$state/controller" config view --raw -o jsonpath='{.clusters[0].cluster.server}' >"$state/server"
    kubectl --kubeconfig "$state/controller" config view --raw \
      -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$state/ca.crt"
    for account in controller webhook; do
      (umask 077; kubectl --kubeconfig "$state/$account" config view --raw -o jsonpath='{.users[0].user.token}' \
        >"$state/$account.token")
    done
    echo "tokens of restarter-controller and restarter-webhook in $state" ;;
  kubeconfig) echo "$state/${2:?account}" ;;
  can)
    want=${2:?yes|no} account=${3:?account}; shift 3
    got=$(kubectl --kubeconfig "$state/$account" auth can-i "$@" 2>/dev/null || true)
    [[ $got == "$want" ]] || die "FAIL: $account can-i $*: $got, want $want"
    echo "$account can-i $*: $got" ;;
  request) shift; request "$@" ;;
  denied)
    what=${2:?what} code_pattern=${3:?code} part=${4:?message part}; shift 4
    result=$(request "$@")
    echo "$what: $result"
    # shellcheck disable=SC2053 # CODE-PATTERN is a glob on purpose
    [[ ${result%% *} == $code_pattern && $result == *"$part"* ]] ||
      die "FAIL: $what was not refused as expected (want $code_pattern with \"$part\")" ;;
  allowed)
    what=${2:?what}; shift 2
    result=$(request "$@")
    echo "$what: $result"
    [[ $result == 2* ]] || die "FAIL: $what was refused" ;;
  *) die "usage: lp.sh tokens | kubeconfig ACCOUNT | can yes|no ACCOUNT VERB RESOURCE... | request ... | denied ... | allowed ..." ;;
esac
