#include "restarter/cli/version.hpp"

#include <ostream>

#include <cxxopts.hpp>
#include <nlohmann/json.hpp>

#include "command_flags.hpp"
#include "restarter/cli/build_info.hpp"
#include "restarter/cli/flag_table.hpp"
#include "restarter/cli/flags.hpp"
#include "restarter/core/yaml_writer.hpp"

namespace restarter::cli {

// This file's own names, in a namespace of their own: a unity batch holds several subcommands
// (cmake/unity.cmake).
namespace version {
namespace {

constexpr const char* kName = "version";

core::Result<VersionOptions::Format> parseFormat(const std::string& text) {
  if (text == "text") return VersionOptions::Format::Text;
  if (text == "json") return VersionOptions::Format::Json;
  if (text == "yaml") return VersionOptions::Format::Yaml;
  return core::makeError(core::ErrorKind::InvalidInput, "must be text, json or yaml, not \"" + text + "\"");
}

std::string formatName(const VersionOptions::Format& format) {
  switch (format) {
    case VersionOptions::Format::Json: return "json";
    case VersionOptions::Format::Yaml: return "yaml";
    case VersionOptions::Format::Text: break;
  }
  return "text";
}

FlagTable flagTable(VersionOptions& out) {
  FlagTable table;
  table.parsed<VersionOptions::Format>({"o,output", "output format: text, json or yaml", "FORMAT"}, out.format,
                                       parseFormat, formatName);
  return table;
}

cxxopts::Options makeOptions(const Io& io, const FlagTable& table) {
  cxxopts::Options options(io.programName + " " + kName,
                           "Print restarter's version (the release it was built as), the git commit it was\n"
                           "built from (empty for a developer's build) and its platform. The first line of\n"
                           "the text output is what --version prints.\n");
  options.custom_help("[flags]");
  table.declare(options);
  return options;
}

const CommandFlags<VersionOptions> kFlags{kName, flagTable, makeOptions};

}  // namespace
}  // namespace version

std::string targetPlatform() {
#if defined(__x86_64__)
  return "linux/amd64";
#elif defined(__aarch64__)
  return "linux/arm64";
#else
  return "linux/unknown";
#endif
}

std::string versionLine(const std::string& programName) { return programName + " " + kVersion; }

std::optional<int> parseVersionFlags(const std::vector<std::string>& args, Io& io, VersionOptions& out) {
  return version::kFlags.parse(args, io, out).flags.exitNow;
}

int runVersion(const VersionOptions& options, Io& io) {
  nlohmann::ordered_json info = {
      {"version", kVersion}, {"revision", kRevision}, {"platform", targetPlatform()}};
  switch (options.format) {
    case VersionOptions::Format::Json: io.out << info.dump(2) << "\n"; break;
    case VersionOptions::Format::Yaml: io.out << core::toYaml(info); break;
    case VersionOptions::Format::Text:
      io.out << versionLine(io.programName) << "\n"
             << "revision: " << (*kRevision != '\0' ? kRevision : "(not a release build)") << "\n"
             << "platform: " << targetPlatform() << "\n";
      break;
  }
  return kExitOk;
}

Subcommand versionCommand() {
  return Subcommand{version::kName, "print the version, the commit and the platform of this binary",
                    [](const std::vector<std::string>& args, Io& io) {
                      VersionOptions options;
                      if (auto exit = parseVersionFlags(args, io, options)) return *exit;
                      return runVersion(options, io);
                    },
                    [](const Io& io) { return version::kFlags.describe(io); }};
}

}  // namespace restarter::cli
