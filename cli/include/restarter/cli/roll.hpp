#pragma once
// `restarter roll KIND/NAME` (also `kubectl restarter roll`): applies the change explain-restart
// shows as pending, once, through the controller's write (inspect/roll.hpp). For workloads in
// manual mode (restarter.stackable.tech/rollout: manual); `--now` also rolls one that another gate
// holds, `--dry-run` prints the plan and writes nothing.
//
// Exit codes (also in --help and the README): 0 rolled, nothing pending, or the dry run printed;
// 1 the API failed; 2 the command line is wrong; 3 the workload does not exist; 4 access denied;
// 6 refused: held by another gate (without --now), not managed by restarter, the write too large,
// or what is pending cannot be judged.

#include "restarter/cli/subcommand.hpp"

namespace restarter::cli {

inline constexpr int kExitRefused = 6;

Subcommand rollCommand();

}  // namespace restarter::cli
