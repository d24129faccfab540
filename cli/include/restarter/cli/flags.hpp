#pragma once
// Shared flag handling for subcommands: parse with cxxopts, answer --help, and turn every usage
// problem into the one-line error + hint + exit 2 that app.hpp promises.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "restarter/cli/app.hpp"

namespace cxxopts {
class Options;
class ParseResult;
namespace exceptions {
class exception;
}  // namespace exceptions
}  // namespace cxxopts

namespace restarter::cli {

// The outcome of parsing a subcommand's flags: either parsed flags to run with, or an exit code
// to return right away (help printed: 0; usage error reported: 2).
struct ParsedFlags {
  std::optional<int> exitNow;
  std::unique_ptr<cxxopts::ParseResult> result;
};

// Parses `args` (the arguments after the subcommand name) with `options`, which must define
// "h,help". Positional arguments are refused unless `allowPositional`.
ParsedFlags parseFlags(cxxopts::Options& options, const std::vector<std::string>& args, Io& io,
                       const std::string& subcommand, bool allowPositional = false);

// The problem cxxopts found in `args`, said with the flag as the user typed it: an unknown flag
// is `unknown flag "--x"`, a value of the wrong type `invalid value "v" for --x`; anything else
// is cxxopts' own message.
std::string describeFlagError(const cxxopts::exceptions::exception& error, const std::vector<std::string>& args);

// Reports a usage problem found after parsing (e.g. a bad flag value); returns kExitUsage.
int reportUsageError(Io& io, const std::string& subcommand, const std::string& problem);
// Several problems as the one message reportUsageError takes: "a; b; c".
std::string joinProblems(const std::vector<std::string>& problems);

}  // namespace restarter::cli
