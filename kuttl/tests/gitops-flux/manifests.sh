#!/bin/sh
# manifests.sh SETTING [IMAGE_TAG]: the "Git" manifests Flux syncs: a ConfigMap whose data is
# SETTING and a labeled StatefulSet mounting it (image tag IMAGE_TAG, default 1), both in
# $NAMESPACE (as a Kustomization's targetNamespace would set it). They never mention restarter's
# annotations, as in a real repository.
set -eu
setting=$1 tag=${2:-1}
cat <<YAML
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg-flux
  namespace: $NAMESPACE
data:
  setting: "$setting"
---
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web-flux
  namespace: $NAMESPACE
  labels:
    restarter.stackable.tech/enabled: "true"
spec:
  serviceName: web-flux
  replicas: 1
  selector:
    matchLabels:
      app: web-flux
  template:
    metadata:
      labels:
        app: web-flux
    spec:
      terminationGracePeriodSeconds: 1
      volumes:
        - name: config
          configMap:
            name: cfg-flux
      containers:
        - name: app
          image: registry.invalid/gitops:$tag
YAML
