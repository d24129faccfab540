#!/usr/bin/env python3
"""Normalizes a stream of Kubernetes YAML documents for comparison (tests/check-helm.sh).

Usage: normalize.py [--drop-namespace NAME] < objects.yaml > normalized.yaml

Drops empty documents; removes Helm's own labels (helm.sh/chart, app.kubernetes.io/managed-by,
app.kubernetes.io/instance, app.kubernetes.io/version) wherever they appear as map keys (labels,
selectors, affinity terms); with --drop-namespace, removes the Namespace object NAME, failing when
there is none (the chart does not own its release namespace, docs/install.md "Install with
Helm"); sorts the objects by kind, namespace and name; prints them as YAML with sorted keys, so only
content differences remain. Comments and formatting are gone by then: both sides are parsed first.
"""
import sys

import yaml

HELM_LABELS = {
    "helm.sh/chart",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
}


def strip(value):
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k not in HELM_LABELS}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


def key(obj):
    meta = obj.get("metadata") or {}
    return (obj.get("kind", ""), meta.get("namespace", ""), meta.get("name", ""))


def main(argv):
    drop = None
    if len(argv) == 3 and argv[1] == "--drop-namespace":
        drop = argv[2]
    elif len(argv) != 1:
        sys.exit(__doc__)
    objects = [strip(o) for o in yaml.safe_load_all(sys.stdin) if o]
    if drop is not None:
        kept = [o for o in objects if key(o) != ("Namespace", "", drop)]
        if len(kept) != len(objects) - 1:
            sys.exit(f"normalize.py: expected one Namespace {drop} in the input")
        objects = kept
    objects.sort(key=key)
    yaml.safe_dump_all(objects, sys.stdout, sort_keys=True, default_flow_style=False)


if __name__ == "__main__":
    main(sys.argv)
