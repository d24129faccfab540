// status: flags, reading the labeled workloads and their explanations, exit codes (see status.hpp).
#include <iostream>

#include <cxxopts.hpp>

#include "restarter/cli/explain_restart.hpp"
#include "restarter/cli/flags.hpp"
#include "restarter/cli/kube_flags.hpp"
#include "restarter/cli/status.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/yaml_writer.hpp"

namespace restarter::cli {

namespace {

constexpr const char* kName = "status";

struct Kind {
  core::WorkloadKind kind;
  kube::ResourceRef resource;
};

std::vector<Kind> workloadKinds() {
  return {{core::WorkloadKind::StatefulSet, kube::resources::statefulSets()},
          {core::WorkloadKind::Deployment, kube::resources::deployments()},
          {core::WorkloadKind::DaemonSet, kube::resources::daemonSets()}};
}

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
        // Reloader's annotations are not labels: with them every workload is listed and
        // core::workloadManagement filters, as the controller does.
        std::string selector =
            judgement->selection.reloaderAnnotations ? "" : std::string(core::kEnabledSelector);
        if (flags.count("selector") > 0) {
          const std::string more = flags["selector"].as<std::string>();
          if (!more.empty()) selector += (selector.empty() ? "" : ",") + more;
        }

        const std::string prefix = io.programName + " " + kName + ": ";
        auto client = kube::Client::connect(kubeLoadOptions(flags));
        if (!client) {
          io.err << prefix << client.error().describe() << "\n";
          return kExitFailure;
        }
        const std::string namespace_ = allNamespaces ? "" : (*client)->defaultNamespace();

        const auto digestKey = readJudgementDigestKey(**client, *judgement, io.err);
        std::vector<WorkloadStatus> rows;
        for (const Kind& kind : workloadKinds()) {
          kube::ListOptions list;
          list.labelSelector = selector;
          auto workloads = (*client)->list(kind.resource, namespace_, list);
          if (!workloads) {
            io.err << prefix << "listing " << kind.resource.plural << ": " << workloads.error().describe()
                   << "\n";
            return exitFor(workloads.error());
          }
          for (const nlohmann::json& workload : workloads->items) {
            if (core::workloadManagement(workload, judgement->selection).by == core::ManagedBy::None) continue;
            const std::string ns = core::metadataString(workload, "namespace");
            const std::string name = core::metadataString(workload, "name");
            auto input =
                readExplainInput(**client, kind.kind, ns, name, judgement->contentAware, judgement->selection,
                                 judgement->rollOnOptIn, digestKey ? &*digestKey : nullptr);
            if (!input) {
              if (input.error().kind == core::ErrorKind::NotFound) continue;  // deleted since the list
              rows.push_back(
                  unreadableStatus(core::workloadKindName(kind.kind), ns, name, input.error().describe()));
              continue;
            }
            input->readyTimeout = judgement->readyTimeout;
            rows.push_back(statusFromExplanation(explanationDocument(*input), input->workload));
          }
        }
        sortByAttention(rows);

        if (output == "json") {
          io.out << statusDocument(rows).dump(2) << "\n";
        } else if (output == "yaml") {
          io.out << core::toYaml(statusDocument(rows));
        } else {
          const std::string scope = allNamespaces ? "in any namespace" : "in namespace " + namespace_;
          io.out << renderStatusTable(rows, allNamespaces, output == "wide", scope);
        }
        io.out.flush();
        if (flags.count("fail-if-pending") > 0) {
          for (const WorkloadStatus& row : rows) {
            if (pendingOrUnknown(row)) return kExitFailure;
          }
        }
        return kExitOk;
      },
      [](const Io& io) { return describeFlags(makeOptions(io)); }};
}

}  // namespace restarter::cli
