#pragma once
// Shared flag handling for subcommands: parse with cxxopts, answer --help, read the subcommand's
// FlagTable (flag_table.hpp) and turn every usage problem into the one-line error + hint + exit 2
// that app.hpp promises.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "restarter/cli/app.hpp"
#include "restarter/cli/flag_table.hpp"
#include "restarter/core/content.hpp"
#include "restarter/core/time.hpp"
#include "restarter/obs/log.hpp"

namespace cxxopts {
class Options;
class ParseResult;
namespace exceptions {
class exception;
}  // namespace exceptions
}  // namespace cxxopts

namespace restarter::cli {

// The outcome of parsing a subcommand's flags: either parsed flags to run with (the table's fields
// filled), or an exit code to return right away (help printed: 0; usage error reported: 2).
struct ParsedFlags {
  std::optional<int> exitNow;
  std::unique_ptr<cxxopts::ParseResult> result;
};

// Parses `args` (the arguments after the subcommand name) with `options`, into which `table` was
// declared, then reads `table`; its first problem is the usage error. Positional arguments are
// refused unless `allowPositional`. The one way a subcommand parses its flags.
ParsedFlags parseFlags(cxxopts::Options& options, FlagTable& table, const std::vector<std::string>& args,
                       Io& io, const std::string& subcommand, bool allowPositional = false);

// The problem cxxopts found in `args`, said with the flag as the user typed it: an unknown flag
// is `unknown flag "--x"`, a value of the wrong type `invalid value "v" for --x`; anything else
// is cxxopts' own message.
std::string describeFlagError(const cxxopts::exceptions::exception& error,
                              const std::vector<std::string>& args);

// Reports a usage problem found after parsing (e.g. a bad flag value); returns kExitUsage.
int reportUsageError(Io& io, const std::string& subcommand, const std::string& problem);
// Several problems as the one message reportUsageError takes: "a; b; c".
std::string joinProblems(const std::vector<std::string>& problems);

// Adds --log-format and --log-level (the serve commands'), bound to `format` and `level`.
void addLogFlags(FlagTable& table, obs::LogFormat& format, obs::LogLevel& level);

// Adds --content-aware (core::ContentAwareness: all, configmaps or off) bound to `target`, with
// the subcommand's own `help` (what it reads the content for).
void addContentAwareFlag(FlagTable& table, core::ContentAwareness& target, std::string help);

// Adds --roll-on-opt-in, the serve commands' choice between a baseline and a rollout at opt-in.
void addRollOnOptInFlag(FlagTable& table, bool& target);
// --rollout-window SPEC (core/rollout_window.hpp), checked as it is read; `what` is its help.
void addRolloutWindowFlag(FlagTable& table, std::string& target, const std::string& what);

// The bounds of a duration that must be more than zero (lifetimes, intervals, timeouts).
inline constexpr core::DurationBounds kPositiveDuration{.min = std::chrono::milliseconds(1)};

// A flag as a subcommand declares it: long name, one-letter name ("" when none), help text,
// whether it takes a value, its value's name and its default. The flag test (tests/unit/cli/flags_test.cpp) walks these.
struct FlagInfo {
  std::string name;
  std::string shortName;
  std::string help;
  bool takesValue = false;
  std::string argName;       // "DURATION"; "" for a toggle
  std::string defaultValue;  // as --help shows it; "" when none
};
std::vector<FlagInfo> describeFlags(const cxxopts::Options& options);

// The help text that marks a flag as the deprecated spelling of `name`: "deprecated: use --NAME".
std::string deprecatedHelp(const std::string& name);

}  // namespace restarter::cli
