#!/usr/bin/env python3
"""Samples the suite's Deployments until every one has rolled to the new version and finished, and
fails if more than MAX of restarter's rollouts were ever in progress at once.

Usage: watch.py MAX TOTAL KEY VALUE SECONDS   (kuttl's NAMESPACE and KUBECONFIG in the environment)

In progress, as serve-controller judges it (core::rolloutProgressOf, core::rolloutSlotUntil): the
Deployment carries restarter's last-rollout annotation (restarter rolled it; the suite creates them
with their template already annotated, so no other rollout has one) and its status is unfinished:
generation not yet observed, fewer updated or available replicas than wanted, or old pods left.
Each sample is one list, so one consistent resourceVersion of every Deployment. Prints one line per
sample whose count changed, then "max in progress: N" and exits 1 when N > MAX, when N never
reached MAX (the limit was not exercised, the proof would be empty), or after SECONDS.
"""
import json
import os
import subprocess
import sys
import time

LAST_ROLLOUT = "restarter.stackable.tech/last-rollout"


def unfinished(d):
    meta, spec, status = d["metadata"], d.get("spec", {}), d.get("status", {})
    wanted = spec.get("replicas", 1)
    return (
        status.get("observedGeneration", 0) < meta.get("generation", 0)
        or status.get("updatedReplicas", 0) != wanted
        or status.get("replicas", 0) != status.get("updatedReplicas", 0)
        or status.get("availableReplicas", 0) != wanted
    )


def main():
    limit, total, key, value, seconds = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], float(sys.argv[5])
    ns = os.environ["NAMESPACE"]
    deadline = time.monotonic() + seconds
    highest, last, samples = 0, None, 0
    while True:
        out = subprocess.run(
            ["kubectl", "-n", ns, "get", "deployments", "-l", "queue.restarter.test/member=true", "-o", "json"],
            check=True, capture_output=True, text=True).stdout
        items = json.loads(out)["items"]
        samples += 1
        rolling = sorted(d["metadata"]["name"] for d in items
                         if LAST_ROLLOUT in d["metadata"].get("annotations", {}) and unfinished(d))
        done = [d for d in items
                if d["spec"]["template"]["metadata"].get("annotations", {}).get(key) == value and not unfinished(d)]
        highest = max(highest, len(rolling))
        if len(rolling) != last:
            print(f"{time.strftime('%H:%M:%S')} in progress {len(rolling)} done {len(done)}/{total}: {' '.join(rolling)}",
                  flush=True)
            last = len(rolling)
        if len(rolling) > limit:
            print(f"FAIL: {len(rolling)} rollouts in progress at once, more than {limit}", flush=True)
            return 1
        if len(items) == total and len(done) == total:
            break
        if time.monotonic() > deadline:
            print(f"FAIL: after {seconds:.0f}s only {len(done)} of {total} on {value}", flush=True)
            return 1
        time.sleep(0.25)
    print(f"max in progress: {highest} ({samples} samples)", flush=True)
    if highest < limit:
        print(f"FAIL: never {limit} rollouts in progress at once: the limit was not exercised", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
