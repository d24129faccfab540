#!/usr/bin/env python3
"""Creates objects through the apiserver at a steady rate, from one process over one keep-alive
connection (tests/bench/webhook.sh, end-to-end part).

  create_at_rate.py --url http://127.0.0.1:PORT/apis/apps/v1/namespaces/NS/statefulsets \
      --body OBJECT.json --prefix NAME- --rate 5 --count 100

OBJECT.json is a StatefulSet; copy i (1..count) is named PREFIX<i> (serviceName too) with
replicas 0. --dry-run: server-side dry runs (?dryRun=All: admitted, webhooks called, nothing
stored), as a tenant may send them in its own namespace (kuttl webhook-lookup-bounds). Creation i is sent at start + (i-1)/rate, or at once when behind. Prints one line:
"created C failed F start_ns S end_ns E" (wall clock, ns). Exit 1 when any creation failed.
A process per creation (curl, jq) would put ~15 process start-ups a second on the same two cores
as the apiserver and the webhook under measurement.
"""
import argparse
import copy
import http.client
import json
import sys
import time
import urllib.parse


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--body", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    if args.rate <= 0 or args.count <= 0:
        parser.error("--rate and --count must be positive")
    url = urllib.parse.urlsplit(args.url)
    if url.scheme != "http" or url.hostname not in ("127.0.0.1", "localhost"):
        parser.error("--url must be http://127.0.0.1:PORT/... (kubectl proxy on loopback)")
    with open(args.body) as f:
        template = json.load(f)

    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    created = failed = 0
    start_ns = time.time_ns()
    start = time.monotonic()
    for i in range(1, args.count + 1):
        delay = start + (i - 1) / args.rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        obj = copy.deepcopy(template)
        obj["metadata"]["name"] = f"{args.prefix}{i}"
        obj["spec"]["serviceName"] = f"{args.prefix}{i}"
        obj["spec"]["replicas"] = 0
        try:
            path = url.path + ("?dryRun=All" if args.dry_run else "")
            conn.request("POST", path, body=json.dumps(obj), headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            text = response.read()
            if response.status == 201:
                created += 1
            else:
                failed += 1
                print(f"create {args.prefix}{i}: HTTP {response.status}: {text[:200]!r}", file=sys.stderr)
        except (OSError, http.client.HTTPException) as e:
            failed += 1
            print(f"create {args.prefix}{i}: {e}", file=sys.stderr)
            conn.close()
            conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    print(f"created {created} failed {failed} start_ns {start_ns} end_ns {time.time_ns()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
