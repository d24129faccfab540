#!/usr/bin/env python3
"""Writes the fuzz inputs too large to check in (tests/fuzz/run.sh runs this first):

    tests/fuzz/generate_seeds.py OUT_DIR

  OUT_DIR/seeds/<target>/   seeds fuzzed from, after corpus/<target>/: 20,000 levels of nesting
                            (40 KB) in reviews. Without the depth limit of lib/core/json_parse.hpp
                            a recursive copy of that overflows the 8 MiB stack of the fuzz build
                            (measured: the admission target's copy of a patched object crashed at
                            20,000 levels);
  OUT_DIR/inputs/<target>/  inputs run once each, too large to fuzz from in CI's time (inputs grow
                            towards the longest seed): 100,000 levels, which a dump needs to
                            overflow that stack (measured: from ~59,500 levels for a watch
                            ERROR event), among them the 600 KB review that crashed serve-webhook
                            (request.kind 100,000 objects deep); and a labeled StatefulSet whose pod
                            template annotations sit just below the apiserver's 256 KiB limit, so
                            that the webhook's patch ends exactly at the limit, and once one byte
                            over it (core/annotation_size.hpp).
Where the nesting sits: request.kind (the old webhook copied it), a container's args in a labeled
StatefulSet (patched, so the fuzz target copies and dumps the object), a watch ERROR event's
Status (the target and Client::watch dump it) and a list item. Deterministic: the same files
every time.
"""

import json
import pathlib
import sys

SEED_LEVELS = 20_000
ATTACK_LEVELS = 100_000
ANNOTATIONS_LIMIT = 256 * 1024  # apimachinery's TotalAnnotationSizeLimitB


def nested_objects(levels):
    """{"a":{"a":...1...}}: the shape of the attack (6 bytes a level)."""
    return '{"a":' * levels + "1" + "}" * levels


def nested_arrays(levels):
    """[[[...]]]: the same depth in a third of the bytes."""
    return "[" * levels + "]" * levels


def review(kind_json, obj_json):
    return (
        '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{'
        '"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","kind":' + kind_json + ','
        '"resource":{"group":"apps","version":"v1","resource":"statefulsets"},'
        '"namespace":"ns1","name":"web","operation":"CREATE","object":' + obj_json + "}}"
    )


STATEFULSET_KIND = '{"group":"apps","version":"v1","kind":"StatefulSet"}'


def statefulset(template_annotations, config_map):
    return json.dumps(
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "ns1",
                         "labels": {"restarter.stackable.tech/enabled": "true"}},
            "spec": {"template": {
                "metadata": {"annotations": template_annotations},
                "spec": {"containers": [{"name": "app", "image": "x"}],
                         "volumes": [{"name": "cfg", "configMap": {"name": config_map}}]}}},
        },
        separators=(",", ":"),
    )


def present_config_map():
    """A name the admission target's fetcher reports present and not ignored (byte sum % 4 == 3),
    and the annotation the webhook then adds for it."""
    for suffix in range(100):
        name = f"app-config-{suffix}"
        total = sum(name.encode())
        if total % 4 == 3:
            key = f"configmap.restarter.stackable.tech/{name}"
            value = f"uid-{name}/{total}"
            return name, len(key) + len(value)
    raise SystemExit("no name found")


def at_annotations_limit(overshoot):
    """A review whose patch makes the template annotations end `overshoot` bytes past the limit."""
    name, added = present_config_map()
    filler_key = "example.com/filler"
    filler = ANNOTATIONS_LIMIT + overshoot - added - len(filler_key)
    return review(STATEFULSET_KIND, statefulset({filler_key: "x" * filler}, name))


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: tests/fuzz/generate_seeds.py OUT_DIR")
    out = pathlib.Path(sys.argv[1])
    plain = statefulset({}, present_config_map()[0])  # patched: the target copies and dumps it

    def deep_args(levels):
        return review(STATEFULSET_KIND, plain.replace('"image":"x"', '"image":"x","args":' + nested_arrays(levels)))

    # The first byte of a watch_stream input picks the chunk size (watch_stream_fuzz.cpp): '?' is
    # 63, 64-byte chunks. Both the target and Client::watch dump an ERROR event's Status.
    def error_event(levels):
        return '?{"type":"ERROR","object":{"kind":"Status","code":410,"details":' + nested_arrays(levels) + "}}\n"

    def list_with_deep_item(levels):
        return ('{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1",'
                '"metadata":{"resourceVersion":"5"},"items":[{"kind":"PartialObjectMetadata",'
                '"metadata":{"name":"a"},"x":' + nested_arrays(levels) + "}]}")

    files = {
        "seeds": {
            "admission_review": {
                "deep-request-kind.json": review(nested_arrays(SEED_LEVELS), plain),
                "deep-container-args.json": deep_args(SEED_LEVELS),
            },
        },
        "inputs": {
            "admission_review": {
                "deep-request-kind-100000.json": review(nested_objects(ATTACK_LEVELS), plain),
                "deep-container-args-100000.json": deep_args(ATTACK_LEVELS),
                "annotations-at-limit.json": at_annotations_limit(0),
                "annotations-one-byte-over-limit.json": at_annotations_limit(1),
            },
            "watch_stream": {"deep-error-event-100000.jsonl": error_event(ATTACK_LEVELS)},
            "list_body": {"deep-list-item-100000.json": list_with_deep_item(ATTACK_LEVELS)},
        },
    }
    for kind, targets in files.items():
        for target, named in targets.items():
            directory = out / kind / target
            directory.mkdir(parents=True, exist_ok=True)
            for old in directory.iterdir():
                old.unlink()
            for name, text in named.items():
                (directory / name).write_bytes(text.encode())


if __name__ == "__main__":
    main()
