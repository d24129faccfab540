#pragma once
// A subcommand: its name, a one-line summary for `--help`, and its entry point. Each subcommand
// lives in its own file and parses its own flags (cxxopts) from the arguments after its name.

#include <functional>
#include <string>
#include <vector>

#include "restarter/cli/app.hpp"
#include "restarter/cli/flags.hpp"

namespace restarter::cli {

struct Subcommand {
  std::string name;
  std::string summary;
  // Receives the arguments after the subcommand name; returns an exit code (app.hpp).
  std::function<int(const std::vector<std::string>& args, Io& io)> run;
  // The flags it declares, as its --help lists them (for the flag test).
  std::function<std::vector<FlagInfo>(const Io& io)> flags;
};

// Every subcommand that works in this build, in the order `--help` lists them. A subcommand is
// registered only once it does what its help says.
const std::vector<Subcommand>& subcommands();

}  // namespace restarter::cli
