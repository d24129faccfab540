#include "restarter/cli/flags.hpp"

#include <ostream>

#include <cxxopts.hpp>

namespace restarter::cli {

int reportUsageError(Io& io, const std::string& subcommand, const std::string& problem) {
  io.err << io.programName << " " << subcommand << ": " << problem << "\nRun '" << io.programName
         << " " << subcommand << " --help' for usage.\n";
  return kExitUsage;
}

ParsedFlags parseFlags(cxxopts::Options& options, const std::vector<std::string>& args, Io& io,
                       const std::string& subcommand, bool allowPositional) {
  ParsedFlags parsed;
  std::vector<const char*> argv;
  const std::string name = io.programName + " " + subcommand;
  argv.push_back(name.c_str());
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    parsed.result = std::make_unique<cxxopts::ParseResult>(
        options.parse(static_cast<int>(argv.size()), argv.data()));
  } catch (const cxxopts::exceptions::exception& e) {
    parsed.exitNow = reportUsageError(io, subcommand, e.what());
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
  }
  return parsed;
}

}  // namespace restarter::cli
