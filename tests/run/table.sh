# shellcheck shell=bash
# The driver of tests/run.sh's stage table: checks the table, lists it (--list), runs its rows in
# order, times each stage and prints the table of stage times. Sourced by tests/run.sh, never
# executed.
#
# A row of the table is "WHEN HOW COMMAND... | NAME" (tests/run.sh says what each column means);
# COMMAND is split on blanks (no quoting, no expansion). The run's counts are STAGES_PASSED,
# STAGES_FAILED and FAILED_NAMES; CURRENT_STAGE names the stage that runs (for the kuttl digest).

STAGES_PASSED=0
STAGES_FAILED=0
FAILED_NAMES=()
CURRENT_STAGE=
RUN_START=$SECONDS
# One row per stage that ran, for the table of times: name, result, seconds.
TIMES_NAMES=()
TIMES_RESULTS=()
TIMES_SECONDS=()

# stage NAME CMD...: runs one stage, timing it and counting the result.
stage() {
  local name=$1; shift
  local start=$SECONDS result
  # shellcheck disable=SC2034  # read by the kuttl digest (tests/run/kuttl.sh)
  CURRENT_STAGE=$name
  echo "=== ${name}"
  if "$@"; then
    STAGES_PASSED=$((STAGES_PASSED + 1))
    result=passed
  else
    STAGES_FAILED=$((STAGES_FAILED + 1))
    FAILED_NAMES+=("$name")
    result=FAILED
  fi
  echo "=== ${name}: ${result} in $((SECONDS - start)) s"
  TIMES_NAMES+=("$name")
  TIMES_RESULTS+=("$result")
  TIMES_SECONDS+=("$((SECONDS - start))")
}

# The table of stage times; printed once, at the end or when the run is cut short; then what
# the failed kuttl tests said (tests/run/kuttl.sh).
TIMES_PRINTED=0
print_stage_times() {
  ((TIMES_PRINTED)) && return 0
  TIMES_PRINTED=1
  local i
  echo
  echo "stage times (wall clock; the control-plane start and the fuzz stage run in the background):"
  for i in "${!TIMES_NAMES[@]}"; do
    printf '  %6d s  %-7s %s\n' "${TIMES_SECONDS[$i]}" "${TIMES_RESULTS[$i]}" "${TIMES_NAMES[$i]}"
  done
  printf '  %6d s  total\n' "$((SECONDS - RUN_START))"
  print_failure_digest
}

# parse_row ROW: sets ROW_WHEN, ROW_HOW, ROW_COMMAND (an array) and ROW_NAME; status 1, with a
# message, when the row is malformed or its command is not a function or a command.
parse_row() {
  local rest
  read -r ROW_WHEN ROW_HOW rest <<<"$1"
  [[ $rest == *' | '* ]] || { echo "stage table: no ' | ' before the name in: $1" >&2; return 1; }
  read -r -a ROW_COMMAND <<<"${rest%% | *}"
  ROW_NAME=${rest#* | }
  case $ROW_WHEN in all | cluster | quick) ;; *) echo "stage table: WHEN must be all, cluster or quick in: $1" >&2; return 1 ;; esac
  case $ROW_HOW in stage | background) ;; *) echo "stage table: HOW must be stage or background in: $1" >&2; return 1 ;; esac
  if ((${#ROW_COMMAND[@]} == 0)) || [[ -z $ROW_NAME ]]; then
    echo "stage table: no command or no name in: $1" >&2
    return 1
  fi
  command -v "${ROW_COMMAND[0]}" >/dev/null \
    || { echo "stage table: ${ROW_COMMAND[0]} is not a function or a command, in: $1" >&2; return 1; }
}

# row_selected WITH_CLUSTER: true when the parsed row runs in a run with (1) or without (0) the
# control plane.
row_selected() {
  case $ROW_WHEN in
    all) return 0 ;;
    cluster) (($1 == 1)) ;;
    quick) (($1 == 0)) ;;
  esac
}

# check_stage_table ROW...: status 0 when every row parses (parse_row says what is wrong).
check_stage_table() {
  local row ok=0
  for row in "$@"; do parse_row "$row" || ok=1; done
  return "$ok"
}

# list_stages WITH_CLUSTER ROW...: the rows a run would run, one a line: HOW, COMMAND, NAME.
list_stages() {
  local with_cluster=$1 row; shift
  for row in "$@"; do
    if ! parse_row "$row" || ! row_selected "$with_cluster"; then continue; fi
    printf '%-10s %-42s %s\n' "$ROW_HOW" "${ROW_COMMAND[*]}" "$ROW_NAME"
  done
}

# run_stages WITH_CLUSTER ROW...: runs the selected rows in order: a stage as a stage (timed, a
# row of the table of times), a background row's command as it is (it starts its job and returns).
run_stages() {
  local with_cluster=$1 row; shift
  for row in "$@"; do
    if ! parse_row "$row" || ! row_selected "$with_cluster"; then continue; fi
    case $ROW_HOW in
      stage) stage "$ROW_NAME" "${ROW_COMMAND[@]}" ;;
      background) "${ROW_COMMAND[@]}" ;;
    esac
  done
}
