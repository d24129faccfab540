#pragma once
// One subcommand's flags: its FlagTable over its options struct (flag_table.hpp) and the cxxopts
// declaration of that table (its --help), parsed and described the same way by every subcommand.
// Each *_command.cpp defines one `kFlags` and uses it both where it runs and where the flag test
// (Subcommand::flags) lists its flags, so the two cannot declare different flags.

#include <memory>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "restarter/cli/flags.hpp"

namespace restarter::cli {

// Parsed flags with the declaration they were parsed by: cxxopts' parse result points into its
// Options (the option names of its values), so the two live together.
struct ParsedCommand {
  std::unique_ptr<cxxopts::Options> declared;
  ParsedFlags flags;  // its exitNow, else its result (the positional arguments)
};

template <typename Options>
struct CommandFlags {
  const char* name;                                          // the subcommand's
  FlagTable (*table)(Options&);                              // its rows, bound to the fields
  cxxopts::Options (*declare)(const Io&, const FlagTable&);  // its --help
  bool allowPositional = false;

  // parseFlags (flags.hpp) into `options`: on success its fields hold the flags' values.
  ParsedCommand parse(const std::vector<std::string>& args, Io& io, Options& options) const {
    FlagTable rows = table(options);
    ParsedCommand parsed{std::make_unique<cxxopts::Options>(declare(io, rows)), {}};
    parsed.flags = parseFlags(*parsed.declared, rows, args, io, name, allowPositional);
    return parsed;
  }

  // The flags as --help lists them, each with the default of a fresh Options (Subcommand::flags).
  std::vector<FlagInfo> describe(const Io& io) const {
    Options defaults;
    return describeFlags(declare(io, table(defaults)));
  }
};

}  // namespace restarter::cli
