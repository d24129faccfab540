#!/usr/bin/env bash
# shellcheck disable=SC2317  # the functions below that look unreachable run from traps and wait_until
# The main job in one command (README "Set up"): watch restarter work, or install it into a cluster.
#
# Usage: cmd/demo.sh [flags]
#
# Without --kubeconfig (the default; KUBECONFIG and ~/.kube/config are deliberately ignored, so
# the demo never writes to a cluster you did not name): on a fresh Debian 12 machine it installs
# the packages restarter needs, builds it, starts the local control plane (tests/cluster; cluster
# name $RESTARTER_CLUSTER, default "demo"), runs serve-webhook and serve-controller against it,
# creates a labeled StatefulSet with its ConfigMap and Secret, shows metadata.generation 1 and the
# annotations, changes the ConfigMap, shows the rollout, explain-restart and the Event, prints how
# to keep exploring, and waits for Ctrl-C. On Ctrl-C, SIGTERM, an error or the end of the tour it
# stops everything it started: the controller, the webhook and the control plane.
#   --no-wait          stop everything and exit 0 after the tour instead of waiting for Ctrl-C
#   --keep-cluster     leave the control plane running at the end (the controller and the webhook
#                      always stop; its webhook configuration is deleted)
#
# With --kubeconfig FILE (a real cluster): runs cmd/install.sh with the same flags instead, which
# installs restarter there with `kubectl apply -k manifests/`: it shows the objects and `kubectl
# diff`, then asks before writing (cmd/install.sh --help).
#   --kubeconfig FILE  the cluster to install into (required for this mode)
#   --context NAME     kubeconfig context (default: its current context)
#   --image REF        the restarter image to run (required: no image is published; build one
#                      with the Dockerfile, docs/install.md "Install in a cluster")
#   --controller-only  install manifests/overlays/controller-only (no webhook)
#   --yes              do not ask before applying
#   --dry-run          print the plan (objects, diff, rendered manifests) and write nothing
#
#   -h, --help         this help
# Environment: RESTARTER_BIN=<restarter binary> reuses that binary instead of building build/demo
# (CI passes its own build); RESTARTER_CLUSTER=<name> names the local control plane.
# Exit status: 0 done; 1 a step failed, or the install was declined; 2 bad command line;
# 130/143 interrupted by SIGINT/SIGTERM (after stopping everything).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cluster_sh=$repo/tests/cluster/cluster.sh
# shellcheck source=SCRIPTDIR/../tests/lib/process.sh
source "$repo/tests/lib/process.sh"

usage() { sed -n '/^# Usage:/,/^# Exit status:/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
usage_error() {
  printf 'demo.sh: %s\n' "$1" >&2
  echo "Try: cmd/demo.sh --help" >&2
  exit 2
}
die() { printf '\ndemo.sh: error: %s\n' "$*" >&2; exit 1; }

# --- command line ---------------------------------------------------------------------------------

args=("$@")
no_wait=0 keep_cluster=0 kubeconfig="" context="" image="" yes=0 dry_run=0 controller_only=0
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
    --no-wait) no_wait=1 ;;
    --keep-cluster) keep_cluster=1 ;;
    --yes | -y) yes=1 ;;
    --dry-run) dry_run=1 ;;
    --controller-only) controller_only=1 ;;
    --kubeconfig | --context | --image)
      if (($# < 2)) || [[ -z $2 ]]; then usage_error "$1 needs a value"; fi
      case $1 in
        --kubeconfig) kubeconfig=$2 ;;
        --context) context=$2 ;;
        --image) image=$2 ;;
      esac
      shift ;;
    --kubeconfig=* ) kubeconfig=${1#*=}; [[ -n $kubeconfig ]] || usage_error "--kubeconfig needs a value" ;;
    --context=* ) context=${1#*=}; [[ -n $context ]] || usage_error "--context needs a value" ;;
    --image=* ) image=${1#*=}; [[ -n $image ]] || usage_error "--image needs a value" ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
  shift
done

if [[ -n $kubeconfig ]]; then
  ((no_wait == 0 && keep_cluster == 0)) || usage_error "--no-wait and --keep-cluster belong to the local demo, not to --kubeconfig"
  # A real cluster: the installer, which checks the rest of the command line.
  exec "$repo/cmd/install.sh" "${args[@]}"
fi
if [[ -n $image || -n $context ]] || ((yes || dry_run || controller_only)); then usage_error "--image, --context, --yes, --dry-run and --controller-only need --kubeconfig (they belong to installing into a cluster)"; fi

# --- output ---------------------------------------------------------------------------------------

step_no=0 step_total=0
step() {
  step_no=$((step_no + 1))
  printf '\n[%d/%d] %s\n' "$step_no" "$step_total" "$*"
}
say() { printf '  %s\n' "$*"; }
# Indent a command's output under its step.
indent() { sed 's/^/    /'; }

# --- the local demo -------------------------------------------------------------------------------

[[ -n ${KUBECONFIG:-} ]] && echo "demo.sh: KUBECONFIG is set but not used: the demo runs on its own local control plane (pass --kubeconfig to install into a cluster)"

export RESTARTER_CLUSTER=${RESTARTER_CLUSTER:-demo}
state=${XDG_STATE_HOME:-$HOME/.local/state}/restarter/demo/$RESTARTER_CLUSTER
ns=demo
# Fixed ports: they are on the loopback of the cluster's own network namespace, which only this
# demo uses.
webhook_port=8443 webhook_metrics=127.0.0.1:8080 webhook_health=127.0.0.1:8081
controller_metrics=127.0.0.1:8082 controller_health=127.0.0.1:8083
mwc=restarter-webhook.stackable.tech
# Bound on every wait below; each returns as soon as its condition holds.
wait_seconds=${RESTARTER_DEMO_WAIT_SECONDS:-180}

k() { "$cluster_sh" exec -- kubectl "$@"; }
# The restarter binary, run inside the cluster's network namespace.
r() { "$cluster_sh" exec -- "$bin" "$@"; }

# --- stopping everything ----------------------------------------------------------------------------

# shellcheck source=cmd/demo/lifecycle.sh
source "$repo/cmd/demo/lifecycle.sh"

# --- the tour ---------------------------------------------------------------------------------------

step_total=10

step "Installing the Debian packages restarter needs (tests/install-deps.sh)"
"$repo/tests/install-deps.sh"
say "done"

if [[ -n ${RESTARTER_BIN:-} ]]; then
  bin=$(realpath "$RESTARTER_BIN")
  [[ -x $bin ]] || die "RESTARTER_BIN=$RESTARTER_BIN is not an executable"
  step "Using the restarter binary $bin (RESTARTER_BIN)"
else
  step "Building restarter (build/demo)"
  # The build recipe CI and the Dockerfile use; only the binary, no tests.
  "$repo/cmd/build.sh" "$repo/build/demo" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRESTARTER_BUILD_TESTS=OFF \
    -- --target restarter | tail -n 1 | indent
  bin=$repo/build/demo/cmd/restarter/restarter
fi
say "$("$bin" --version)"
# kubectl finds plugins by name on PATH: this link makes `kubectl restarter` work in the hints below.
mkdir -p "$state/bin"
ln -sfn "$bin" "$state/bin/kubectl-restarter"

step "Starting the local control plane '$RESTARTER_CLUSTER' (tests/cluster; the first time builds it from Go modules, 10-15 min on 2 cores)"
if "$cluster_sh" status >/dev/null 2>&1; then
  die "the local control plane '$RESTARTER_CLUSTER' is already running (another demo, or one kept with --keep-cluster). Stop it: RESTARTER_CLUSTER=$RESTARTER_CLUSTER $cluster_sh down   (or run the demo under another name: RESTARTER_CLUSTER=other cmd/demo.sh)"
fi
cluster_started=1
# up prints the kubeconfig's path on stdout and its progress on stderr.
# 3>&- 4>&-: the control plane may outlive the demo (--keep-cluster) and must not hold its output.
# Only the control plane: the tests' tools (kuttl, krew, helm, Flux's library) are not built for it.
RESTARTER_CLUSTER_CONTROL_PLANE_ONLY=1 "$cluster_sh" up 2>&1 >"$state/kubeconfig-path" 3>&- 4>&- | sed 's/^cluster: //' | indent
kubeconfig_file=$(<"$state/kubeconfig-path")
say "kube-apiserver https://127.0.0.1:6443 inside network namespace restarter-$RESTARTER_CLUSTER (loopback only); 2 fake nodes (kwok)"

step "Starting serve-webhook (https://127.0.0.1:$webhook_port/mutate, certificates managed in a Secret)"
k create namespace restarter-system >/dev/null
# As in the in-cluster install (manifests/), it manages everything itself: its CA and serving
# certificate in Secret restarter-system/restarter-webhook-certs, and the MutatingWebhookConfiguration,
# here by URL with an IP SAN for 127.0.0.1 (the apiserver runs on this machine, not in a pod).
: >"$state/serve-webhook.log"
"$cluster_sh" exec -- "$bin" serve-webhook --service-namespace restarter-system \
  --webhook-url "https://127.0.0.1:$webhook_port/mutate" --bind-address 127.0.0.1 --port "$webhook_port" \
  --manage-configuration --configuration-name "$mwc" --exclude-namespace kube-system \
  --metrics-bind-address "$webhook_metrics" --health-probe-bind-address "$webhook_health" \
  >"$state/serve-webhook.log" 2>&1 </dev/null 3>&- 4>&- &
webhook_pid=$!
proc_record "$webhook_pid" "$state/serve-webhook.pid"
say "pid $webhook_pid, log $state/serve-webhook.log"
wait_until "serve-webhook /readyz" serve-webhook ready "$webhook_health"
say "ready: http://$webhook_health/readyz answers ok; MutatingWebhookConfiguration $mwc applied with its CA bundle"

step "Starting serve-controller (watches labeled StatefulSets, Deployments, DaemonSets)"
: >"$state/serve-controller.log"
"$cluster_sh" exec -- "$bin" serve-controller --metrics-bind-address "$controller_metrics" \
  --health-probe-bind-address "$controller_health" >"$state/serve-controller.log" 2>&1 </dev/null 3>&- 4>&- &
controller_pid=$!
proc_record "$controller_pid" "$state/serve-controller.pid"
say "pid $controller_pid, log $state/serve-controller.log"
wait_until "serve-controller /readyz" serve-controller ready "$controller_health"
say "ready: http://$controller_health/readyz answers ok (every cache has synced)"

# shellcheck source=cmd/demo/workload.sh
source "$repo/cmd/demo/workload.sh"

step "Keep exploring"
cat <<TXT
  Every client must run inside the control plane's network namespace (loopback only); cluster.sh
  exec does that and sets KUBECONFIG=$kubeconfig_file:
    alias k='RESTARTER_CLUSTER=$RESTARTER_CLUSTER $cluster_sh exec -- kubectl'
    k -n $ns patch configmap web-config --type merge -p '{"data":{"greeting":"hi"}}'
    k -n $ns get statefulset,pods
  The kubectl plugin (kubectl finds kubectl-restarter on PATH):
    PATH=$state/bin:\$PATH RESTARTER_CLUSTER=$RESTARTER_CLUSTER $cluster_sh exec -- kubectl restarter explain-restart sts/web -n $ns --watch
  Or a shell inside: RESTARTER_CLUSTER=$RESTARTER_CLUSTER $cluster_sh exec -- bash
  Logs: $state/serve-controller.log, $state/serve-webhook.log
  Metrics (docs/operations.md "Metrics"):
    RESTARTER_CLUSTER=$RESTARTER_CLUSTER $cluster_sh exec -- curl -s http://$controller_metrics/metrics   # controller
    RESTARTER_CLUSTER=$RESTARTER_CLUSTER $cluster_sh exec -- curl -s http://$webhook_metrics/metrics   # webhook
TXT
if ((no_wait)); then
  say "--no-wait: stopping everything now."
  exit 0
fi
printf '\n  Running. Press Ctrl-C to stop the controller, the webhook and the control plane%s.\n' \
  "$( ((keep_cluster)) && echo ' (the control plane stays: --keep-cluster)')"
# Wakes on Ctrl-C / SIGTERM (the traps), or when either server exits on its own, which is an error.
set +e
wait -n "$webhook_pid" "$controller_pid"
rc=$?
set -e
proc_alive "$state/serve-webhook.pid" || { tail -n 20 "$state/serve-webhook.log" | indent >&2; die "serve-webhook exited (status $rc)"; }
tail -n 20 "$state/serve-controller.log" | indent >&2
die "serve-controller exited (status $rc)"
