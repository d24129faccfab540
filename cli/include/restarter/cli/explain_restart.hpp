#pragma once
// `restarter explain-restart KIND/NAME`: why did (or will) this workload restart?
//
// The flags and the output; what is read and said is lib/inspect's (inspect/explain.hpp).
// `--watch` then prints one line per new revision.
//
// Exit codes (also in --help and the README): 0 explained; 1 the API failed; 2 the command line is
// wrong (including an unknown kind); 3 the workload does not exist; 4 access denied; 5 the
// workload has no revisions yet.

#include <string>
#include <vector>

#include "restarter/cli/subcommand.hpp"
#include "restarter/core/result.hpp"
#include "restarter/inspect/explain.hpp"

namespace restarter::cli {

inline constexpr int kExitNotFound = 3;
inline constexpr int kExitForbidden = 4;
inline constexpr int kExitNoRevisions = 5;

class FlagTable;

// The judgement flags explain-restart and status share, bound to `out`.
void addJudgementFlags(FlagTable& table, inspect::JudgementOptions& out);

// The workload named on the command line: "KIND/NAME" or "KIND NAME" (as kubectl accepts);
// InvalidInput with the message to print otherwise. explain-restart and roll share it.
struct WorkloadTarget {
  core::WorkloadKind kind = core::WorkloadKind::StatefulSet;
  std::string name;
};
core::Result<WorkloadTarget> parseWorkloadTarget(std::vector<std::string> target);

// The exit code of a failed read or write: kExitNotFound, kExitForbidden (also unauthorized), else
// kExitFailure.
int exitForReadError(const core::Error& error);

Subcommand explainRestartCommand();

}  // namespace restarter::cli
