#!/usr/bin/env bash
# Checks that the C++ sources are formatted as .clang-format says (clang-format 14, Debian 12's
# clang-format package; tests/install-deps.sh); tests/run.sh runs it as a stage of its own.
#
# Usage: tests/check-format.sh [--fix] [FILE...]
#   Without FILEs: every *.cpp, *.hpp and *.h of the work tree (tracked, or new and not ignored).
#   Prints each file that is not formatted with the number of its lines clang-format would change
#   and the first lines of the diff, then the totals.
#   --fix  format the files in place instead (the whole tree without FILEs: the one-time reformat)
# Exit status: 0 formatted (or fixed), 1 files not formatted, 2 bad usage or clang-format missing.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
fix=0
files=()
for arg in "$@"; do
  case $arg in
    --fix) fix=1 ;;
    -h | --help) sed -n '5,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check-format: unknown flag $arg (try --help)" >&2; exit 2 ;;
    *) files+=("$arg") ;;
  esac
done
command -v clang-format >/dev/null ||
  { echo "check-format: clang-format is not installed (tests/install-deps.sh)" >&2; exit 2; }
# Other major versions format some constructs differently: the check is only meaningful with 14.
version=$(clang-format --version | grep -Eo 'version [0-9]+' | grep -Eo '[0-9]+' || true)
[[ $version == 14 ]] || echo "check-format: warning: clang-format $version, .clang-format is tuned for 14" >&2

if ((${#files[@]} == 0)); then
  while IFS= read -r -d '' file; do
    [[ -f $file ]] && files+=("$file")
  done < <(git ls-files -z --cached --others --exclude-standard -- '*.cpp' '*.hpp' '*.h')
fi
jobs=$(nproc 2>/dev/null || echo 2)

if ((fix)); then
  printf '%s\0' "${files[@]}" | xargs -0 -n 8 -P "$jobs" clang-format -i --style=file
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi

# One line per unformatted file: "<changed lines> <file>"; its diff in $work/<n>.diff.
work=$(mktemp -d "${TMPDIR:-/tmp}/check-format.XXXXXX")
trap 'rm -rf "$work"' EXIT
export work
# shellcheck disable=SC2016  # expanded by the inner bash, once per file
printf '%s\0' "${files[@]}" | xargs -0 -n 1 -P "$jobs" bash -c '
  file=$1 out=$work/$(printf %s "$1" | tr / _).diff
  clang-format --style=file "$file" | diff -U0 --label "$file" --label "$file (formatted)" "$file" - >"$out" && exit 0
  echo "$(grep -c "^-[^-]" "$out") $file" >>"$work/list"
' check-format
if [[ ! -s $work/list ]]; then
  echo "check-format: ${#files[@]} files, all formatted"
  exit 0
fi
lines=0
while read -r changed file; do
  lines=$((lines + changed))
  echo "not formatted: $file ($changed lines to change)"
  head -n 12 "$work/$(printf %s "$file" | tr / _).diff" | sed 's/^/    /'
done < <(sort -k2 "$work/list")
echo "check-format: $(wc -l <"$work/list") of ${#files[@]} files not formatted, $lines lines to change;" \
  "format them with: tests/check-format.sh --fix [FILE...]" >&2
exit 1
