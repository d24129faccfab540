#pragma once
// The command line: `restarter <subcommand> [flags]`, also run by kubectl as the plugin
// `kubectl restarter <subcommand>` (binary name kubectl-restarter). main() only calls runApp();
// every subcommand is an options struct plus a run function returning an exit code, registered in
// subcommands.cpp. Errors become exit codes here and nowhere else.

#include <iosfwd>
#include <string>
#include <vector>

namespace restarter::cli {

// Documented exit codes (docs/configuration.md "Every subcommand").
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the command ran and failed (API error, bad input file)
inline constexpr int kExitUsage = 2;    // the command line itself is wrong

// Where a subcommand reads and writes; tests pass string streams.
struct Io {
  std::ostream& out;
  std::ostream& err;
  std::string programName;  // "restarter" or "kubectl restarter", for usage and messages
};

// The name users type to run us: "kubectl restarter" when invoked as kubectl-restarter (the
// kubectl plugin convention), "restarter" otherwise. `argv0` may be a path.
std::string programNameFor(const std::string& argv0);

// Runs the command line `args` (args[0] is argv[0]) and returns the process exit code. Never
// throws.
int runApp(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace restarter::cli
