// explain-restart: flags, output, --watch and exit codes (see explain_restart.hpp).
#include <unistd.h>

#include <iostream>
#include <ostream>

#include <cxxopts.hpp>

#include "command_flags.hpp"
#include "restarter/cli/digest_key_flags.hpp"
#include "restarter/cli/explain_restart.hpp"
#include "restarter/cli/flag_table.hpp"
#include "restarter/cli/flags.hpp"
#include "restarter/cli/judged_workload.hpp"
#include "restarter/cli/kube_flags.hpp"
#include "restarter/cli/selection_flags.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/yaml_writer.hpp"
#include "restarter/inspect/explanation.hpp"
#include "restarter/inspect/status.hpp"
#include "restarter/kube/digest_key.hpp"

namespace restarter::cli {

using nlohmann::ordered_json;

int exitForReadError(const core::Error& error) {
  switch (error.kind) {
    case core::ErrorKind::NotFound: return kExitNotFound;
    case core::ErrorKind::Forbidden:
    case core::ErrorKind::Unauthorized: return kExitForbidden;
    default: return kExitFailure;
  }
}

// This file's own names, in a namespace of their own: a unity batch holds several subcommands
// (cmake/unity.cmake).
namespace explain_restart {
namespace {

constexpr const char* kName = "explain-restart";

enum class OutputFormat { Text, Json, Yaml };

core::Result<OutputFormat> parseOutputFormat(const std::string& text) {
  if (text == "text") return OutputFormat::Text;
  if (text == "json") return OutputFormat::Json;
  if (text == "yaml") return OutputFormat::Yaml;
  return core::makeError(core::ErrorKind::InvalidInput, "must be text, json or yaml, not \"" + text + "\"");
}

std::string outputFormatName(const OutputFormat& format) {
  switch (format) {
    case OutputFormat::Json: return "json";
    case OutputFormat::Yaml: return "yaml";
    case OutputFormat::Text: break;
  }
  return "text";
}

// What explain-restart's flags set.
struct ExplainRestartOptions {
  OutputFormat format = OutputFormat::Text;
  bool watch = false;
  bool noColor = false;
  inspect::JudgementOptions judgement;
  kube::LoadOptions connection;
};

FlagTable flagTable(ExplainRestartOptions& out) {
  FlagTable table;
  table
      .parsed<OutputFormat>({"o,output", "output format: text, json or yaml", "FORMAT"}, out.format,
                            parseOutputFormat, outputFormatName)
      .toggle({"watch",
               "after the explanation, print one line per new revision with its cause, until interrupted", ""},
              out.watch)
      .toggle(
          {"no-color",
           "never colour the text output (colour is used only on a terminal; NO_COLOR also disables it)", ""},
          out.noColor);
  addJudgementFlags(table, out.judgement);
  addKubeFlags(table, out.connection);
  return table;
}

cxxopts::Options makeOptions(const Io& io, const FlagTable& table) {
  cxxopts::Options options(
      io.programName + " " + kName,
      "Explain why a workload restarted, and whether it will: each revision with what changed\n"
      "(restarter annotations: which ConfigMap/Secret and which versions; other template paths),\n"
      "whether the first rollout was restart-free, and what would restart it now.\n\n"
      "KIND is statefulset (sts), deployment (deploy) or daemonset (ds).\n\n"
      "Exit codes: 0 explained, 1 the API failed, 2 bad command line or unknown kind, 3 workload\n"
      "not found, 4 access denied, 5 no revisions yet.\n");
  options.custom_help("KIND/NAME [flags]");
  options.positional_help("");
  table.declare(options);
  options.add_options()("target", "KIND/NAME", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"target"});
  return options;
}

const CommandFlags<ExplainRestartOptions> kFlags{kName, flagTable, makeOptions, true};

}  // namespace
}  // namespace explain_restart

namespace explain_restart {
namespace {

// --watch: prints one line (text) or one JSON object (json/yaml) per new revision until the
// watch fails for good (inspect::watchRevisions). Returns the exit code.
int watchRevisions(kube::Client& client, const inspect::ExplainInput& start, const std::string& namespace_,
                   OutputFormat format, Io& io) {
  auto print = [&](const inspect::RevisionFeed::NewRevision& added) {
    const core::Revision& revision = added.revision;
    if (format == OutputFormat::Text) {
      io.out << "revision " << revision.number << " " << revision.name << " " << revision.created << ":";
      const std::vector<std::string> causes = inspect::causeLines(added.cause);
      if (causes.empty()) io.out << " no template change";
      for (std::size_t i = 0; i < causes.size(); ++i) io.out << (i == 0 ? " " : "; ") << causes[i];
      io.out << std::endl;
    } else {
      io.out << ordered_json{{"revision", revision.number},
                             {"name", revision.name},
                             {"created", revision.created},
                             {"causes", inspect::causesDocument(added.cause)}}
                    .dump()
             << std::endl;
    }
  };
  auto interrupted = [&](const core::Error& error) {
    io.err << io.programName << " " << kName << ": watch interrupted: " << error.describe() << "\n";
  };
  const inspect::WatchStopped stopped =
      inspect::watchRevisions(client, start, namespace_, base::systemClock(), print, interrupted);
  if (!stopped.listing) return kExitFailure;
  io.err << io.programName << " " << kName << ": watching: " << stopped.error.describe() << "\n";
  return exitForReadError(stopped.error);
}

}  // namespace
}  // namespace explain_restart

core::Result<WorkloadTarget> parseWorkloadTarget(std::vector<std::string> target) {
  if (target.size() == 2 && target[0].find('/') == std::string::npos) {
    target = {target[0] + "/" + target[1]};  // kubectl also accepts "KIND NAME"
  }
  if (target.size() != 1)
    return core::makeError(core::ErrorKind::InvalidInput, "expected one KIND/NAME, e.g. statefulset/web");
  const auto slash = target[0].find('/');
  if (slash == std::string::npos || slash + 1 == target[0].size()) {
    return core::makeError(core::ErrorKind::InvalidInput, "expected KIND/NAME, got \"" + target[0] + "\"");
  }
  auto kind = core::parseWorkloadKind(target[0].substr(0, slash));
  if (!kind) return std::move(kind).error();
  return WorkloadTarget{*kind, target[0].substr(slash + 1)};
}

void addJudgementFlags(FlagTable& table, inspect::JudgementOptions& out) {
  addContentAwareFlag(table, out.contentAware,
                      "read the content of these referenced kinds, as serve-controller "
                      "--content-aware does, to tell a metadata-only change (no restart) from a "
                      "real one: all (ConfigMaps and Secrets), configmaps or off");
  table
      .duration({"ondelete-ready-timeout",
                 "judge an OnDelete roll paused when a replacement pod is not Ready this long (give "
                 "serve-controller's --ondelete-ready-timeout)",
                 "DURATION"},
                kPositiveDuration, out.readyTimeout)
      .toggle({"roll-on-opt-in",
               "judge as serve-controller --roll-on-opt-in does: a workload restarter has no record of is "
               "rolled rather than given a baseline",
               ""},
              out.rollOnOptIn);
  addRolloutWindowFlag(table, out.rolloutWindow,
                       "judge a workload without its own restarter.stackable.tech/rollout-window annotation "
                       "by these windows (give serve-controller's --rollout-window)");
  addSelectionFlags(table, out.selection);
  addDigestKeyFlags(table, out.digestKey,
                    "only read, to compare contents as serve-controller does (without access to it, contents "
                    "are compared unkeyed)");
}

Subcommand explainRestartCommand() {
  return Subcommand{explain_restart::kName, "explain why a workload restarted, and whether it will",
                    [](const std::vector<std::string>& args, Io& io) {
                      explain_restart::ExplainRestartOptions options;
                      const ParsedCommand parsed = explain_restart::kFlags.parse(args, io, options);
                      if (parsed.flags.exitNow) return *parsed.flags.exitNow;
                      const cxxopts::ParseResult& flags = *parsed.flags.result;

                      auto target = parseWorkloadTarget(flags.count("target") > 0
                                                            ? flags["target"].as<std::vector<std::string>>()
                                                            : std::vector<std::string>{});
                      if (!target) return reportUsageError(io, explain_restart::kName, target.error().message);
                      const explain_restart::OutputFormat format = options.format;
                      const bool color = !options.noColor && std::getenv("NO_COLOR") == nullptr &&
                                         &io.out == &std::cout && isatty(STDOUT_FILENO) == 1;
                      const std::string prefix = io.programName + " " + explain_restart::kName + ": ";
                      auto read =
                          readJudgedWorkload(options.connection, *target, options.judgement, true, io, prefix);
                      if (const int* exit = std::get_if<int>(&read)) return *exit;
                      const JudgedWorkload& workload = std::get<JudgedWorkload>(read);
                      const inspect::Explanation explanation = inspect::explain(workload.input);
                      switch (format) {
                        case explain_restart::OutputFormat::Text:
                          io.out << inspect::renderText(explanation, color);
                          break;
                        case explain_restart::OutputFormat::Json:
                          io.out << inspect::explanationDocument(explanation).dump(2) << "\n";
                          break;
                        case explain_restart::OutputFormat::Yaml:
                          io.out << core::toYaml(inspect::explanationDocument(explanation));
                          break;
                      }
                      io.out.flush();
                      if (workload.input.revisions.empty() && !options.watch) {
                        io.err << prefix << workload.what << " has no revisions yet\n";
                        return kExitNoRevisions;
                      }
                      if (options.watch)
                        return explain_restart::watchRevisions(*workload.client, workload.input,
                                                               workload.namespace_, format, io);
                      return kExitOk;
                    },
                    [](const Io& io) { return explain_restart::kFlags.describe(io); }};
}

}  // namespace restarter::cli
