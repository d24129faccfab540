#!/usr/bin/env python3
"""Exact admission latencies from the apiserver's own trace spans (tests/bench/webhook.sh).

  spans.py SPANS.jsonl CONFIGURATION START_NS END_NS

SPANS.jsonl is otlp-sink's output ("Call mutating webhook" spans). Takes the spans of the
MutatingWebhookConfiguration CONFIGURATION that started in [START_NS, END_NS] and prints
  n=N p50=.. p90=.. p99=.. max=.. ms, S% <= 5 ms; until the answer: p50=.. p99=.. ms
Quantiles are nearest-rank (the value at rank ceil(q*n)), no interpolation. "Until the answer"
is the span's "Request completed" event: the HTTPS round trip to the webhook, without the patch
the apiserver applies afterwards. With --count it prints only the number of matching spans; with
--samples FILE it also appends every matching span's duration in ms to FILE, one per line, in the
order the spans started (tests/bench/record.py reads them).
"""
import json
import math
import sys


def rank(values, q):
    return values[max(0, math.ceil(q * len(values)) - 1)]


def main():
    count_only = "--count" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--count"]
    samples_path = None
    if "--samples" in args:
        at = args.index("--samples")
        if at + 1 == len(args):
            print(__doc__, file=sys.stderr)
            return 2
        samples_path = args[at + 1]
        del args[at:at + 2]
    if len(args) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    path, configuration, start_ns, end_ns = args[0], args[1], int(args[2]), int(args[3])
    total, answered, started = [], [], []
    with open(path) as f:
        for line in f:
            try:
                span = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line being written
            if span.get("attributes", {}).get("configuration") != configuration:
                continue
            if not start_ns <= span.get("start_unix_nano", 0) <= end_ns:
                continue
            total.append(span["duration_ms"])
            started.append((span["start_unix_nano"], span["duration_ms"]))
            if "Request completed" in span.get("events_ms", {}):
                answered.append(span["events_ms"]["Request completed"])
    if count_only:
        print(len(total))
        return 0
    if samples_path:
        with open(samples_path, "a") as f:
            for _, duration in sorted(started):
                f.write(f"{duration}\n")
    if not total:
        print("no spans")
        return 0
    total.sort()
    answered.sort()
    under5 = sum(1 for v in total if v <= 5.0)
    line = (f"n={len(total)} p50={rank(total, 0.5):.2f} p90={rank(total, 0.9):.2f} "
            f"p99={rank(total, 0.99):.2f} max={total[-1]:.2f} ms, {100 * under5 / len(total):.1f}% <= 5 ms")
    if answered:
        line += f"; until the answer: p50={rank(answered, 0.5):.2f} p99={rank(answered, 0.99):.2f} ms"
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
