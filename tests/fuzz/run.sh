#!/usr/bin/env bash
# Runs every fuzz target of a build for a fixed number of inputs from its checked-in seed corpus
# (tests/fuzz/corpus/<target>/), with a fixed seed and no time-dependent scheduling (see below),
# one after another. Any crash, sanitizer
# report, failed check or timeout fails the run; the input that caused it is kept as
# <build>/tests/fuzz/artifacts/<target>-crash-<sha1> and its reproduction command is printed.
#
#   tests/fuzz/run.sh BUILD_DIR [RUNS] [EXTRA LIBFUZZER FLAGS...]
#
# Inputs too large to check in are written first by generate_seeds.py under
# <build>/tests/fuzz/generated/: seeds/<target>/ (reviews 20,000 levels deep) are fuzzed from after
# the checked-in seeds; inputs/<target>/ (100,000 levels, among them the review that crashed
# serve-webhook, and reviews at the 256 KiB annotations limit) are run once each after fuzzing.
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
generated="$bin/generated"
python3 "$here/generate_seeds.py" "$generated" || { echo "fuzz: cannot generate the large seeds" >&2; exit 1; }

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
  corpora=("$scratch" "$seeds")
  [ -d "$generated/seeds/$target" ] && corpora+=("$generated/seeds/$target")
  # -max_len: bigger than every seed, or libFuzzer cuts the seed short. admission_review gets
  # 64 KiB, room for its generated 20,000-level seeds (40 KB): a recursive copy of those
  # overflows the stack of this build if the depth limit is gone, and 16 KiB of input cannot nest
  # deep enough. Not more, and not for the kube targets: inputs grow towards the longest seed, and
  # the cost grows with them (measured, 40,000 runs: admission_review from the 262 KB reviews at
  # the annotations limit 155 s instead of 12 s; watch_stream from a 40 KB seed 15-47 s, from the
  # ~120 KB a dump needs to overflow 43-66 s, instead of 10-16 s). So the 100,000-level and the
  # 256 KiB inputs run once each below, and the kube targets keep 16 KiB with checked-in seeds
  # just over the depth limit. -timeout: one input taking 10 s is a hang, not a slow machine;
  # -rss_limit_mb: a leak or a blow-up fails.
  case $target in
    admission_review) max_len=65536 ;;
    *) max_len=16384 ;;
  esac
  start=$SECONDS
  # -entropic=0 -reload=0: libFuzzer's entropic schedule and its corpus reload (every second)
  # depend on time, so with -seed alone two runs explored different inputs. Without them
  # admission_review runs the same inputs every time; the kube targets still vary a little
  # (measured: final edges within 1-3 %, e.g. kubeconfig 1003/1011) because libstdc++'s
  # shared_ptr takes its atomic or its plain path depending on whether another thread exists yet,
  # and libFuzzer starts its helper threads at no fixed moment (-print_coverage shows only
  # ~__shared_count differing). The number of runs and the checks are fixed.
  # Later flags on the command line override these.
  if "$exe" "${corpora[@]}" -runs="$runs" -seed=1 -entropic=0 -reload=0 \
       -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
       -artifact_prefix="$artifacts/$target-" -print_final_stats=1 "$@" >"$bin/$target.log" 2>&1; then
    # Coverage (edges) after the seeds and at the end: a target whose coverage never grows from
    # its seeds is not exploring.
    echo "fuzz: $target: $runs runs passed in $((SECONDS - start)) s;" \
         "edges: seeds $(grep -m1 'INITED' "$bin/$target.log" | grep -o 'cov: [0-9]*' | cut -d' ' -f2)," \
         "end $(grep -o 'cov: [0-9]*' "$bin/$target.log" | tail -1 | cut -d' ' -f2)"
    # The large inputs, each run once with the same checks (files, not a directory: libFuzzer
    # runs them whole and does not fuzz).
    if [ -d "$generated/inputs/$target" ]; then
      inputs=("$generated/inputs/$target"/*)
      if "$exe" -timeout=10 -rss_limit_mb=2048 "${inputs[@]}" >"$bin/$target.inputs.log" 2>&1; then
        echo "fuzz: $target: ${#inputs[@]} large inputs passed"
      else
        failed=1
        echo "fuzz: $target: a large input FAILED; the end of $bin/$target.inputs.log:" >&2
        tail -40 "$bin/$target.inputs.log" >&2
        echo "fuzz: reproduce with: $exe <the input named above>" >&2
      fi
    fi
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
