#include "restarter/cli/flags.hpp"

#include <ostream>

#include <cxxopts.hpp>

#include "restarter/core/rollout_window.hpp"

namespace restarter::cli {
namespace {

// Whether cxxopts' message `what` quotes `text` (‘text’, or 'text' in its ASCII build).
bool quotes(const std::string& what, const std::string& text) {
  return what.find("\u2018" + text + "\u2019") != std::string::npos ||
         what.find("'" + text + "'") != std::string::npos;
}

// cxxopts reports a value of the wrong type as "Argument 'x' failed to parse", without the flag.
// Name the flag the value was given to (--flag VALUE, --flag=VALUE, -f VALUE); `what` unchanged
// when none matches.
std::string describeBadValue(const std::string& what, const std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') continue;
    if (const auto equals = arg.find('='); equals != std::string::npos) {
      if (quotes(what, arg.substr(equals + 1))) {
        return "invalid value \"" + arg.substr(equals + 1) + "\" for " + arg.substr(0, equals);
      }
    } else if (i + 1 < args.size() && quotes(what, args[i + 1])) {
      return "invalid value \"" + args[i + 1] + "\" for " + arg;
    }
  }
  return what;
}

// cxxopts reports an unknown flag as "Option 'since' does not exist"; say it as typed:
// unknown flag "--since". `what` unchanged when the flag is not among `args`.
std::string describeUnknownFlag(const std::string& what, const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg.size() < 2 || arg[0] != '-') continue;
    const std::string flag = arg.substr(0, arg.find('='));
    const auto nameStart = flag.find_first_not_of('-');
    if (nameStart != std::string::npos && quotes(what, flag.substr(nameStart))) {
      return "unknown flag \"" + flag + "\"";
    }
  }
  return what;
}

}  // namespace

std::string describeFlagError(const cxxopts::exceptions::exception& error,
                              const std::vector<std::string>& args) {
  if (dynamic_cast<const cxxopts::exceptions::no_such_option*>(&error) != nullptr) {
    return describeUnknownFlag(error.what(), args);
  }
  if (dynamic_cast<const cxxopts::exceptions::incorrect_argument_type*>(&error) != nullptr) {
    return describeBadValue(error.what(), args);
  }
  return error.what();
}

int reportUsageError(Io& io, const std::string& subcommand, const std::string& problem) {
  io.err << io.programName << " " << subcommand << ": " << problem << "\nRun '" << io.programName << " "
         << subcommand << " --help' for usage.\n";
  return kExitUsage;
}

std::string joinProblems(const std::vector<std::string>& problems) {
  std::string text;
  for (const std::string& problem : problems) text += (text.empty() ? "" : "; ") + problem;
  return text;
}

void addLogFlags(FlagTable& table, obs::LogFormat& format, obs::LogLevel& level) {
  table
      .parsed<obs::LogFormat>({"log-format", "text or json", "FORMAT"}, format, obs::parseLogFormat,
                              obs::logFormatName)
      .parsed<obs::LogLevel>({"log-level", "debug, info, warn or error", "LEVEL"}, level, obs::parseLogLevel,
                             obs::logLevelName);
}

void addContentAwareFlag(FlagTable& table, core::ContentAwareness& target, std::string help) {
  table.parsed<core::ContentAwareness>({"content-aware", std::move(help), "all|configmaps|off"}, target,
                                       core::parseContentAwareness, core::contentAwarenessName);
}

void addRollOnOptInFlag(FlagTable& table, bool& target) {
  table.toggle({"roll-on-opt-in",
                "roll a running workload when it is opted in (labeled), by writing its template annotations at "
                "once, as before; by default its pods' versions are recorded in its metadata "
                "(restarter.stackable.tech/baseline) and the first rollout comes with the first real change",
                ""},
               target);
}

void addRolloutWindowFlag(FlagTable& table, std::string& target, const std::string& what) {
  table.parsed<std::string>(
      {"rollout-window", what, "SPEC"}, target,
      [](const std::string& text) -> core::Result<std::string> {
        auto schedule = core::parseRolloutSchedule(text);
        if (!schedule) return std::move(schedule).error();
        return text;
      },
      [](const std::string& text) { return text; });
}

std::vector<FlagInfo> describeFlags(const cxxopts::Options& options) {
  std::vector<FlagInfo> flags;
  for (const std::string& group : options.groups()) {
    for (const cxxopts::HelpOptionDetails& option : options.group_help(group).options) {
      std::string name;
      for (const std::string& candidate : option.l) {
        if (name.empty() || candidate.size() > name.size()) name = candidate;
      }
      flags.push_back(FlagInfo{name, option.s, option.desc, !option.is_boolean, option.arg_help,
                               option.has_default ? option.default_value : ""});
    }
  }
  return flags;
}

std::string deprecatedHelp(const std::string& name) { return "deprecated: use --" + name; }

ParsedFlags parseFlags(cxxopts::Options& options, FlagTable& table, const std::vector<std::string>& args,
                       Io& io, const std::string& subcommand, bool allowPositional) {
  ParsedFlags parsed;
  std::vector<const char*> argv;
  const std::string name = io.programName + " " + subcommand;
  argv.push_back(name.c_str());
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    parsed.result =
        std::make_unique<cxxopts::ParseResult>(options.parse(static_cast<int>(argv.size()), argv.data()));
  } catch (const cxxopts::exceptions::exception& e) {
    parsed.exitNow = reportUsageError(io, subcommand, describeFlagError(e, args));
    return parsed;
  }
  if (parsed.result->count("help") > 0) {
    io.out << options.help();
    parsed.exitNow = kExitOk;
    return parsed;
  }
  if (!allowPositional && !parsed.result->unmatched().empty()) {
    parsed.exitNow =
        reportUsageError(io, subcommand, "unexpected argument \"" + parsed.result->unmatched().front() + "\"");
    return parsed;
  }
  if (core::Status read = table.read(*parsed.result, io.err); !read) {
    parsed.exitNow = reportUsageError(io, subcommand, read.error().message);
  }
  return parsed;
}

}  // namespace restarter::cli
