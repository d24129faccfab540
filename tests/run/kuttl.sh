# shellcheck shell=bash
# The kuttl stages of tests/run.sh: the suites of one build or one kuttl configuration on the local
# control plane, and the digest of why a kuttl test failed, printed after the table of stage
# times. Sourced by tests/run.sh, never executed; uses REPO, CLUSTER, IDENTITIES and need_cluster
# (tests/run/control-plane.sh), CURRENT_STAGE (tests/run/table.sh).

REPORTS=$REPO/build/sanitizer-reports
# The kuttl suites whose servers run many threads at once: leader election, the controller's
# workers and reflectors, certificate rotation under load, the webhook's lookup pool, two webhook
# replicas racing, the fleet-wide rollout slots taken and freed by every worker. (kuttl's --test is a
# regular expression over the suites' directory names.)
TSAN_SUITES='^(controller-leader|controller-restart|controller-workloads|controller-rollout-queue|webhook-rotation|webhook-first-rollout|webhook-secret-race)$'

# What failed and why, printed after the table of stage times: the full kuttl output of a run is
# thousands of lines, and the end of a run's output is what a reader (or a CI summary that keeps
# only part of it) sees first.
FAILURE_DIGEST=$REPO/build/logs/failure-digest.txt
# kuttl_failure_digest LOG: for each failed kuttl test in LOG, what kuttl itself reported (the
# step that failed and its errors: an assert's mismatch, a command's exit status; Go's test output
# puts these under the test's "=== NAME" header, not on kuttl's logger lines), then the test's
# logger lines that say what went wrong (a failed check, an error, a timeout; the last 25), then
# the last 10 lines its steps printed, which place a check that failed without a word.
kuttl_failure_digest() {
  local test lines
  while read -r test; do
    echo "--- kuttl test $test failed (stage: ${CURRENT_STAGE:-?}):"
    awk -v t="kuttl/harness/$test" '
      /^=== (RUN|CONT|NAME|PAUSE) / { current = $3; next }
      current == t && /^ +case\.go:[0-9]+:/ {
        # a failed command is quoted whole (its script): the head says enough
        print (length($0) > 300 ? substr($0, 1, 300) " ..." : $0)
      }' "$1"
    lines=$(grep -E "\| ${test}(/[^ |]*)? \|" "$1")
    grep -Ei 'fail|error|timed out|timeout|panic|not ' <<<"$lines" | grep -v 'Ignoring ' | tail -n 25
    echo "  its steps' last lines:"
    grep -E "\| ${test}/[^ |]+ \|" <<<"$lines" | tail -n 10
  done < <(sed -n 's/.*--- FAIL: kuttl\/harness\/\([^ ]*\) .*/\1/p' "$1")
}
print_failure_digest() {
  [[ -s $FAILURE_DIGEST ]] || return 0
  echo
  echo "why (the failed kuttl tests' own lines; the full output is above):"
  cat "$FAILURE_DIGEST"
}

# kuttl_suites BINARY [ENV...] [-- KUTTL ARGS...]: the kuttl suites with that build of restarter,
# its servers authenticated as the manifests' ServiceAccounts. With sanitizer options in ENV
# (log_path under $REPORTS), any report the servers leave fails the step.
kuttl_suites() {
  need_cluster || return 1
  local binary=$1; shift
  local envs=() rc=0
  while (($#)) && [[ $1 != -- ]]; do envs+=("$1"); shift; done
  (($#)) && shift
  [[ -x $binary ]] || { echo "no restarter binary at $binary (did its build stage fail?)"; return 1; }
  rm -rf "$REPORTS" && mkdir -p "$REPORTS"
  local log
  log=$(mktemp "$REPO/build/logs/kuttl.XXXXXX")
  env RESTARTER_BIN="$binary" \
    RESTARTER_CONTROLLER_KUBECONFIG="$IDENTITIES/controller.kubeconfig" \
    RESTARTER_WEBHOOK_KUBECONFIG="$IDENTITIES/webhook.kubeconfig" "${envs[@]}" \
    "$CLUSTER" exec -- kubectl-kuttl test --config kuttl/kuttl-test.yaml "$@" 2>&1 | tee "$log" || rc=1
  ((rc == 0)) || kuttl_failure_digest "$log" >>"$FAILURE_DIGEST"
  rm -f "$log"
  if compgen -G "$REPORTS/*" >/dev/null; then
    echo "sanitizer reports from the servers:"
    cat "$REPORTS"/*
    rc=1
  fi
  return $rc
}

# The suites with each build: the dev build's; once more with the ASan+UBSan build (memory errors
# and undefined behaviour abort the server, so its step fails; leaks are reported when it exits);
# the suites of the threaded paths with the TSan build (any report fails).
kuttl_suites_dev() { kuttl_suites "$RELEASE_BIN"; }
kuttl_suites_asan() {
  kuttl_suites "$REPO/build/asan/cmd/restarter/restarter" \
    "ASAN_OPTIONS=log_path=$REPORTS/asan" "UBSAN_OPTIONS=print_stacktrace=1:log_path=$REPORTS/ubsan"
}
kuttl_suites_tsan() {
  kuttl_suites "$REPO/build/tsan/cmd/restarter/restarter" \
    "TSAN_OPTIONS=$TSAN_OPTIONS_CI:log_path=$REPORTS/tsan" -- --test "$TSAN_SUITES"
}

# kuttl_config_suites CONFIG: the suites of one kuttl configuration inside the namespace, what
# failed and why added to the failure digest.
kuttl_config_suites() {
  local rc=0 log
  log=$(mktemp "$REPO/build/logs/kuttl.XXXXXX")
  "$CLUSTER" exec -- kubectl-kuttl test --config "$1" 2>&1 | tee "$log" || rc=1
  ((rc == 0)) || kuttl_failure_digest "$log" >>"$FAILURE_DIGEST"
  rm -f "$log"
  return $rc
}

# The suites that run restarter as users install it, in real containers on the real node. The
# install they share stays for the netpol stage, which removes it.
node_suites() {
  need_cluster || return 1
  kuttl_config_suites kuttl/kuttl-node.yaml
}

# The same install with NetworkPolicy enforced on the real node: kube-router's policy controller
# started on the running node (tests/cluster/lib/netpol.sh; after the node suites, which must see
# the node without it), the suites of kuttl/kuttl-netpol.yaml; then the install is removed (also
# when one failed), and the controller stopped (its rules with it), so that the release's suites
# see the node as before.
netpol_suites() {
  need_cluster || return 1
  local rc=0
  if RESTARTER_CLUSTER_REAL_NODE=1 RESTARTER_CLUSTER_NETWORK_POLICY=1 "$CLUSTER" up >/dev/null; then
    kuttl_config_suites kuttl/kuttl-netpol.yaml || rc=1
  else
    echo "cannot start NetworkPolicy enforcement on the real node (kube-router)"
    rc=1
  fi
  "$CLUSTER" exec -- kuttl/lib/node.sh uninstall || rc=1
  "$CLUSTER" stop-network-policy || rc=1
  return $rc
}

# The release's suites (kuttl/kuttl-release.yaml: verify, upgrade, kustomize, Krew), from the
# real node's registry.
release_suites() {
  need_cluster || return 1
  kuttl_config_suites kuttl/kuttl-release.yaml
}
