#!/usr/bin/env bash
# Proves cmd/demo.sh, the README's first command, on the local control plane (run by tests/run.sh's
# cluster stage; needs root or sudo for network namespaces, like tests/cluster):
#   1. bad command lines exit 2 with a clear message before anything starts;
#   2. the whole tour: it printed metadata.generation 1 after the first rollout, a rollout (generation
#      2, a new revision, 3 of 3 pods replaced) after the ConfigMap change, explain-restart naming
#      the ConfigMap with both versions, the Restarted Event; the cluster agrees (checked here
#      independently with kubectl);
#   3. the real-cluster path, aimed at that same local control plane (loopback only): without --yes
#      it shows the objects and the question and, answered "no" or not at all, writes nothing;
#      --dry-run prints the manifests with the given image (references with a registry port, no
#      tag, a digest) and writes nothing, --controller-only leaves the webhook out; --yes applies them
#      and waits for the Deployments (kwok's fake nodes run their pods);
#   4. Ctrl-C (SIGINT to its process group) while it waits: exit 130, and no process it started
#      remains (every process carrying a marker in its environment is gone, the controller's and
#      webhook's PIDs too) and the control plane is down (no network namespace);
#   5. SIGTERM to the demo alone in the middle of the tour, and an error (the webhook killed while
#      it starts): the same clean-up, exits 143 and 1.
# Environment: RESTARTER_BIN (default build/ci/cmd/restarter/restarter, what tests/run.sh builds;
# the demo reuses it instead of building), RESTARTER_DEMO_TEST_CLUSTER (default
# "<RESTARTER_CLUSTER or default>-demo"; must not be running), RESTARTER_DEMO_TEST_KEEP=1 keeps the
# demo's outputs (they are kept anyway when the test fails).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
demo=$repo/cmd/demo.sh
cluster_sh=$repo/tests/cluster/cluster.sh
export RESTARTER_BIN=${RESTARTER_BIN:-$repo/build/ci/cmd/restarter/restarter}
[[ -x $RESTARTER_BIN ]] || { echo "test-demo: no restarter binary at $RESTARTER_BIN (build it, or set RESTARTER_BIN)" >&2; exit 1; }
cluster=${RESTARTER_DEMO_TEST_CLUSTER:-${RESTARTER_CLUSTER:-default}-demo}
export RESTARTER_CLUSTER=$cluster
work=$(mktemp -d "${TMPDIR:-/tmp}/restarter-demo-test.XXXXXX")
demo_pid=""
# Bound on each wait; each returns as soon as its condition holds.
WAIT_SECONDS=600

mark=""
# Whatever happens, leave nothing behind: the demo (by its PID), anything still carrying the current
# run's marker (what a broken clean-up would leak), and the control plane.
on_exit() {
  local rc=$? file pid
  if [[ -n $demo_pid ]] && kill -0 "$demo_pid" 2>/dev/null; then
    kill -TERM "$demo_pid" 2>/dev/null
    wait "$demo_pid" 2>/dev/null
  fi
  if [[ -n $mark ]]; then
    while read -r file; do
      pid=${file#/proc/}; pid=${pid%/environ}
      kill -TERM "$pid" 2>/dev/null
    done < <(grep -las -F "RESTARTER_DEMO_TEST_MARK=$mark" /proc/[0-9]*/environ)
  fi
  "$cluster_sh" down >/dev/null 2>&1
  if ((rc == 0)) && [[ -z ${RESTARTER_DEMO_TEST_KEEP:-} ]]; then rm -rf "$work"; else echo "test-demo: outputs kept in $work"; fi
  exit "$rc"
}
trap on_exit EXIT

fail() {
  echo "FAIL: $*" >&2
  for f in "$work"/*.out; do [[ -f $f ]] && { echo "----- $f" >&2; cat "$f" >&2; }; done
  exit 1
}
pass() { echo "ok: $*"; }

# Starts the demo in the background with a marker in its environment that every process it
# starts inherits, in a process group of its own as a terminal's foreground job would be (so Ctrl-C
# can be played by signalling the group). SIGINT is reset to default: a background job of a script
# starts with SIGINT ignored, and bash cannot trap a signal ignored at entry.
#   start_demo NAME MARK [demo flags...]
start_demo() {
  local name=$1 mark=$2
  shift 2
  : >"$work/$name.out"   # exists before wait_output first reads it
  # setsid execs without forking here (a background job is no group leader): $! is the demo.
  setsid env --default-signal=INT RESTARTER_DEMO_TEST_MARK="$mark" "$demo" "$@" >"$work/$name.out" 2>&1 &
  demo_pid=$!
}

# Waits until the demo's output has a line matching the extended regex; fails if it exits first.
wait_output() {
  local name=$1 pattern=$2 deadline=$((SECONDS + WAIT_SECONDS))
  until grep -Eq -- "$pattern" "$work/$name.out"; do
    kill -0 "$demo_pid" 2>/dev/null || fail "the demo exited before printing /$pattern/"
    ((SECONDS < deadline)) || fail "the demo did not print /$pattern/ within ${WAIT_SECONDS}s"
    sleep 0.5
  done
}

# Waits for the demo to exit and checks its status.
expect_exit() {
  local expected=$1 deadline=$((SECONDS + 180)) rc=0
  while kill -0 "$demo_pid" 2>/dev/null; do
    ((SECONDS < deadline)) || fail "the demo did not exit within 180 s"
    sleep 0.2
  done
  wait "$demo_pid" || rc=$?
  demo_pid=""
  ((rc == expected)) || fail "the demo exited with $rc, expected $expected"
}

# No process carrying the marker, the given PIDs gone, the control plane down.
expect_all_stopped() {
  local mark=$1 pid left
  shift
  left=$(grep -las -F "RESTARTER_DEMO_TEST_MARK=$mark" /proc/[0-9]*/environ || true)
  [[ -z $left ]] || fail "processes the demo started are still running: $(for p in $left; do p=${p#/proc/}; p=${p%/environ}; printf '%s ' "$p:$(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)"; done)"
  for pid in "$@"; do
    ! kill -0 "$pid" 2>/dev/null || fail "pid $pid is still running"
  done
  ! "$cluster_sh" status >/dev/null 2>&1 || fail "the control plane '$cluster' is still up"
  ! grep -Fqw "restarter-$cluster" <<<"$(ip netns list)" || fail "network namespace restarter-$cluster still exists"
}

# Signals demo run NAME: INT to its whole process group, as Ctrl-C on a terminal does (every
# process of the foreground job gets it), TERM to the demo alone, as `kill` does. Expects exit
# status RC, the announcement, and that everything stopped.
#   signal_and_check NAME SIG RC MARK [PIDS...]
signal_and_check() {
  local name=$1 sig=$2 rc=$3 mark=$4
  shift 4
  [[ $(ps -o pgid= -p "$demo_pid" | tr -d ' ') == "$demo_pid" ]] || fail "the demo does not lead its own process group"
  if [[ $sig == INT ]]; then kill -INT -- -"$demo_pid"; else kill -"$sig" "$demo_pid"; fi
  expect_exit "$rc"
  grep -Fq "SIG$sig received, stopping everything" "$work/$name.out" || fail "the demo did not announce SIG$sig"
  expect_all_stopped "$mark" "$@"
}

# The PID the demo printed for a server ("  pid N, log .../NAME.log").
printed_pid() {
  sed -n "s|^  pid \([0-9]*\), log .*/$2\.log\$|\1|p" "$work/$1.out" | head -1
}

"$cluster_sh" status >/dev/null 2>&1 && fail "cluster '$cluster' is already running; the demo must start its own"

# --- 1. the command line ------------------------------------------------------------------------------
usage_case() {  # usage_case EXPECTED_RC MESSAGE ARGS...
  local expected=$1 message=$2 rc=0
  shift 2
  "$demo" "$@" >"$work/usage.out" 2>&1 || rc=$?
  ((rc == expected)) || fail "cmd/demo.sh $* exited $rc, expected $expected"
  grep -Fq -- "$message" "$work/usage.out" || fail "cmd/demo.sh $* did not say '$message'"
}
touch "$work/kubeconfig"
usage_case 0 "Usage: cmd/demo.sh [flags]" --help
usage_case 2 "unknown argument '--bogus'" --bogus
usage_case 2 "--image is required with --kubeconfig" --kubeconfig "$work/kubeconfig"
usage_case 2 "--kubeconfig '$work/missing': no such file" --kubeconfig "$work/missing" --image example.invalid/r:1
usage_case 2 "need --kubeconfig" --image example.invalid/restarter:1
usage_case 2 "is not an image reference" --kubeconfig "$work/kubeconfig" --image "Bad Image"
usage_case 2 "--image needs a value" --image
pass "bad command lines exit 2 with a message"

# --- 2. the tour, then 3. the real-cluster path, then 4. SIGINT -----------------------------------------
mark=a-$$-$RANDOM
start_demo a "$mark"
wait_output a '^  Running\. Press Ctrl-C'
out=$work/a.out
grep -Fxq "  metadata.generation: 1" "$out" || fail "the demo did not print metadata.generation: 1"
grep -Eq '^  metadata\.generation: 2; revision web-[0-9a-z]+ -> web-[0-9a-z]+; 3 of 3 pods replaced$' "$out" ||
  fail "the demo did not print the rollout"
change=$(sed -n 's/^  web-config: \(.* -> .*\)$/\1/p' "$out")
[[ $change =~ ^[0-9a-f-]+/[0-9]+\ -\>\ [0-9a-f-]+/[0-9]+$ ]] || fail "the demo did not print the ConfigMap's versions"
grep -Fq "configmap/web-config: $change (updated)" "$out" || fail "explain-restart did not name configmap/web-config: $change"
grep -Eq 'Normal +Restarted .*configmap/web-config' "$out" || fail "no Restarted Event shown"
pass "the demo printed generation 1, the rollout, explain-restart naming the ConfigMap, the Event"

k() { "$cluster_sh" exec -- kubectl "$@"; }
[[ $(k -n demo get statefulset web -o jsonpath='{.metadata.generation}/{.status.updatedReplicas}/{.status.readyReplicas}') == 2/3/3 ]] ||
  fail "the cluster does not show generation 2 with 3 updated, ready pods"
[[ $(k -n demo get controllerrevisions -o name | wc -l) == 2 ]] || fail "not exactly 2 ControllerRevisions"
pass "the cluster agrees: generation 2, two revisions, 3 pods updated"

# The real-cluster path against this local control plane (loopback). kubectl comes from the tools.
install() {  # install NAME STDIN ARGS...: runs the demo in --kubeconfig mode inside the namespace
  local name=$1 input=$2 rc=0
  shift 2
  # shellcheck disable=SC2016  # expanded inside the namespace, where exec sets KUBECONFIG
  "$cluster_sh" exec -- bash -c 'exec "$0" --kubeconfig "$KUBECONFIG" "$@"' "$demo" "$@" \
    <"$input" >"$work/$name.out" 2>&1 || rc=$?
  echo "$rc"
}
no_deployments() { [[ -z $(k -n restarter-system get deployments -o name) ]]; }
image=example.invalid/restarter:test
printf 'n\n' >"$work/no"
[[ $(install refused /dev/null --image "$image") == 1 ]] || fail "without --yes and an answer it did not refuse"
grep -Fq "deployment.apps/restarter-controller" "$work/refused.out" || fail "the plan does not list the controller Deployment"
grep -Eq '^    new +apps\.v1\.Deployment\.restarter-system\.restarter-controller$' "$work/refused.out" ||
  fail "the kubectl diff summary does not show the controller Deployment as new"
grep -Fq "Apply these objects to https://127.0.0.1:6443" "$work/refused.out" || fail "it did not ask"
grep -Fq "not applied" "$work/refused.out" || fail "it did not say it applied nothing"
[[ $(install answered-no "$work/no" --image "$image") == 1 ]] || fail "answered 'n', it did not refuse"
grep -Fq "not applied (answer was 'n'" "$work/answered-no.out" || fail "answered 'n', it did not say so"
no_deployments || fail "a refused install wrote Deployments"
[[ $(install dry-run /dev/null --image "$image" --dry-run) == 0 ]] || fail "--dry-run failed"
grep -Fq "image: $image" "$work/dry-run.out" || fail "--dry-run did not render the image"
grep -Fq "Dry run: nothing was applied" "$work/dry-run.out" || fail "--dry-run did not say it applied nothing"
no_deployments || fail "--dry-run wrote Deployments"
# How references become kustomize's fields: a registry port is not a tag; no tag means :latest
# (not the manifests' own tag); a digest wins.
digest=sha256:$(printf '%064d' 7)
for pair in "localhost:5000/team/restarter=localhost:5000/team/restarter:latest" \
            "localhost:5000/restarter:v2=localhost:5000/restarter:v2" \
            "reg.example/restarter@$digest=reg.example/restarter@$digest"; do
  [[ $(install dry-run-image /dev/null --image "${pair%%=*}" --dry-run) == 0 ]] || fail "--dry-run --image ${pair%%=*} failed"
  awk -v want="${pair#*=}" '$1 == "image:" && $2 == want { found = 1 } END { exit !found }' "$work/dry-run-image.out" || fail "--image ${pair%%=*} was not rendered as ${pair#*=}"
done
[[ $(install controller-only /dev/null --image "$image" --controller-only --dry-run) == 0 ]] || fail "--controller-only --dry-run failed"
grep -Fq "deployment.apps/restarter-controller" "$work/controller-only.out" || fail "--controller-only does not install the controller"
! grep -Fq "deployment.apps/restarter-webhook" "$work/controller-only.out" || fail "--controller-only installs the webhook"
pass "--kubeconfig: shows the plan and asks; refused, answered no or dry-run: nothing written"
[[ $(install applied /dev/null --image "$image" --yes) == 0 ]] || fail "--yes did not install"
[[ $(k -n restarter-system get deployment restarter-controller -o jsonpath='{.spec.template.spec.containers[0].image}') == "$image" ]] ||
  fail "the installed controller does not run $image"
grep -Fq "successfully rolled out" "$work/applied.out" || fail "--yes did not wait for the rollout"
pass "--kubeconfig --yes: applied, the Deployments run the given image"

webhook_pid=$(printed_pid a serve-webhook)
controller_pid=$(printed_pid a serve-controller)
[[ -n $webhook_pid && -n $controller_pid ]] || fail "the demo did not print its servers' PIDs"
# The marker check below is not vacuous: while the demo waits, the servers carry the marker.
marked=$(grep -las -F "RESTARTER_DEMO_TEST_MARK=$mark" /proc/[0-9]*/environ || true)
for pid in "$webhook_pid" "$controller_pid"; do
  grep -Fxq "/proc/$pid/environ" <<<"$marked" || fail "pid $pid (a server the demo started) does not carry the marker"
done
"$cluster_sh" status >/dev/null 2>&1 || fail "the control plane is not up while the demo waits"
signal_and_check a INT 130 "$mark" "$webhook_pid" "$controller_pid"
pass "Ctrl-C (SIGINT to the process group): exit 130; controller, webhook and control plane stopped, no process left"

# --- 5. SIGTERM in the middle; an error -------------------------------------------------------------------
mark=b-$$-$RANDOM
start_demo b "$mark" --no-wait
wait_output b '^\[6/10\]'
signal_and_check b TERM 143 "$mark" "$(printed_pid b serve-webhook)" "$(printed_pid b serve-controller)"
pass "SIGTERM during the tour: exit 143; everything stopped"

mark=c-$$-$RANDOM
start_demo c "$mark" --no-wait
wait_output c '^  pid [0-9]+, log .*/serve-webhook\.log$'
kill -KILL "$(printed_pid c serve-webhook)"
expect_exit 1
grep -Fq "serve-webhook exited while waiting for" "$work/c.out" || fail "the demo did not report the webhook's exit"
expect_all_stopped "$mark"
pass "an error (the webhook died): exit 1; everything stopped"
