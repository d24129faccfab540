# shellcheck shell=bash
# The life cycle of a background process, for every script that starts one: the local control
# plane (tests/cluster/lib/netns.sh), the kuttl suites' servers (kuttl/lib/controller.sh,
# kuttl/lib/webhook.sh) and the demo (cmd/demo.sh). Sourced, never executed; bash only.
#
# A started process is recorded in a PID file as "<pid> <start time>", the start time in clock
# ticks since boot (field 22 of /proc/PID/stat). Every later look at it compares the start time,
# so a PID the kernel has since given to another process (pid_max may be 32768) is never taken for
# ours and never signalled.
#
#   proc_record PID FILE               record PID (just started) in FILE
#   proc_pid FILE                      print the recorded PID (fails when FILE is missing)
#   proc_alive FILE                    true while the recorded process runs (not a zombie)
#   proc_signal FILE SIGNAL            send SIGNAL if the recorded process runs; true if it was sent
#   proc_stop GRACE FILE...            SIGTERM (and SIGCONT, for a stopped one) to each recorded
#                                      process, SIGKILL to those still running after GRACE seconds,
#                                      a warning for any that survives SIGKILL for 5 s more. The
#                                      FILEs stay (the caller removes them). Status 0 when all
#                                      exited after SIGTERM, 1 when one needed SIGKILL.
#   proc_wait_until SECONDS FILE CMD...  run CMD every 0.2 s until it succeeds: status 0; 1 as soon
#                                      as the recorded process has exited (FILE "" for none); 2
#                                      after SECONDS.
# Settings, as variables the caller may set after sourcing:
#   proc_kill=(kill)                   the command that signals (e.g. (sudo kill) for root's processes)
#   proc_log=(proc_log_stderr)         the command that logs the SIGKILL messages (one argument)

proc_kill=(kill)
proc_log=(proc_log_stderr)
proc_log_stderr() { printf '%s\n' "$1" >&2; }

# Start time of a live process; nothing when there is no such process or it is a zombie (dead, but
# not yet reaped by its parent).
proc_start_time() {
  local stat fields
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
  stat=${stat##*) }                     # drop "pid (comm) ", comm may contain spaces
  read -ra fields <<<"$stat"
  [[ ${fields[0]} == Z ]] && return 0   # field 3: state
  echo "${fields[19]}"                  # field 22 overall is the 20th after comm
}

proc_record() {
  local start
  start=$(proc_start_time "$1")
  # Gone already: a start time no process has, so that it is never alive.
  echo "$1 ${start:-exited}" >"$2"
}

proc_pid() {
  local pid start
  [[ -f $1 ]] || return 1
  read -r pid start <"$1"
  echo "$pid"
}

proc_alive() {
  local pid start
  [[ -f $1 ]] || return 1
  read -r pid start <"$1" || true
  [[ -n $pid && -n $start && $(proc_start_time "$pid") == "$start" ]]
}

proc_signal() {
  proc_alive "$1" || return 1
  "${proc_kill[@]}" -"$2" "$(proc_pid "$1")" 2>/dev/null
}

proc_stop() {
  local grace=$1 file pid start entry deadline killed=0
  shift
  local entries=() alive=()
  for file in "$@"; do
    if proc_alive "$file"; then
      read -r pid start <"$file"
      "${proc_kill[@]}" -TERM "$pid" 2>/dev/null || true
      "${proc_kill[@]}" -CONT "$pid" 2>/dev/null || true  # a stopped process handles TERM only now
      entries+=("$pid:$start:$file")
    fi
  done
  deadline=$((SECONDS + grace + 1))   # +1: SECONDS counts whole seconds
  while ((${#entries[@]})); do
    alive=()
    for entry in "${entries[@]}"; do
      IFS=: read -r pid start file <<<"$entry"
      [[ $(proc_start_time "$pid") == "$start" ]] && alive+=("$entry")
    done
    entries=("${alive[@]}")
    ((${#entries[@]})) || break
    if ((SECONDS >= deadline)); then
      for entry in "${entries[@]}"; do
        IFS=: read -r pid start file <<<"$entry"
        if ((killed)); then
          "${proc_log[@]}" "warning: $(basename "$file" .pid) (pid $pid) survived SIGKILL; leaving it"
        else
          "${proc_log[@]}" "$(basename "$file" .pid) (pid $pid) ignored SIGTERM for ${grace}s; sending SIGKILL"
          "${proc_kill[@]}" -KILL "$pid" 2>/dev/null || true
        fi
      done
      ((killed)) && break
      killed=1
      deadline=$((SECONDS + 5))
    fi
    sleep 0.2
  done
  ((killed == 0))
}

proc_wait_until() {
  local seconds=$1 file=$2 deadline
  shift 2
  deadline=$((SECONDS + seconds))
  until "$@"; do
    [[ -z $file ]] || proc_alive "$file" || return 1
    ((SECONDS < deadline)) || return 2
    sleep 0.2
  done
}
