// status: flags, reading the labeled workloads and their explanations, exit codes (see status.hpp).
#include <iostream>

#include <cxxopts.hpp>

#include "command_flags.hpp"
#include "restarter/cli/explain_restart.hpp"
#include "restarter/cli/flag_table.hpp"
#include "restarter/cli/flags.hpp"
#include "restarter/cli/kube_flags.hpp"
#include "restarter/cli/status.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/yaml_writer.hpp"
#include "restarter/inspect/status.hpp"

namespace restarter::cli {

// This file's own names, in a namespace of their own: a unity batch holds several subcommands
// (cmake/unity.cmake).
namespace status {
namespace {

constexpr const char* kName = "status";

// The table's columns: the default, or wide, json, yaml.
enum class OutputFormat { Table, Wide, Json, Yaml };

core::Result<OutputFormat> parseOutputFormat(const std::string& text) {
  if (text == "wide") return OutputFormat::Wide;
  if (text == "json") return OutputFormat::Json;
  if (text == "yaml") return OutputFormat::Yaml;
  return core::makeError(core::ErrorKind::InvalidInput, "must be wide, json or yaml, not \"" + text + "\"");
}

std::string outputFormatName(const OutputFormat& format) {
  switch (format) {
    case OutputFormat::Wide: return "wide";
    case OutputFormat::Json: return "json";
    case OutputFormat::Yaml: return "yaml";
    case OutputFormat::Table: break;
  }
  return "";
}

// What status' flags set.
struct StatusOptions {
  bool allNamespaces = false;
  std::string selector;
  OutputFormat format = OutputFormat::Table;
  bool failIfPending = false;
  inspect::JudgementOptions judgement;
  kube::LoadOptions connection;
};

FlagTable flagTable(StatusOptions& out) {
  FlagTable table;
  table
      .toggle(
          {"A,all-namespaces", "list across all namespaces (the context's namespace and -n are ignored)", ""},
          out.allNamespaces)
      .text({"l,selector", "further label selector the workloads must match (e.g. app=shop)", "SELECTOR"},
            out.selector)
      .parsed<OutputFormat>(
          {"o,output",
           "output format: wide (adds the last rollout and the pending changes), json or yaml; "
           "default: a table",
           "FORMAT"},
          out.format, parseOutputFormat, outputFormatName)
      .toggle({"fail-if-pending",
               "exit 1 when some workload has a restart due (held, queued, or waiting for `roll` in manual "
               "mode) or an unknown state (for CI pipelines)",
               ""},
              out.failIfPending);
  addJudgementFlags(table, out.judgement);
  addKubeFlags(table, out.connection);
  return table;
}

cxxopts::Options makeOptions(const Io& io, const FlagTable& table) {
  cxxopts::Options options(
      io.programName + " " + kName,
      "One line per workload labeled " + std::string(core::kEnabledLabel) +
          "=true: pods Ready and on the\n"
          "current revision, restarts restarter recorded (revisions caused by a ConfigMap or Secret\n"
          "change), whether a restart is pending (and held by the controller's minimum rollout\n"
          "interval), whether the first rollout was restart-free, and the state of restarter's\n"
          "pod-by-pod roll of OnDelete workloads. A workload in manual mode with a change due shows\n"
          "\"manual: pending\" and the `roll` command. What needs attention comes\n"
          "first. Each line is condensed from the workload's explain-restart explanation (same reads,\n"
          "same verdicts): `explain-restart KIND/NAME` says why.\n\n"
          "Exit codes: 0 listed; 1 the API failed, or --fail-if-pending and a restart is due (or its\n"
          "state unknown) for some workload; 2 bad command line; 4 access denied.\n");
  options.custom_help("[flags]");
  table.declare(options);
  return options;
}

const CommandFlags<StatusOptions> kFlags{kName, flagTable, makeOptions};

int exitFor(const core::Error& error) {
  return error.kind == core::ErrorKind::Forbidden || error.kind == core::ErrorKind::Unauthorized
             ? kExitForbidden
             : kExitFailure;
}

}  // namespace
}  // namespace status

Subcommand statusCommand() {
  return Subcommand{
      status::kName, "list the labeled workloads: restarts, pending restarts, first rollouts",
      [](const std::vector<std::string>& args, Io& io) {
        status::StatusOptions options;
        if (auto exit = status::kFlags.parse(args, io, options).flags.exitNow) return *exit;
        const inspect::JudgementOptions& judgement = options.judgement;
        const bool allNamespaces = options.allNamespaces;
        const std::string selector = inspect::statusSelector(judgement.selection, options.selector);

        const std::string prefix = io.programName + " " + status::kName + ": ";
        auto client = kube::Client::connect(options.connection);
        if (!client) {
          io.err << prefix << client.error().describe() << "\n";
          return kExitFailure;
        }
        const std::string namespace_ = allNamespaces ? "" : (*client)->defaultNamespace();

        const auto digestKey = inspect::readJudgementDigestKey(**client, judgement, io.err);
        auto read = inspect::readStatusRows(**client, namespace_, selector, judgement,
                                            digestKey ? &*digestKey : nullptr);
        if (!read) {
          io.err << prefix << read.error().describe() << "\n";
          return status::exitFor(read.error());
        }
        std::vector<inspect::WorkloadStatus> rows = std::move(*read);
        inspect::sortByAttention(rows);

        if (options.format == status::OutputFormat::Json) {
          io.out << inspect::statusDocument(rows).dump(2) << "\n";
        } else if (options.format == status::OutputFormat::Yaml) {
          io.out << core::toYaml(inspect::statusDocument(rows));
        } else {
          const std::string scope = allNamespaces ? "in any namespace" : "in namespace " + namespace_;
          io.out << inspect::renderStatusTable(rows, allNamespaces,
                                               options.format == status::OutputFormat::Wide, scope);
        }
        io.out.flush();
        if (options.failIfPending) {
          for (const inspect::WorkloadStatus& row : rows) {
            if (inspect::pendingOrUnknown(row)) return kExitFailure;
          }
        }
        return kExitOk;
      },
      [](const Io& io) { return status::kFlags.describe(io); }};
}

}  // namespace restarter::cli
