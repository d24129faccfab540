#!/usr/bin/env bash
# Installs restarter into a real cluster with `kubectl apply -k manifests/` (docs/install.md
# "Install in a cluster"): renders the manifests with the given image, shows the objects and a
# summary of `kubectl diff`, then asks before applying and waits for the Deployments' rollout.
# (`cmd/demo.sh --kubeconfig FILE ...` runs this with the same flags.)
#
# Usage: cmd/install.sh --kubeconfig FILE --image REF [flags]
#   --kubeconfig FILE  the cluster to install into (required; KUBECONFIG and ~/.kube/config are
#                      deliberately ignored, so nothing is written to a cluster you did not name)
#   --context NAME     kubeconfig context (default: its current context)
#   --image REF        the restarter image to run (required: no image is published; build one
#                      with the Dockerfile, docs/install.md "Install in a cluster")
#   --controller-only  install manifests/overlays/controller-only (no webhook)
#   --yes, -y          do not ask before applying
#   --dry-run          print the plan (objects, diff, rendered manifests) and write nothing
#   -h, --help         this help
# Exit status: 0 done; 1 a step failed, or the install was declined; 2 bad command line.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() { sed -n '/^# Usage:/,/^# Exit status:/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
usage_error() {
  printf 'install.sh: %s\n' "$1" >&2
  echo "Try: cmd/install.sh --help" >&2
  exit 2
}
die() { printf '\ninstall.sh: error: %s\n' "$*" >&2; exit 1; }

# --- command line ---------------------------------------------------------------------------------

kubeconfig="" context="" image="" yes=0 dry_run=0 controller_only=0
while (($#)); do
  case $1 in
    -h | --help) usage; exit 0 ;;
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

[[ -n $kubeconfig ]] || usage_error "--kubeconfig is required: the cluster to install into (KUBECONFIG and ~/.kube/config are not used)"
[[ -n $image ]] || usage_error "--image is required with --kubeconfig: no restarter image is published; build one with the Dockerfile, push it, and pass --image <registry>/restarter:<tag> (docs/install.md \"Install in a cluster\")"
[[ $image =~ ^[a-z0-9][^[:space:]@]*(@sha256:[0-9a-f]{64})?$ ]] || usage_error "--image '$image' is not an image reference such as registry.example.com/restarter:1.2.3 or registry.example.com/restarter@sha256:..."
[[ -f $kubeconfig ]] || usage_error "--kubeconfig '$kubeconfig': no such file"
kubeconfig=$(realpath "$kubeconfig")

# --- output ---------------------------------------------------------------------------------------

step_no=0 step_total=0
step() {
  step_no=$((step_no + 1))
  printf '\n[%d/%d] %s\n' "$step_no" "$step_total" "$*"
}
say() { printf '  %s\n' "$*"; }
# Indent a command's output under its step.
indent() { sed 's/^/    /'; }

# --- the install ----------------------------------------------------------------------------------

# Split an image reference into kustomize's images fields: name, and tag or digest.
image_fields() {
  local ref=$1 name tag="" digest=""
  if [[ $ref == *@* ]]; then digest=${ref#*@}; ref=${ref%%@*}; fi
  name=$ref
  # A tag is a ':' after the last '/', so a registry port (host:5000/x) is not mistaken for one.
  if [[ ${ref##*/} == *:* ]]; then tag=${ref##*:}; name=${ref%:*}; fi
  # Without a tag or digest the reference means :latest; saying so replaces the manifests' own tag.
  [[ -n $tag || -n $digest ]] || tag=latest
  printf '    newName: %s\n' "$name"
  [[ -z $tag ]] || printf '    newTag: "%s"\n' "$tag"
  [[ -z $digest ]] || printf '    digest: %s\n' "$digest"
}

install_into_cluster() {
  step_total=4
  local src=$repo/manifests kubectl=(kubectl --kubeconfig "$kubeconfig")
  ((controller_only)) && src=$repo/manifests/overlays/controller-only
  [[ -n $context ]] && kubectl+=(--context "$context")
  command -v kubectl >/dev/null || die "kubectl is not on PATH; install it (https://kubernetes.io/docs/tasks/tools/) and run again"
  [[ -f $src/kustomization.yaml ]] || die "$src/kustomization.yaml is missing: this checkout has no in-cluster manifests"

  step "Rendering $(realpath --relative-to="$repo" "$src") with image $image"
  # A throw-away overlay over the manifests that only sets the image (kustomize wants the base as a
  # relative path). Removed at exit.
  overlay=$(mktemp -d "${TMPDIR:-/tmp}/restarter-install.XXXXXX")
  trap 'rm -rf "$overlay"' EXIT
  {
    echo "apiVersion: kustomize.config.k8s.io/v1beta1"
    echo "kind: Kustomization"
    echo "resources:"
    echo "  - $(realpath --relative-to="$overlay" "$src")"
    echo "images:"
    echo "  - name: restarter"
    image_fields "$image"
  } >"$overlay/kustomization.yaml"
  "${kubectl[@]}" kustomize "$overlay" >"$overlay/rendered.yaml" || die "kustomize failed on $src"
  local server current_context objects namespace
  server=$("${kubectl[@]}" config view --minify -o jsonpath='{.clusters[0].cluster.server}') ||
    die "cannot read the cluster from $kubeconfig${context:+ (context $context)}"
  current_context=${context:-$("${kubectl[@]}" config current-context)}
  say "cluster: $server (context $current_context, kubeconfig $kubeconfig)"

  step "What will be applied"
  objects=$("${kubectl[@]}" apply --dry-run=client -o name -f "$overlay/rendered.yaml" 2>/dev/null) ||
    die "kubectl cannot read the rendered manifests (is the cluster reachable?)"
  indent <<<"$objects"
  namespace=$(sed -n 's|^namespace/||p' <<<"$objects" | head -1)
  say "image: $image"
  # kubectl diff: 0 no differences, 1 differences, >1 an error. The full diff goes to a file that is
  # kept; the summary says per object whether it is new or changed (a first install is all new).
  local diff_file rc=0
  diff_file=$(mktemp "${TMPDIR:-/tmp}/restarter-install-diff.XXXXXX")
  "${kubectl[@]}" diff -f "$overlay/rendered.yaml" >"$diff_file" 2>&1 || rc=$?
  case $rc in
    0) say "kubectl diff: the cluster already has exactly these objects; applying changes nothing" ;;
    1) say "kubectl diff (full diff: $diff_file):"
       # Each object's section starts "diff -u -N .../LIVE-x/<id> .../MERGED-x/<id>"; a new object's
       # hunk starts "@@ -0,0".
       awk '/^diff -u -N / { if (id != "") printf "    %-8s %s\n", state, id; n = split($NF, p, "/"); id = p[n]; state = "changed"; next }
            /^@@ -0,0 / { state = "new" }
            END { if (id != "") printf "    %-8s %s\n", state, id }' "$diff_file" ;;
    *) if [[ -n $namespace ]] && ! "${kubectl[@]}" get namespace "$namespace" >/dev/null 2>&1; then
         say "kubectl diff: namespace $namespace does not exist yet, so every object above is new"
       else
         say "kubectl diff failed (showing the objects only):"; indent <"$diff_file"
       fi ;;
  esac
  ((rc == 1)) || rm -f "$diff_file"
  if ((dry_run)); then
    say "the rendered manifests (--dry-run):"
    indent <"$overlay/rendered.yaml"
    step "Dry run: nothing was applied"
    step "Done"
    return 0
  fi

  step "Applying to $server"
  if ((yes == 0)); then
    local answer=""
    printf '  Apply these objects to %s (context %s)? [y/N] ' "$server" "$current_context"
    read -r answer || answer=""
    [[ -t 0 ]] || echo
    case $answer in
      y | Y | yes | YES) ;;
      *) echo "install.sh: not applied (answer was '${answer}'; --yes skips the question)" >&2; exit 1 ;;
    esac
  fi
  "${kubectl[@]}" apply -f "$overlay/rendered.yaml" 2>&1 | indent
  local deployment
  grep '^deployment' <<<"$objects" | while read -r deployment; do
    "${kubectl[@]}" -n "$namespace" rollout status "$deployment" --timeout=300s | indent ||
      die "$deployment did not become available; see: kubectl -n $namespace describe $deployment"
  done

  step "Installed"
  cat <<TXT
  restarter runs in namespace $namespace. Label a workload to have it restarted on config changes:
    kubectl label statefulset <name> restarter.stackable.tech/enabled=true
  Why did it restart? (kubectl plugin, docs/install.md "kubectl plugin (Krew)")
    kubectl restarter explain-restart sts/<name> -n <namespace>
  Logs:      kubectl -n $namespace logs deployment/restarter-controller
  Uninstall: kubectl delete -k $src
             kubectl delete mutatingwebhookconfiguration restarter-webhook.stackable.tech  (the webhook made it)
TXT
}

install_into_cluster
