#!/usr/bin/env bash
# Where serve-controller's memory goes, by allocation site: runs it under heaptrack (Debian's
# package heaptrack; not installed by tests/install-deps.sh: only this profile needs it) over a
# population a benchmark left in place (scale.sh's namespace, say), waits for "caches synced" and
# IDLE seconds more, then kills it with SIGKILL, so that heaptrack's "leaked" memory is exactly what
# was live at that moment, and prints where it was allocated (summed by the innermost function of
# restarter's code on each allocation's stack) and heaptrack's totals.
# A measurement, not a test: it fails only when it cannot measure.
#
# Usage (the cluster must be up and hold the population):
#   tests/bench/heap_profile.sh NAMESPACE [IDLE] [FLAGS...]
# IDLE defaults to 30; FLAGS are added to serve-controller's (scale.sh's: --debounce 0
# --max-writes-per-second 1000 --write-burst 1000). RESTARTER_BIN (default build/ci's restarter;
# a RelWithDebInfo build names functions and lines), RESTARTER_CLUSTER and BENCH_WAIT_SECONDS
# (default 1800) as for the other benchmarks. The heaptrack file is kept (its path is printed):
# heaptrack_print or heaptrack_gui read it again.
set -euo pipefail
ns=${1:?usage: heap_profile.sh NAMESPACE [IDLE] [FLAGS...]}
idle=${2:-30}
shift $(($# < 2 ? $# : 2))
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh"
bench_init "" heaptrack heaptrack_print
out=$(mktemp -d /tmp/heap-profile.XXXXXX)
echo "== serve-controller under heaptrack over namespace $ns; load: $(load)"
bench_scale_controller "$ns" "$out/controller.log" 18082 18083 "heaptrack -o '$out/controller'" "$@"
started=$SECONDS
bench_wait_synced "$out/controller.log" "$pid"
echo "caches synced after $((SECONDS - started)) s under heaptrack"
sleep "$idle"
echo "RSS under heaptrack before the kill: $(awk '/VmRSS/ {print $2 " kB"}' "/proc/$pid/status")"
kill -KILL "$pid"
wait "$controller_wrapper" 2>/dev/null || true
file=$(find "$out" -name 'controller*.zst' -o -name 'controller*.gz' | head -1)
[[ -n $file ]] || { echo "heap_profile: heaptrack wrote no file in $out" >&2; exit 1; }
echo "== live at the kill, by the innermost function of restarter's code on each allocation's stack: $file"
heaptrack_print -f "$file" --flamegraph-cost-type leaked -F "$out/live.stacks" --print-leaks no --print-peaks no \
  --print-allocators no --print-temporary no >/dev/null 2>&1
python3 - "$out/live.stacks" <<'SUMMARY'
import collections, re, sys
total, owners = 0, collections.Counter()
for line in open(sys.argv[1]):
    stack, _, cost = line.rstrip("\n").rpartition(" ")
    if not cost.isdigit():
        continue
    total += int(cost)
    owner = "(outside restarter's code: libraries, the C++ runtime)"
    for frame in reversed(stack.split(";")):
        if "restarter::" in frame:
            owner = re.sub(r"<[^<>]*(<[^<>]*>[^<>]*)*>", "<...>", re.sub(r" \(.*?\)$", "", frame))
            owner = re.sub(r"\((?!\)).*$", "", owner.replace("operator()", "operator<call>"))
            break
    owners[owner] += int(cost)
print(f"live at the kill: {total / 1e6:.1f} MB of heap")
for owner, cost in owners.most_common(20):
    print(f"{cost / 1e6:9.1f} MB {100 * cost / max(total, 1):5.1f} %  {owner[:160]}")
SUMMARY
heaptrack_print -f "$file" --print-leaks no --print-peaks no --print-allocators no --print-temporary no 2>/dev/null |
  grep -E '^(total runtime|calls to allocation|peak heap memory|peak RSS|total memory leaked)' || true
