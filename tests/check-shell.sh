#!/usr/bin/env bash
# Runs shellcheck (Debian's package, tests/install-deps.sh) over every shell script of the repository;
# tests/run.sh runs it as a stage of its own. Checked:
#   - every file of the work tree (tracked, or new and not ignored) named *.sh or whose first line is
#     a sh or bash shebang (.ci/run has no extension), following the files they source (-x);
#   - the inline scripts of the kuttl TestSteps (`script:` in kuttl/tests/*/*.yaml and
#     kuttl/node-tests/*/*.yaml, kuttl/netpol-tests/*/*.yaml, kuttl/release-tests/*/*.yaml), which kuttl
#     runs with `sh -c`: checked as POSIX sh, reported as YAML-FILE (script N) at the YAML's own
#     line numbers;
#   - one rule of our own in the bash scripts: no `cmd | grep -q` (it fails at random under
#     pipefail, below).
# Every finding fails, of any severity. A finding that is right as it stands is disabled on its line
# with its reason: `# shellcheck disable=SCxxxx  # why` (in a YAML script too).
# Usage: tests/check-shell.sh. Exit status: 0 no findings, 1 findings, 2 shellcheck or PyYAML missing.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
command -v shellcheck >/dev/null || { echo "check-shell: shellcheck is not installed (tests/install-deps.sh)" >&2; exit 2; }

scripts=()
while IFS= read -r -d '' file; do
  [[ -f $file ]] || continue  # deleted but not yet committed
  if [[ $file == *.sh ]] || [[ $(head -n 1 "$file") =~ ^#!\ *(/usr)?/bin/(env\ +)?(ba)?sh(\ |$) ]]; then
    scripts+=("$file")
  fi
done < <(git ls-files -z --cached --others --exclude-standard)

# The kuttl scripts, one file each under $work mirroring the YAML's path; blank lines in front put
# each script's lines at the YAML's line numbers.
work=$(mktemp -d "${TMPDIR:-/tmp}/check-shell.XXXXXX")
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 - "$work" kuttl/tests/*/*.yaml kuttl/node-tests/*/*.yaml kuttl/netpol-tests/*/*.yaml kuttl/release-tests/*/*.yaml <<'PY' || exit 2
import os, sys
try:
    import yaml
except ImportError:
    sys.exit("check-shell: PyYAML is missing (Debian python3-yaml, tests/install-deps.sh)")
work = sys.argv[1]
for path in sys.argv[2:]:
    n = 0
    with open(path) as f:
        for doc in yaml.compose_all(f):
            if not isinstance(doc, yaml.MappingNode):
                continue
            for key, value in doc.value:
                if key.value != "commands" or not isinstance(value, yaml.SequenceNode):
                    continue
                for command in value.value:
                    if not isinstance(command, yaml.MappingNode):
                        continue
                    for k, v in command.value:
                        if k.value != "script" or not isinstance(v, yaml.ScalarNode):
                            continue
                        n += 1
                        # A block scalar (|) starts on the line after its indicator.
                        first = v.start_mark.line + (1 if v.style in ("|", ">") else 0)
                        out = os.path.join(work, path, f"{n}.sh")
                        os.makedirs(os.path.dirname(out), exist_ok=True)
                        with open(out, "w") as o:
                            o.write("\n" * first + v.value)
PY
mapfile -d '' kuttl_scripts < <(find "$work" -name '*.sh' -print0 | sort -z)

rc=0
shellcheck -x "${scripts[@]}" || rc=1
if ((${#kuttl_scripts[@]})); then
  shellcheck --shell=sh "${kuttl_scripts[@]}" | sed -E "s|$work/(.*)/([0-9]+)\.sh|\1 (script \2)|" || rc=1
fi

# One rule shellcheck lacks. In a bash script (all of ours run with pipefail, or are sourced by one
# that does) `cmd | grep -q` fails at random: grep exits at its first match, cmd's next write dies of
# SIGPIPE, and pipefail makes the whole pipe false although the line was found. Grep a captured
# output instead: `grep -q PATTERN <<<"$(cmd)"`.
bash_scripts=()
for file in "${scripts[@]}"; do
  first=$(head -n 1 "$file")
  [[ $first == *bash* ]] && bash_scripts+=("$file")
done
quiet_grep='^[^#]*\|[[:space:]]*grep([[:space:]]+-[A-Za-z]+)*[[:space:]]+(-[A-Za-z]*q|--quiet)'
if ((${#bash_scripts[@]})) && grep -nE "$quiet_grep" "${bash_scripts[@]}"; then
  echo "check-shell: a quiet grep ending a pipe (above) fails under pipefail when its early exit SIGPIPEs the command before it; grep a captured output: grep -q PATTERN <<<\"\$(cmd)\"" >&2
  rc=1
fi
if ((rc)); then
  echo "check-shell: findings above; fix each, or disable it on its line with the reason" >&2
else
  echo "check-shell: ${#scripts[@]} scripts and ${#kuttl_scripts[@]} kuttl step scripts, no findings"
fi
exit "$rc"
