#pragma once
// Shared flag handling for subcommands: parse with cxxopts, answer --help, and turn every usage
// problem into the one-line error + hint + exit 2 that app.hpp promises.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "restarter/cli/app.hpp"
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
std::string describeFlagError(const cxxopts::exceptions::exception& error,
                              const std::vector<std::string>& args);

// Reports a usage problem found after parsing (e.g. a bad flag value); returns kExitUsage.
int reportUsageError(Io& io, const std::string& subcommand, const std::string& problem);
// Several problems as the one message reportUsageError takes: "a; b; c".
std::string joinProblems(const std::vector<std::string>& problems);

// Reads --log-format and --log-level (the serve commands'); the usage error ("--log-level: ...")
// when one is invalid.
std::optional<std::string> parseLogFlags(const cxxopts::ParseResult& flags, obs::LogFormat& format,
                                         obs::LogLevel& level);

// The bounds of a duration that must be more than zero (lifetimes, intervals, timeouts).
inline constexpr core::DurationBounds kPositiveDuration{.min = std::chrono::milliseconds(1)};

// Reads duration flag `flag` (core::parseDuration's syntax) within `bounds` into `target`; the usage
// problem "--FLAG: ..." when it is not a duration or out of bounds. A seconds target takes whole
// seconds only. Every duration flag of every subcommand is read here.
std::optional<std::string> readDurationFlag(const cxxopts::ParseResult& flags, const std::string& flag,
                                            const core::DurationBounds& bounds,
                                            std::chrono::milliseconds& target);
std::optional<std::string> readDurationFlag(const cxxopts::ParseResult& flags, const std::string& flag,
                                            core::DurationBounds bounds, std::chrono::seconds& target);

// A flag as a subcommand declares it: long name, one-letter name ("" when none), help text and
// whether it takes a value. The flag test (tests/unit/cli/flags_test.cpp) walks these.
struct FlagInfo {
  std::string name;
  std::string shortName;
  std::string help;
  bool takesValue = false;
};
std::vector<FlagInfo> describeFlags(const cxxopts::Options& options);

// The help text that marks a flag as the deprecated spelling of `name`: "deprecated: use --NAME".
std::string deprecatedHelp(const std::string& name);

// Declares `oldName`, a string flag taking `argHelp`, as the deprecated spelling of `name` (in the
// "Deprecated" help group, with deprecatedHelp(name)). Read both with readRenamedFlag.
void addDeprecatedAlias(cxxopts::Options& options, const std::string& oldName, const std::string& name,
                        const std::string& argHelp);

// Sets `value` to string flag `name` (its default when not given), or to its deprecated spelling
// `oldName` when only that was given, then warning on io.err as pflag does: "Flag --OLD has been
// deprecated, use --NAME instead". The usage problem when both were given.
std::optional<std::string> readRenamedFlag(const cxxopts::ParseResult& flags, Io& io, const std::string& name,
                                           const std::string& oldName, std::string& value);

}  // namespace restarter::cli
