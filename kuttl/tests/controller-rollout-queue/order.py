#!/usr/bin/env python3
"""Fails unless the Deployments rolled in priority order.

Usage: order.py MAX   (reads `kubectl get deployments -o json` of the suite on stdin)

Each Deployment's rollout time is restarter's last-rollout annotation. The first MAX rollouts took
the free slots before the rest of the change was even queued (each workload is reconciled in
turn), so they are left out; after them every rollout left the queue when a slot freed, highest
restarter.stackable.tech/rollout-priority first (absent or invalid: 0). A rollout that starts more
than a second before one of higher priority is out of order (two workers may stamp two rollouts
admitted together in either order).
"""
import json
import sys
from datetime import datetime

LAST_ROLLOUT = "restarter.stackable.tech/last-rollout"
PRIORITY = "restarter.stackable.tech/rollout-priority"


def priority(d):
    try:
        return int(d["metadata"].get("annotations", {}).get(PRIORITY, "0"))
    except ValueError:
        return 0


def main():
    limit = int(sys.argv[1])
    items = json.load(sys.stdin)["items"]
    rolled = []
    for d in items:
        stamp = d["metadata"].get("annotations", {}).get(LAST_ROLLOUT)
        if stamp is None:
            print(f"FAIL: {d['metadata']['name']} has no last-rollout")
            return 1
        rolled.append((datetime.fromisoformat(stamp.replace("Z", "+00:00")), priority(d), d["metadata"]["name"]))
    rolled.sort()
    queued = rolled[limit:]
    bad = [(a, b) for i, a in enumerate(queued) for b in queued[i + 1:]
           if b[1] > a[1] and (b[0] - a[0]).total_seconds() > 1.0]
    for when, prio, name in rolled:
        print(f"{when.time()} priority {prio:>3} {name}")
    if bad:
        a, b = bad[0]
        print(f"FAIL: {len(bad)} pairs out of priority order, e.g. {a[2]} (priority {a[1]}) rolled at {a[0].time()}, "
              f"before {b[2]} (priority {b[1]}) at {b[0].time()}")
        return 1
    print(f"{len(queued)} queued rollouts in priority order")
    return 0


if __name__ == "__main__":
    sys.exit(main())
