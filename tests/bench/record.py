#!/usr/bin/env python3
"""Writes one benchmark result as JSON, the input of tests/bench/plot.py.

  record.py OUT.json NAME [KEY=VALUE ...] [--samples KEY=FILE ...] [--load-at-start L]

NAME says which benchmark made it (for example "controller" or "webhook-e2e"). Every KEY=VALUE
becomes a field: numbers as numbers, the rest as strings. --samples KEY=FILE reads one number per
line of FILE into the list KEY (latencies, in the order measured). The machine (cores, memory,
OS, kernel) and the load average now, and at the start when given, are recorded with it, so a plot
can say what it was measured on, and the commit of the checkout (git describe --always --dirty).
Standard library only: a benchmark must not need matplotlib.
"""
import json
import os
import platform
import subprocess
import sys
import time


def number_or_string(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def machine():
    memory_kib = 0
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                memory_kib = int(line.split()[1])
    system = platform.system()
    try:
        with open("/etc/os-release") as f:
            fields = dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line)
        system = fields.get("PRETTY_NAME", system).strip('"')
    except OSError:
        pass
    return {
        "cores": os.cpu_count(),
        "memory_gib": round(memory_kib / 1024 / 1024),
        "os": system,
        "kernel": platform.release(),
    }


def commit():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        return subprocess.run(["git", "-C", here, "describe", "--always", "--dirty"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    out, name, rest = args[0], args[1], args[2:]
    result = {"benchmark": name, "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    load_at_start = None
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg in ("--samples", "--load-at-start"):
            if i + 1 == len(rest):
                print(f"record.py: {arg} needs a value", file=sys.stderr)
                return 2
            value = rest[i + 1]
            i += 2
            if arg == "--load-at-start":
                load_at_start = float(value)
                continue
            key, _, path = value.partition("=")
            with open(path) as f:
                result[key] = [float(line) for line in f if line.strip()]
            continue
        key, sep, value = arg.partition("=")
        if not sep:
            print(f"record.py: expected KEY=VALUE, got {arg!r}", file=sys.stderr)
            return 2
        result[key] = number_or_string(value.strip())
        i += 1
    result["machine"] = machine()
    result.setdefault("commit", commit())
    result["load_average"] = {"at_start": load_at_start, "at_end": os.getloadavg()[0]}
    with open(out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
