#include "restarter/cli/app.hpp"

#include <exception>
#include <filesystem>
#include <ostream>

#include <cxxopts.hpp>

#include "restarter/cli/flags.hpp"
#include "restarter/cli/subcommand.hpp"
#include "restarter/cli/version.hpp"

namespace restarter::cli {

namespace {

const Subcommand* findSubcommand(const std::string& name) {
  for (const Subcommand& sub : subcommands()) {
    if (sub.name == name) return &sub;
  }
  return nullptr;
}

void printUsage(const Io& io) {
  io.out << io.programName
         << " keeps pods in step with the ConfigMaps and Secrets they use: workloads labeled\n"
            "restarter.stackable.tech/enabled=true are rolled when a referenced object changes.\n\n"
            "Usage:\n  "
         << io.programName << " <subcommand> [flags]\n  " << io.programName
         << " <subcommand> --help\n\nSubcommands:\n";
  std::size_t width = 0;
  for (const Subcommand& sub : subcommands()) width = std::max(width, sub.name.size());
  for (const Subcommand& sub : subcommands()) {
    io.out << "  " << sub.name << std::string(width - sub.name.size() + 2, ' ') << sub.summary << "\n";
  }
  io.out << "\nFlags:\n"
            "  -h, --help     show this help\n"
            "      --version  print the version and exit\n\n"
            "Exit codes: 0 success, 1 the command failed, 2 the command line is wrong.\n";
}

int usageError(const Io& io, const std::string& problem) {
  io.err << io.programName << ": " << problem << "\nRun '" << io.programName << " --help' for usage.\n";
  return kExitUsage;
}

}  // namespace

std::string programNameFor(const std::string& argv0) {
  const std::string base = std::filesystem::path(argv0).filename().string();
  return base == "kubectl-restarter" ? "kubectl restarter" : "restarter";
}

int runApp(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  Io io{out, err, programNameFor(args.empty() ? std::string("restarter") : args.front())};
  try {
    // Global flags come before the subcommand; everything after its name belongs to it.
    std::size_t commandIndex = 1;
    while (commandIndex < args.size() && !args[commandIndex].empty() && args[commandIndex].front() == '-') {
      ++commandIndex;
    }

    cxxopts::Options options(io.programName);
    options.add_options()("h,help", "show this help")("version", "print the version");
    std::vector<const char*> argv;
    argv.push_back(io.programName.c_str());
    for (std::size_t i = 1; i < commandIndex; ++i) argv.push_back(args[i].c_str());
    const auto parsed = options.parse(static_cast<int>(argv.size()), argv.data());

    if (parsed.count("help") > 0) {
      printUsage(io);
      return kExitOk;
    }
    if (parsed.count("version") > 0) {
      out << versionLine(io.programName) << "\n";
      return kExitOk;
    }
    if (commandIndex >= args.size()) {
      printUsage(io);
      return kExitUsage;
    }
    const Subcommand* sub = findSubcommand(args[commandIndex]);
    if (sub == nullptr) {
      return usageError(io, "unknown subcommand \"" + args[commandIndex] + "\"");
    }
    const std::vector<std::string> rest(args.begin() + static_cast<std::ptrdiff_t>(commandIndex) + 1,
                                        args.end());
    return sub->run(rest, io);
  } catch (const cxxopts::exceptions::exception& e) {
    return usageError(io, describeFlagError(e, args));
  } catch (const std::exception& e) {
    err << io.programName << ": internal error: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace restarter::cli
