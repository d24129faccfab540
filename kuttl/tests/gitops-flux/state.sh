#!/bin/sh
# state.sh save NAME | same NAME: saves StatefulSet web-flux's state (generation, labels, metadata
# and template annotations, every managedFields entry but the status subresource's: any write to
# the main resource changes one of them) and its ControllerRevision names under NAME, or fails
# unless they are still the same.
set -eu
state() {
  kubectl -n "$NAMESPACE" get statefulset web-flux --show-managed-fields -o json | jq -cS '{generation: .metadata.generation,
    labels: .metadata.labels, metadata: .metadata.annotations, template: .spec.template.metadata.annotations,
    managedFields: [.metadata.managedFields[] | select(.subresource != "status")]}'
  kubectl -n "$NAMESPACE" get controllerrevisions -o json |
    jq -c '[.items[] | select(any(.metadata.ownerReferences[]?; .name == "web-flux")) | .metadata.name] | sort'
}
dir=$(../../lib/controller.sh dir)
case $1 in
  save) state >"$dir/gitops-flux-$2.state"; echo "saved: $(head -c 300 "$dir/gitops-flux-$2.state")..." ;;
  same)
    now=$(state)
    if [ "$now" != "$(cat "$dir/gitops-flux-$2.state")" ]; then
      echo "FAIL: web-flux changed since $2:"
      echo "before: $(cat "$dir/gitops-flux-$2.state")"
      echo "after:  $now"
      exit 1
    fi
    echo "web-flux unchanged since $2 (generation, labels, annotations, field managers, revisions)" ;;
  *) echo "state.sh: save|same NAME" >&2; exit 2 ;;
esac
