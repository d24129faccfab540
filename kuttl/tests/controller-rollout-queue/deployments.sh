#!/usr/bin/env bash
# Prints COUNT labeled 1-replica Deployments q-00.. mounting ConfigMap `shared`, their template
# already annotated with its version VERSION (as the webhook would have at creation: no rollout
# by restarter before the change). Pods become Ready 3 s after they start (kwok's ready-after
# Stage, tests/cluster/README.md), so each rollout takes a few seconds and slots stay held
# long enough to be seen. Priorities: q-00..q-09 10, q-10..q-19 5, q-48 "urgent" (invalid: 0 and
# a Warning Event), the rest none (0).
set -euo pipefail
count=$1 version=$2
for ((i = 0; i < count; i++)); do
  name=$(printf 'q-%02d' "$i")
  prio=
  if ((i < 10)); then prio='"10"'; elif ((i < 20)); then prio='"5"'; elif ((i == 48)); then prio='"urgent"'; fi
  cat <<YAML
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: $name
  labels:
    restarter.stackable.tech/enabled: "true"
    queue.restarter.test/member: "true"
  annotations: {${prio:+restarter.stackable.tech/rollout-priority: $prio}}
spec:
  replicas: 1
  selector:
    matchLabels: {app: $name}
  template:
    metadata:
      labels: {app: $name}
      annotations:
        restarter.test/ready-after: 3s
        configmap.restarter.stackable.tech/shared: $version
    spec:
      terminationGracePeriodSeconds: 0
      volumes:
        - name: config
          configMap: {name: shared}
      containers:
        - name: app
          image: registry.invalid/app:1
          volumeMounts:
            - {name: config, mountPath: /etc/app}
YAML
done
