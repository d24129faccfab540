#pragma once
// `restarter status`: the fleet view, one line per labeled workload.
//
// The flags and the output; the rows are lib/inspect's (inspect/status.hpp).
//
// Exit codes (also in --help and the README): 0 listed; 1 the API failed, or --fail-if-pending
// and some workload has a restart due or an unknown pending state; 2 the command line is wrong;
// 4 access denied.

#include "restarter/cli/subcommand.hpp"

namespace restarter::cli {

Subcommand statusCommand();

}  // namespace restarter::cli
