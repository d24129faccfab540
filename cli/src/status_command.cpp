// status: flags, reading the labeled workloads and their explanations, exit codes (see status.hpp).
#include <iostream>

#include <cxxopts.hpp>

#include "restarter/cli/explain_restart.hpp"
#include "restarter/cli/flags.hpp"
#include "restarter/cli/kube_flags.hpp"
#include "restarter/cli/status.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/yaml_writer.hpp"
#include "restarter/inspect/status.hpp"

namespace restarter::cli {

namespace {

constexpr const char* kName = "status";

cxxopts::Options makeOptions(const Io& io) {
  cxxopts::Options options(
      io.programName + " " + kName,
      "One line per workload labeled " + std::string(core::kEnabledLabel) +
          "=true: pods Ready and on the\n"
          "current revision, restarts restarter recorded (revisions caused by a ConfigMap or Secret\n"
          "change), whether a restart is pending (and held by the controller's minimum rollout\n"
          "interval), whether the first rollout was restart-free, and the state of restarter's\n"
          "pod-by-pod roll of OnDelete workloads. What needs attention comes\n"
          "first. Each line is condensed from the workload's explain-restart explanation (same reads,\n"
          "same verdicts): `explain-restart KIND/NAME` says why.\n\n"
          "Exit codes: 0 listed; 1 the API failed, or --fail-if-pending and a restart is due (or its\n"
          "state unknown) for some workload; 2 bad command line; 4 access denied.\n");
  options.custom_help("[flags]");
  options.add_options()("A,all-namespaces",
                        "list across all namespaces (the context's namespace and -n are ignored)")(
      "l,selector", "further label selector the workloads must match (e.g. app=shop)",
      cxxopts::value<std::string>(),
      "SELECTOR")("o,output",
                  "output format: wide (adds the last rollout and the pending changes), json or yaml; "
                  "default: a table",
                  cxxopts::value<std::string>(), "FORMAT")(
      "fail-if-pending", "exit 1 when some workload has a restart due or an unknown state (for CI pipelines)")(
      "h,help", "show this help");
  addJudgementFlags(options);
  addKubeFlags(options);
  return options;
}

int exitFor(const core::Error& error) {
  return error.kind == core::ErrorKind::Forbidden || error.kind == core::ErrorKind::Unauthorized
             ? kExitForbidden
             : kExitFailure;
}

}  // namespace

Subcommand statusCommand() {
  return Subcommand{
      kName, "list the labeled workloads: restarts, pending restarts, first rollouts",
      [](const std::vector<std::string>& args, Io& io) {
        cxxopts::Options options = makeOptions(io);
        ParsedFlags parsed = parseFlags(options, args, io, kName);
        if (parsed.exitNow) return *parsed.exitNow;
        const cxxopts::ParseResult& flags = *parsed.result;

        const std::string output = flags.count("output") > 0 ? flags["output"].as<std::string>() : "";
        if (flags.count("output") > 0 && output != "wide" && output != "json" && output != "yaml") {
          return reportUsageError(io, kName, "--output must be wide, json or yaml, not \"" + output + "\"");
        }
        auto judgement = judgementOptions(flags);
        if (!judgement) return reportUsageError(io, kName, judgement.error().message);
        const bool allNamespaces = flags.count("all-namespaces") > 0;
        const std::string selector = inspect::statusSelector(
            judgement->selection, flags.count("selector") > 0 ? flags["selector"].as<std::string>() : "");

        const std::string prefix = io.programName + " " + kName + ": ";
        auto client = kube::Client::connect(kubeLoadOptions(flags));
        if (!client) {
          io.err << prefix << client.error().describe() << "\n";
          return kExitFailure;
        }
        const std::string namespace_ = allNamespaces ? "" : (*client)->defaultNamespace();

        const auto digestKey = inspect::readJudgementDigestKey(**client, *judgement, io.err);
        auto read = inspect::readStatusRows(**client, namespace_, selector, *judgement,
                                            digestKey ? &*digestKey : nullptr);
        if (!read) {
          io.err << prefix << read.error().describe() << "\n";
          return exitFor(read.error());
        }
        std::vector<inspect::WorkloadStatus> rows = std::move(*read);
        inspect::sortByAttention(rows);

        if (output == "json") {
          io.out << inspect::statusDocument(rows).dump(2) << "\n";
        } else if (output == "yaml") {
          io.out << core::toYaml(inspect::statusDocument(rows));
        } else {
          const std::string scope = allNamespaces ? "in any namespace" : "in namespace " + namespace_;
          io.out << inspect::renderStatusTable(rows, allNamespaces, output == "wide", scope);
        }
        io.out.flush();
        if (flags.count("fail-if-pending") > 0) {
          for (const inspect::WorkloadStatus& row : rows) {
            if (inspect::pendingOrUnknown(row)) return kExitFailure;
          }
        }
        return kExitOk;
      },
      [](const Io& io) { return describeFlags(makeOptions(io)); }};
}

}  // namespace restarter::cli
