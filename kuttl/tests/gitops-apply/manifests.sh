#!/bin/sh
# manifests.sh MODE SETTING: the "Git" manifests of one mode (csa: kubectl apply, client-side;
# ssa: kubectl apply --server-side), a ConfigMap whose data is SETTING and a labeled StatefulSet
# mounting it. The manifests never mention restarter's annotations, as in a real repository.
set -eu
mode=$1 setting=$2
cat <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg-$mode
data:
  setting: "$setting"
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web-$mode
  labels:
    restarter.stackable.tech/enabled: "true"
spec:
  serviceName: web-$mode
  replicas: 1
  selector:
    matchLabels:
      app: web-$mode
  template:
    metadata:
      labels:
        app: web-$mode
    spec:
      terminationGracePeriodSeconds: 1
      volumes:
        - name: config
          configMap:
            name: cfg-$mode
      containers:
        - name: app
          image: registry.invalid/gitops:1
YAML
