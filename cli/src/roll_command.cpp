// roll: flags, the plan, the write and exit codes (see roll.hpp).
#include <chrono>
#include <iostream>

#include <cxxopts.hpp>

#include "command_flags.hpp"
#include "restarter/base/clock.hpp"
#include "restarter/cli/explain_restart.hpp"
#include "restarter/cli/flag_table.hpp"
#include "restarter/cli/flags.hpp"
#include "restarter/cli/judged_workload.hpp"
#include "restarter/cli/kube_flags.hpp"
#include "restarter/cli/roll.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/rollout_mode.hpp"
#include "restarter/inspect/roll.hpp"

namespace restarter::cli {

// This file's own names, in a namespace of their own: a unity batch holds several subcommands
// (cmake/unity.cmake).
namespace roll {
namespace {

constexpr const char* kName = "roll";

// What roll's flags set.
struct RollOptions {
  bool dryRun = false;
  bool now = false;
  inspect::JudgementOptions judgement;
  kube::LoadOptions connection;
};

FlagTable flagTable(RollOptions& out) {
  FlagTable table;
  table.toggle({"dry-run", "print what would be rolled and write nothing", ""}, out.dryRun)
      .toggle({"now",
               "roll even when another gate holds the change (the rollout hold, a rollout window, the rollout "
               "queue): no gate is consulted, for this one workload",
               ""},
              out.now);
  addJudgementFlags(table, out.judgement);
  addKubeFlags(table, out.connection);
  return table;
}

cxxopts::Options makeOptions(const Io& io, const FlagTable& table) {
  cxxopts::Options options(
      io.programName + " " + kName,
      "Roll the change explain-restart shows as pending for one workload, once: the same write\n"
      "serve-controller makes (server-side apply of the restarter annotations with the kind's field\n"
      "manager, last-rollout stamped) and a Restarted Event naming roll. Meant for workloads annotated\n" +
          std::string(core::kRolloutModeAnnotation) +
          ": manual, which the controller never rolls (rolled whatever\n"
          "the other gates say). Another workload that a gate holds (the rollout hold, a rollout window,\n"
          "the rollout queue) is refused unless --now.\n"
          "Give the judgement flags serve-controller runs with (--content-aware, ...), as for\n"
          "explain-restart. Runs as you: needs get/list on the workload, its revisions and pods, the\n"
          "referenced ConfigMaps/Secrets and Events, patch on the workload, create on events.k8s.io Events.\n\n"
          "KIND is statefulset (sts), deployment (deploy), daemonset (ds) or rollout.\n\n"
          "Exit codes: 0 rolled, nothing pending, or --dry-run printed; 1 the API failed; 2 bad command\n"
          "line; 3 workload not found; 4 access denied; 6 refused (held by another gate without --now,\n"
          "not managed by restarter, the write too large, or what is pending unknown).\n");
  options.custom_help("KIND/NAME [flags]");
  options.positional_help("");
  table.declare(options);
  options.add_options()("target", "KIND/NAME", cxxopts::value<std::vector<std::string>>());
  options.parse_positional({"target"});
  return options;
}

const CommandFlags<RollOptions> kFlags{kName, flagTable, makeOptions, true};

}  // namespace
}  // namespace roll

Subcommand rollCommand() {
  return Subcommand{
      roll::kName, "roll the pending change of a workload (manual mode), once",
      [](const std::vector<std::string>& args, Io& io) {
        roll::RollOptions options;
        const ParsedCommand parsed = roll::kFlags.parse(args, io, options);
        if (parsed.flags.exitNow) return *parsed.flags.exitNow;
        const cxxopts::ParseResult& flags = *parsed.flags.result;
        auto target =
            parseWorkloadTarget(flags.count("target") > 0 ? flags["target"].as<std::vector<std::string>>()
                                                          : std::vector<std::string>{});
        if (!target) return reportUsageError(io, roll::kName, target.error().message);

        const std::string prefix = io.programName + " " + roll::kName + ": ";
        // With --now no gate is consulted, the queue's among them: it is not read.
        auto read =
            readJudgedWorkload(options.connection, *target, options.judgement, !options.now, io, prefix);
        if (const int* exit = std::get_if<int>(&read)) return *exit;
        const JudgedWorkload& workload = std::get<JudgedWorkload>(read);
        const std::string& what = workload.what;
        const inspect::RollPlan plan = inspect::planRoll(workload.input, options.now);
        const std::string described = inspect::describePlan(plan);
        switch (plan.verdict) {
          case inspect::RollVerdict::NothingPending:
            io.out << what << ": nothing pending, nothing to roll\n";
            return kExitOk;
          case inspect::RollVerdict::Unknown:
            io.err << prefix << what << ": what is pending is unknown: " << plan.reason << "\n";
            return kExitRefused;
          case inspect::RollVerdict::Refused:
            io.err << prefix << what << ": not rolled: " << plan.reason << "\n";
            return kExitRefused;
          case inspect::RollVerdict::Held:
            io.err << prefix << what << ": not rolled: it is not in manual mode, and " << plan.reason
                   << "; the controller rolls it when the gate opens, --now rolls it anyway\n";
            return kExitRefused;
          case inspect::RollVerdict::Roll: break;
        }
        const std::string mode = plan.manual ? "manual mode" : "auto mode";
        if (options.dryRun) {
          io.out << what << " (" << mode
                 << "): would roll (dry run, nothing written), applied as field manager " << plan.fieldManager
                 << ":\n";
          for (const core::AnnotationChange& change : plan.changes) io.out << "  " << change.describe() << "\n";
          return kExitOk;
        }
        const core::TimePoint rolledAt =
            std::chrono::floor<std::chrono::microseconds>(base::systemClock().wallNow());
        auto rolled = inspect::applyRoll(*workload.client, workload.input, plan, rolledAt);
        if (!rolled) {
          io.err << prefix << rolled.error().describe() << "\n";
          return exitForReadError(rolled.error());
        }
        io.out << what << " (" << mode << "): rolled, last-rollout " << *rolled->sent.lastRollout << ":\n";
        for (const core::AnnotationChange& change : plan.changes) io.out << "  " << change.describe() << "\n";
        if (rolled->eventError) {
          io.err << prefix
                 << "warning: the Restarted Event could not be recorded: " << rolled->eventError->describe()
                 << "\n";
        }
        return kExitOk;
      },
      [](const Io& io) { return roll::kFlags.describe(io); }};
}

}  // namespace restarter::cli
