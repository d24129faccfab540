# shellcheck shell=bash
# shellcheck disable=SC2154,SC2317  # cmd/demo.sh's variables; sample and the probes run from wait_until
# The tour's workload (cmd/demo.sh, once both servers are ready): a labeled StatefulSet with its
# ConfigMap and Secret created through the webhook, its first rollout (generation 1), a change of
# the ConfigMap and the rollout the controller makes, and explain-restart with the Event saying
# why. Sourced by cmd/demo.sh in its shell (its traps, variables and helpers), never executed.

step "Creating namespace $ns with ConfigMap web-config, Secret web-secret and the labeled StatefulSet web"
sample() {
  cat <<'YAML'
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
  labels:
    restarter.stackable.tech/enabled: "true"   # restarter manages this workload
spec:
  replicas: 3
  serviceName: web
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: registry.k8s.io/nginx-slim:0.27   # kwok's fake nodes never pull or run it
          envFrom:
            - secretRef: {name: web-secret}
          volumeMounts:
            - {name: config, mountPath: /etc/web}
      volumes:
        - name: config
          configMap: {name: web-config}
YAML
}
k create namespace "$ns" >/dev/null
k -n "$ns" create configmap web-config --from-literal=greeting=hello | indent
k -n "$ns" create secret generic web-secret --from-literal=password=s3cret | indent
# The apiserver picks up the new configuration and CA bundle within moments; a server-side dry run
# shows when the webhook is really called (it then adds the annotations).
webhook_called() {
  sample | k -n "$ns" create --dry-run=server -o jsonpath='{.spec.template.metadata.annotations}' -f - |
    grep -F configmap.restarter.stackable.tech/web-config
}
wait_until "the apiserver to call the webhook" serve-webhook webhook_called
sample | k -n "$ns" create -f - | indent
k -n "$ns" rollout status statefulset/web --timeout="${wait_seconds}s" | indent

step "The first rollout: the webhook annotated the StatefulSet while it was created"
generation=$(k -n "$ns" get statefulset web -o jsonpath='{.metadata.generation}')
say "metadata.generation: $generation"
say "pod template annotations:"
k -n "$ns" get statefulset web -o json |
  jq -r '.spec.template.metadata.annotations // {} | to_entries[] | "      \(.key): \(.value)"'
if [[ $generation == 1 ]]; then
  say "Generation 1: the first revision already carried the annotations, so no pod was restarted."
  say "(Without the webhook the controller records the versions in the workload's metadata instead,"
  say " restarter.stackable.tech/baseline, which restarts nothing either; docs/behaviour.md \"Restart only when pods need it\".)"
else
  say "Generation $generation, not 1: the webhook did not annotate the creation (see $state/serve-webhook.log);"
  say "the controller added the annotations afterwards, at the cost of one extra restart."
fi
say "restarter explain-restart sts/web agrees:"
r explain-restart sts/web -n "$ns" --no-color | indent
pods_before=$(k -n "$ns" get pods -l app=web -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid}{"\n"}{end}')
revision_before=$(k -n "$ns" get statefulset web -o jsonpath='{.status.updateRevision}')

step "Changing ConfigMap web-config: the controller rolls the StatefulSet"
cm_before=$(k -n "$ns" get configmap web-config -o jsonpath='{.metadata.uid}/{.metadata.resourceVersion}')
k -n "$ns" patch configmap web-config --type merge -p '{"data":{"greeting":"hello again"}}' | indent
cm_after=$(k -n "$ns" get configmap web-config -o jsonpath='{.metadata.uid}/{.metadata.resourceVersion}')
say "web-config: $cm_before -> $cm_after"
k -n "$ns" wait statefulset/web --for=jsonpath='{.metadata.generation}'=2 --timeout="${wait_seconds}s" | indent
k -n "$ns" rollout status statefulset/web --timeout="${wait_seconds}s" | indent
revision_after=$(k -n "$ns" get statefulset web -o jsonpath='{.status.updateRevision}')
pods_after=$(k -n "$ns" get pods -l app=web -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.uid}{"\n"}{end}')
replaced=$(comm -13 <(sort <<<"$pods_before") <(sort <<<"$pods_after") | wc -l)
say "metadata.generation: 2; revision $revision_before -> $revision_after; $replaced of $(wc -l <<<"$pods_after") pods replaced"
k -n "$ns" get controllerrevisions -l app=web | indent
k -n "$ns" get pods -l app=web -L controller-revision-hash | indent

step "Why did it restart? restarter explain-restart sts/web, and the Event"
r explain-restart sts/web -n "$ns" --no-color | indent
restarted_event() { [[ -n $(k -n "$ns" get events --field-selector reason=Restarted,involvedObject.name=web -o name) ]]; }
wait_until "the Restarted Event" serve-controller restarted_event
say "kubectl describe statefulset web (its Events):"
k -n "$ns" describe statefulset web | sed -n '/^Events:/,$p' | indent

