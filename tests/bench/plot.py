#!/usr/bin/env python3
"""The plots and figure tables of docs/benchmarks.md, made from the benchmarks' results files.

  tests/bench/plot.py [--results DIR] [--docs FILE]
      renders every plot (PNG, beside FILE in benchmarks/) and rewrites the tables between the
      "<!-- figures:NAME -->" markers of FILE, all from the JSON results in DIR;
  tests/bench/plot.py --check [--results DIR] [--docs FILE]
      exits 1 when a table in FILE differs from what the results give, or a plot is missing
      (standard library only: tests/run.sh runs it, so a figure cannot drift from its results).

Defaults: DIR tests/bench/results, FILE docs/benchmarks.md. The results come from
tests/bench/scale.sh (scale-<statefulsets>.json, and scale-realistic-<statefulsets>.json for
SCALE_POPULATION=realistic: tests/bench/controller/controller_bench.sh; reloader-scale-*.json for
Reloader on the same populations, SCALE_TOOLS="restarter reloader") and
tests/bench/webhook.sh with BENCH_RESULTS_DIR (webhook-e2e-<kind>.json), written by
tests/bench/record.py. The scale plot also draws, dashed, an earlier run of scale.sh kept in
DIR/earlier/ (its results name the commit they were measured at). matplotlib comes from PyPI, pinned in plot-requirements.txt, into a virtual
environment this script creates once under ${XDG_CACHE_HOME:-~/.cache}/restarter/bench/ (the
machine's Python is not touched).
"""
import argparse
import glob
import hashlib
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
REQUIREMENTS = os.path.join(HERE, "plot-requirements.txt")
PLOTS = ("scale.png", "beside-reloader.png", "propagation-cdf.png", "webhook-cdf.png")
# The goals the plots draw: the controller's steady RSS and update-to-annotation p99 at 210,000
# cached objects, its steady RSS at a million (every object referenced, and 5 % referenced), the
# webhook's p99 admission latency (docs/benchmarks.md says why each).
GOAL_SCALE_RSS_MB = 200
GOAL_REALISTIC_RSS_MB = 128
GOAL_MILLION_RSS_MB = 256
GOAL_SCALE_P99_MS = 100
GOAL_WEBHOOK_P99_MS = 10


def rank(values, q):
    """Nearest-rank quantile (the value at rank ceil(q*n)), as tests/bench/spans.py."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


class Scale:
    """scale.sh's results: every object referenced (scale-<n>.json) and the realistic population
    (scale-realistic-<n>.json, SCALE_POPULATION=realistic), each also as measured earlier, and
    Reloader's on both populations (reloader-scale-*.json; a run it did not finish has "failed")."""

    def __init__(self, every, realistic, earlier, earlier_realistic, reloader=(), reloader_realistic=()):
        self.every, self.realistic = every, realistic
        self.earlier, self.earlier_realistic = earlier, earlier_realistic
        self.reloader, self.reloader_realistic = list(reloader), list(reloader_realistic)


def load(results):
    def read(pattern):
        found = []
        for path in sorted(glob.glob(os.path.join(results, pattern))):
            with open(path) as f:
                found.append(json.load(f))
        return found

    def by_size(pattern):
        return sorted(read(pattern), key=lambda r: r["cached_objects"])

    scale = Scale(every=by_size("scale-[0-9]*.json"), realistic=by_size("scale-realistic-*.json"),
                  earlier=by_size(os.path.join("earlier", "scale-[0-9]*.json")),
                  earlier_realistic=by_size(os.path.join("earlier", "scale-realistic-*.json")),
                  reloader=by_size("reloader-scale-[0-9]*.json"),
                  reloader_realistic=by_size("reloader-scale-realistic-*.json"))
    webhook = sorted(read("webhook-e2e-*.json"), key=lambda r: r["kind"])
    return scale, webhook


def machine_line(results):
    """What every plot says it was measured on: the machine and the load average range."""
    machines = {json.dumps(r["machine"], sort_keys=True) for r in results}
    m = results[0]["machine"]
    loads = [v for r in results for v in r["load_average"].values() if v is not None]
    text = f"{m['cores']} cores, {m['memory_gib']} GiB, {m['os']}"
    if len(machines) > 1:
        text += " (and others: see the results files)"
    if loads:
        text += f"; load average {min(loads):.1f}-{max(loads):.1f}"
    return text


def scale_table(scale):
    lines = [
        "| cached objects | StatefulSets | ConfigMaps + Secrets | start to caches synced | steady RSS | peak RSS "
        "| update to annotation p50 | p99 | max | updates | load average |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in scale:
        latency = r["latency_ms"]
        load = r["load_average"]
        lines.append(
            f"| {r['cached_objects']:,} | {r['statefulsets']:,} | {r['configmaps']:,} + {r['secrets']:,} "
            f"| {r['caches_synced_ms'] / 1000:.1f} s | {r['steady_rss_kb'] / 1000:.1f} MB "
            f"| {r['peak_rss_kb'] / 1000:.1f} MB | {rank(latency, 0.5):.1f} ms | {rank(latency, 0.99):.1f} ms "
            f"| {max(latency):.1f} ms | {len(latency)} | {load['at_start']:.1f}-{load['at_end']:.1f} |")
    return "\n".join(lines)


def realistic_table(scale):
    """The realistic population, the earlier code's rows first (their commit says which)."""
    lines = [
        "| code | cached objects | referenced | StatefulSets | start to caches synced | steady RSS | peak RSS "
        "| update to annotation p50 | p99 | max | updates | load average |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in scale.earlier_realistic + scale.realistic:
        latency = r["latency_ms"]
        load = r["load_average"]
        lines.append(
            f"| {r.get('commit', '?')} | {r['cached_objects']:,} | {r['referenced_objects']:,} | {r['statefulsets']:,} "
            f"| {r['caches_synced_ms'] / 1000:.1f} s | {r['steady_rss_kb'] / 1000:.1f} MB "
            f"| {r['peak_rss_kb'] / 1000:.1f} MB | {rank(latency, 0.5):.1f} ms | {rank(latency, 0.99):.1f} ms "
            f"| {max(latency):.1f} ms | {len(latency)} | {load['at_start']:.1f}-{load['at_end']:.1f} |")
    return "\n".join(lines)


def beside_reloader_table(scale):
    """Both tools on each population and size, restarter's row first; a Reloader run that did not
    finish shows how far it got."""
    lines = [
        "| population | cached objects | tool | start to synced | steady RSS | peak RSS | update to template p50 "
        "| p99 | apiserver requests per change | CPU per change | load average |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    rows = []
    for population, ours, theirs in (("every object referenced", scale.every, scale.reloader),
                                     ("5 % referenced", scale.realistic, scale.reloader_realistic)):
        sizes = {r["cached_objects"]: r for r in ours}
        for other in theirs:
            mine = sizes.get(other["cached_objects"])
            rows += [(population, mine), (population, other)] if mine else [(population, other)]
    for population, r in rows:
        load = r["load_average"]
        loads = f"{load['at_start']:.1f}-{load['at_end']:.1f}"
        tool = "restarter" if r.get("tool", "restarter") == "restarter" else "Reloader"
        if "failed" in r:
            lines.append(
                f"| {population} | {r['cached_objects']:,} | {tool} | {r['failed']} after {r['seconds_until_failure']} s "
                f"| - | {r['peak_rss_kb'] / 1000:.1f} MB (cgroup) | - | - | - | - | {loads} |")
            continue
        latency = r["latency_ms"]
        per_change = r.get("requests_per_change")
        cpu = r.get("cpu_ms_per_change")
        lines.append(
            f"| {population} | {r['cached_objects']:,} | {tool} | {r['caches_synced_ms'] / 1000:.1f} s "
            f"| {r['steady_rss_kb'] / 1000:,.1f} MB | {r['peak_rss_kb'] / 1000:,.1f} MB | {rank(latency, 0.5):,.1f} ms "
            f"| {rank(latency, 0.99):,.1f} ms | {'-' if per_change is None else f'{per_change:.2f}'} "
            f"| {'-' if cpu is None else f'{cpu:.1f} ms'} | {loads} |")
    return "\n".join(lines)


WEBHOOK_KINDS = {
    "refs": "a ConfigMap and a Secret looked up",
    "norefs": "no reference (no lookup)",
}


def hostile_connections(result):
    """What webhook.sh held against the webhook during the run (results before the health port was
    attacked too have no hostile_health_slow)."""
    held = f"{result['hostile_idle']} idle + {result['hostile_slow']} slow-header"
    health = result.get("hostile_health_slow", 0)
    return held + (f", {health} slow-header to /healthz" if health else "")


def webhook_table(webhook):
    lines = [
        "| StatefulSet | admissions | p50 | p90 | p99 | max | hostile connections held | load average |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for r in webhook:
        s = r["admission_ms"]
        load = r["load_average"]
        lines.append(
            f"| {WEBHOOK_KINDS.get(r['kind'], r['kind'])} | {len(s)} | {rank(s, 0.5):.2f} ms "
            f"| {rank(s, 0.9):.2f} ms | {rank(s, 0.99):.2f} ms | {max(s):.2f} ms "
            f"| {hostile_connections(r)} "
            f"| {load['at_start']:.1f}-{load['at_end']:.1f} |")
    return "\n".join(lines)


def tables(scale, webhook):
    return {"scale": scale_table(scale.every), "scale-realistic": realistic_table(scale),
            "beside-reloader": beside_reloader_table(scale), "webhook": webhook_table(webhook)}


def replace_tables(text, wanted):
    """text with each <!-- figures:NAME --> ... <!-- /figures:NAME --> block set to wanted[NAME]."""
    for name, table in wanted.items():
        begin, end = f"<!-- figures:{name} -->", f"<!-- /figures:{name} -->"
        start, stop = text.find(begin), text.find(end)
        if start < 0 or stop < start:
            raise SystemExit(f"plot.py: the docs have no {begin} ... {end} block")
        text = text[:start + len(begin)] + "\n" + table + "\n" + text[stop:]
    return text


def check(docs, scale, webhook):
    with open(docs) as f:
        text = f.read()
    problems = []
    if text != replace_tables(text, tables(scale, webhook)):
        problems.append(f"{docs}: a figures table differs from the results: run tests/bench/plot.py")
    for plot in PLOTS:
        if not os.path.exists(os.path.join(os.path.dirname(docs), "benchmarks", plot)):
            problems.append(f"missing plot benchmarks/{plot}: run tests/bench/plot.py")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


def ensure_matplotlib():
    """Re-executes this script in the pinned virtual environment unless matplotlib is importable."""
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    with open(REQUIREMENTS, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:10]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    venv = os.path.join(cache, "restarter", "bench", f"plot-venv-{digest}")
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(os.path.join(venv, "ready")):
        print(f"plot.py: creating {venv} (matplotlib from PyPI)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", "--clear", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        "--only-binary=:all:", "-r", REQUIREMENTS], check=True)
        open(os.path.join(venv, "ready"), "w").close()
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


def save(figure, path):
    # No creation time or version in the PNG, so that unchanged results give identical plots.
    figure.savefig(path, dpi=110, metadata={"Software": None})


def cdf(axes, samples, label):
    ordered = sorted(samples)
    n = len(ordered)
    axes.step(ordered, [(i + 1) / n for i in range(n)], where="post", label=f"{label} (n={n})")


def size_ticks(axes, values):
    """Ticks at the measured sizes on a log axis, one label where two sizes almost meet (1,010,000
    and 1,050,000 objects)."""
    kept = []
    for v in sorted(set(values)):
        if kept and v < kept[-1] * 1.1:
            kept[-1] = v
        else:
            kept.append(v)
    axes.set_xticks(kept, [f"{v / 1e6:.2f}M" if v >= 1_000_000 else f"{v // 1000}k" for v in kept])


def plot_scale(plt, everything, path):
    scale, earlier = everything.every, everything.earlier
    realistic, earlier_realistic = everything.realistic, everything.earlier_realistic
    x = [r["cached_objects"] for r in scale]
    figure, (rss, synced, latency) = plt.subplots(1, 3, figsize=(13, 4.2))
    if earlier:
        ex = [r["cached_objects"] for r in earlier]
        was = f"at {earlier[0].get('commit', 'an earlier commit')}"
        rss.plot(ex, [r["steady_rss_kb"] / 1000 for r in earlier], "o:", color="grey", label=f"steady RSS {was}")
        synced.plot(ex, [r["caches_synced_ms"] / 1000 for r in earlier], "o:", color="grey", label=was)
        latency.plot(ex, [rank(r["latency_ms"], 0.99) for r in earlier], "s:", color="grey", label=f"p99 {was}")
    rss.plot(x, [r["steady_rss_kb"] / 1000 for r in scale], "o-", label="steady RSS")
    rss.plot(x, [r["peak_rss_kb"] / 1000 for r in scale], "s--", label="peak RSS")
    rss.axhline(GOAL_SCALE_RSS_MB, color="red", linestyle=":", label=f"goal {GOAL_SCALE_RSS_MB} MB at 210k")
    million = [r["cached_objects"] for r in scale if r["cached_objects"] >= 1_000_000]
    if million:
        rss.plot(million, [GOAL_MILLION_RSS_MB] * len(million), "_", color="red", markersize=24, markeredgewidth=2,
                 label=f"goal {GOAL_MILLION_RSS_MB} MB at a million")
    # The realistic population (5 % referenced), now and with the earlier code, in green.
    for runs, style, label in ((earlier_realistic, "D:", "earlier code"), (realistic, "D-", "now")):
        if not runs:
            continue
        rx = [r["cached_objects"] for r in runs]
        color = "grey" if runs is earlier_realistic else "tab:green"
        rss.plot(rx, [r["steady_rss_kb"] / 1000 for r in runs], style, color=color,
                 label=f"steady RSS, 5 % referenced, {label}")
        synced.plot(rx, [r["caches_synced_ms"] / 1000 for r in runs], style, color=color,
                    label=f"5 % referenced, {label}")
        latency.plot(rx, [rank(r["latency_ms"], 0.99) for r in runs], style, color=color,
                     label=f"p99, 5 % referenced, {label}")
    if realistic:
        rss.axhline(GOAL_REALISTIC_RSS_MB, color="tab:green", linestyle=":",
                    label=f"goal {GOAL_REALISTIC_RSS_MB} MB, 5 % referenced")
    rss.set_ylabel("MB")
    rss.set_title("controller memory")
    synced.plot(x, [r["caches_synced_ms"] / 1000 for r in scale], "o-", label="now")
    synced.set_ylabel("s")
    synced.set_title("start to caches synced")
    latency.plot(x, [rank(r["latency_ms"], 0.5) for r in scale], "o-", label="p50")
    latency.plot(x, [rank(r["latency_ms"], 0.99) for r in scale], "s-", label="p99")
    latency.axhline(GOAL_SCALE_P99_MS, color="red", linestyle=":", label=f"goal p99 {GOAL_SCALE_P99_MS} ms")
    latency.set_ylabel("ms")
    latency.set_title("ConfigMap update to template annotation")
    for axes in (rss, synced, latency):
        axes.set_xlabel("cached objects (StatefulSets + ConfigMaps + Secrets)")
        ticks = sorted(set(x + [r["cached_objects"] for r in realistic + earlier_realistic]))
        if ticks[-1] > 10 * ticks[0]:  # from 21k to a million: equal steps for each factor
            axes.set_xscale("log")
            axes.minorticks_off()
        size_ticks(axes, ticks)
        axes.set_ylim(bottom=0)
        axes.grid(alpha=0.3)
    rss.legend(fontsize=8)
    synced.legend(fontsize=8)
    latency.legend(fontsize=8)
    figure.suptitle("serve-controller scale curve (tests/bench/scale.sh, --debounce 0)\n"
                    + machine_line(scale + realistic), fontsize=10)
    figure.tight_layout()
    save(figure, path)


def plot_beside_reloader(plt, everything, path):
    """Memory and p99 of both tools against the cached objects, log-log; a Reloader run that did
    not finish is drawn as an x at the memory it reached."""
    figure, (rss, latency) = plt.subplots(1, 2, figsize=(11, 4.2))
    series = (("restarter", everything.every, "o-", "tab:blue"),
              ("Reloader", everything.reloader, "o-", "tab:red"),
              ("restarter, 5 % referenced", everything.realistic, "D--", "tab:blue"),
              ("Reloader, 5 % referenced", everything.reloader_realistic, "D--", "tab:red"))
    shown = []
    for label, runs, style, color in series:
        done = [r for r in runs if "failed" not in r]
        failed = [r for r in runs if "failed" in r]
        shown += runs
        if done:
            x = [r["cached_objects"] for r in done]
            rss.plot(x, [r["steady_rss_kb"] / 1000 for r in done], style, color=color, label=label)
            latency.plot(x, [rank(r["latency_ms"], 0.99) for r in done], style, color=color, label=label)
        if failed:
            rss.plot([r["cached_objects"] for r in failed], [r["peak_rss_kb"] / 1000 for r in failed], "x",
                     color=color, markersize=10, label=f"{label}: {failed[0]['failed']}")
    rss.set_ylabel("steady RSS, MB")
    rss.set_title("memory")
    latency.set_ylabel("ms")
    latency.set_title("ConfigMap update to template change, p99")
    ticks = sorted({r["cached_objects"] for r in shown})
    for axes in (rss, latency):
        axes.set_xlabel("cached objects (StatefulSets + ConfigMaps + Secrets)")
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.minorticks_off()
        if ticks:
            size_ticks(axes, ticks)
        axes.grid(alpha=0.3)
        axes.legend(fontsize=8)
    figure.suptitle("serve-controller beside Reloader (its default flags) on the same populations "
                    "(tests/bench/scale.sh, SCALE_TOOLS)\n" + machine_line(shown or everything.every), fontsize=10)
    figure.tight_layout()
    save(figure, path)


def plot_propagation(plt, everything, path):
    scale = everything.every + everything.realistic
    figure, axes = plt.subplots(figsize=(7, 4.2))
    for r in scale:
        share = f", {r['referenced_objects'] * 100 // r['cached_objects']} % referenced" if "referenced_objects" in r else ""
        cdf(axes, r["latency_ms"], f"{r['cached_objects'] // 1000}k objects{share}")
    axes.axvline(GOAL_SCALE_P99_MS, color="red", linestyle=":", label=f"{GOAL_SCALE_P99_MS} ms")
    axes.set_xlabel("ConfigMap update to new template annotation (ms)")
    axes.set_ylabel("fraction of updates")
    axes.set_xlim(left=0)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="lower right")
    axes.set_title("propagation latency, --debounce 0, updates at 5/s\n" + machine_line(scale), fontsize=10)
    figure.tight_layout()
    save(figure, path)


def plot_webhook(plt, webhook, path):
    figure, axes = plt.subplots(figsize=(7, 4.2))
    for r in webhook:
        cdf(axes, r["admission_ms"], WEBHOOK_KINDS.get(r["kind"], r["kind"]))
    axes.axvline(GOAL_WEBHOOK_P99_MS, color="red", linestyle=":", label=f"{GOAL_WEBHOOK_P99_MS} ms")
    axes.set_xlabel("the apiserver's \"Call mutating webhook\" span (ms)")
    axes.set_ylabel("fraction of admissions")
    axes.set_xlim(left=0)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="lower right")
    hostile = webhook[0]
    axes.set_title(f"webhook admission latency end to end, {hostile['rate_per_second']} creates/s\n"
                   f"held meanwhile: {hostile_connections(hostile)}\n"
                   + machine_line(webhook), fontsize=10)
    figure.tight_layout()
    save(figure, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=os.path.join(HERE, "results"))
    parser.add_argument("--docs", default=os.path.join(REPO, "docs", "benchmarks.md"))
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    scale, webhook = load(args.results)
    if not scale.every or not webhook:
        print(f"plot.py: {args.results} needs scale-*.json and webhook-e2e-*.json", file=sys.stderr)
        return 1
    if args.check:
        return check(args.docs, scale, webhook)
    ensure_matplotlib()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out = os.path.join(os.path.dirname(args.docs), "benchmarks")
    os.makedirs(out, exist_ok=True)
    plot_scale(plt, scale, os.path.join(out, "scale.png"))
    plot_beside_reloader(plt, scale, os.path.join(out, "beside-reloader.png"))
    plot_propagation(plt, scale, os.path.join(out, "propagation-cdf.png"))
    plot_webhook(plt, webhook, os.path.join(out, "webhook-cdf.png"))
    with open(args.docs) as f:
        text = f.read()
    with open(args.docs, "w") as f:
        f.write(replace_tables(text, tables(scale, webhook)))
    print(f"plot.py: {', '.join(PLOTS)} in {out}; tables in {args.docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
