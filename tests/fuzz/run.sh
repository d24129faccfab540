#!/usr/bin/env bash
# Runs every fuzz target of a build for a fixed number of inputs from its checked-in seed corpus
# (tests/fuzz/corpus/<target>/), with a fixed seed and no time-dependent scheduling (see below),
# one after another. Any crash, sanitizer
# report, failed check or timeout fails the run; the input that caused it is kept as
# <build>/tests/fuzz/artifacts/<target>-crash-<sha1> and its reproduction command is printed.
#
#   tests/fuzz/run.sh BUILD_DIR [RUNS] [EXTRA LIBFUZZER FLAGS...]
#
# New inputs the fuzzer finds go to a scratch corpus under the build directory, never into the
# checked-in seeds. tests/run.sh calls this; tests/fuzz/README.md shows longer local runs.
set -uo pipefail

build=${1:?usage: tests/fuzz/run.sh BUILD_DIR [RUNS] [LIBFUZZER FLAGS...]}
runs=${2:-30000}
shift $(( $# >= 2 ? 2 : 1 ))
here=$(cd "$(dirname "$0")" && pwd)
bin="$build/tests/fuzz"
artifacts="$bin/artifacts"
mkdir -p "$artifacts"

failed=0
for seeds in "$here"/corpus/*/; do
  target=$(basename "$seeds")
  exe="$bin/fuzz_$target"
  if [ ! -x "$exe" ]; then
    echo "fuzz: $target: $exe is missing (build the fuzz_targets target)" >&2
    failed=1
    continue
  fi
  scratch="$bin/scratch/$target"
  rm -rf "$scratch" && mkdir -p "$scratch"
  start=$SECONDS
  # -max_len: bigger than every seed (an AdmissionReview seed is ~3 KB); -timeout: one input
  # taking 10 s is a hang, not a slow machine; -rss_limit_mb: a leak or a blow-up fails.
  # -entropic=0 -reload=0: libFuzzer's entropic schedule and its corpus reload (every second)
  # depend on time, so with -seed alone two runs explored different inputs. Without them
  # admission_review runs the same inputs every time; the kube targets still vary a little
  # (measured: final edges within 1-3 %, e.g. kubeconfig 1003/1011) because libstdc++'s
  # shared_ptr takes its atomic or its plain path depending on whether another thread exists yet,
  # and libFuzzer starts its helper threads at no fixed moment (-print_coverage shows only
  # ~__shared_count differing). The number of runs and the checks are fixed.
  # Later flags on the command line override these.
  if "$exe" "$scratch" "$seeds" -runs="$runs" -seed=1 -entropic=0 -reload=0 \
       -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$artifacts/$target-" -print_final_stats=1 "$@" >"$bin/$target.log" 2>&1; then
    # Coverage (edges) after the seeds and at the end: a target whose coverage never grows from
    # its seeds is not exploring.
    echo "fuzz: $target: $runs runs passed in $((SECONDS - start)) s;" \
         "edges: seeds $(grep -m1 'INITED' "$bin/$target.log" | grep -o 'cov: [0-9]*' | cut -d' ' -f2)," \
         "end $(grep -o 'cov: [0-9]*' "$bin/$target.log" | tail -1 | cut -d' ' -f2)"
  else
    failed=1
    echo "fuzz: $target: FAILED after $((SECONDS - start)) s; the end of $bin/$target.log:" >&2
    tail -40 "$bin/$target.log" >&2
    for crash in "$artifacts/$target"-*; do
      [ -e "$crash" ] && echo "fuzz: reproduce with: $exe $crash" >&2
    done
  fi
done
exit $failed
