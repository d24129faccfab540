#include "restarter/cli/serve_controller.hpp"

#include <unistd.h>

#include <chrono>
#include <ostream>
#include <random>
#include <sstream>
#include <stop_token>

#include <cxxopts.hpp>

#include "command_flags.hpp"
#include "restarter/base/clock.hpp"
#include "restarter/cli/flag_table.hpp"
#include "restarter/cli/flags.hpp"
#include "restarter/cli/kube_flags.hpp"
#include "restarter/cli/selection_flags.hpp"
#include "restarter/controller/controller.hpp"
#include "restarter/controller/ondelete.hpp"
#include "restarter/core/rollout.hpp"
#include "restarter/core/time.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/config.hpp"
#include "restarter/obs/metrics.hpp"
#include "restarter/runtime/allocator.hpp"
#include "restarter/runtime/manager.hpp"
#include "restarter/runtime/trim_schedule.hpp"

namespace restarter::cli {

// This file's own names, in a namespace of their own: a unity batch holds several subcommands
// (cmake/unity.cmake).
namespace serve_controller {
namespace {

constexpr const char* kName = "serve-controller";

// serve-controller's flags, bound to `out` (whose values are the defaults).
FlagTable flagTable(ServeControllerOptions& out) {
  controller::ControllerOptions& settings = out.controller;
  FlagTable table;
  table
      .list({"n,namespace",
             "namespace to watch; repeat or separate with commas for several (default: all namespaces)", "NS"},
            settings.namespaces)
      .duration({"debounce",
                 "wait this long after the first change of a workload before acting, so a burst of changes "
                 "becomes one rollout (e.g. 0, 250ms, 1s)",
                 "DURATION"},
                kDebounceBounds, settings.debounce)
      .duration({"min-rollout-interval",
                 "the upper bound of a rollout hold: a change that follows a rollout by restarter is "
                 "held while that rollout is in progress (the workload's status; at least 10s after it), "
                 "merged with every later change and applied as one rollout when it has finished, or "
                 "when this long has passed since it (Event reason RolloutHeld); measured from the "
                 "workload's restarter.stackable.tech/last-rollout annotation; 0 disables holds",
                 "DURATION"},
                kMinRolloutIntervalBounds, settings.minRolloutInterval)
      .integer({"max-concurrent-rollouts",
                "at most N of restarter's rollouts in progress at once across every watched namespace; "
                "a rollout counts while the workload's status says it is unfinished, at most "
                "--min-rollout-interval after it (so it needs an interval); the others wait in a queue "
                "(Event RolloutQueued, annotation restarter.stackable.tech/queued-since), higher "
                "restarter.stackable.tech/rollout-priority first, then the oldest; safe: what the "
                "cluster's spare capacity and the control plane take at once (each rollout adds up to "
                "maxSurge pods and a burst of pod and ReplicaSet writes); 0: no limit",
                "N"},
               settings.maxConcurrentRollouts, {.min = 0, .max = kMaxConcurrentRolloutsLimit})
      .duration({"ondelete-ready-timeout",
                 "OnDelete StatefulSets and DaemonSets are rolled pod by pod by restarter; a replacement pod "
                 "not Ready this long after it became not Ready pauses its workload's roll (Warning Event "
                 "RollPaused) until it is Ready or the template changes again",
                 "DURATION"},
                kPositiveDuration, settings.onDeleteReadyTimeout)
      .toggle({"dry-run",
               "log and announce (Event reasons WouldRestart, WouldEvict) what would be done; write nothing "
               "to workloads or pods",
               ""},
              settings.dryRun);
  addContentAwareFlag(
      table, settings.contentAware,
      "whose content is read so that a change of metadata alone (a label, an annotation, kubectl "
      "apply's last-applied, a Secret rewritten with the same data) restarts nothing: all (ConfigMaps "
      "and Secrets: their data reaches the controller, hashed and dropped as it arrives), configmaps "
      "(Secret data never reaches restarter; every new Secret resourceVersion restarts) or off (metadata only; every new "
      "resourceVersion restarts, as commons-operator)");
  addRollOnOptInFlag(table, settings.rollOnOptIn);
  addRolloutWindowFlag(
      table, settings.rolloutWindow,
      "when a workload without its own restarter.stackable.tech/rollout-window annotation may start a "
      "rollout: a change outside every window is held (Event reason RolloutHeld), merged with every later "
      "change, and rolled once at the next opening; e.g. \"Mon-Fri 02:00-04:00 Europe/Berlin; Sat,Sun "
      "00:00-24:00\" (days optional, time zone optional: UTC; see docs/behaviour.md) or always");
  table
      .toggle({"leader-elect",
               "run only while holding the Lease: --leader-elect or --leader-elect=false (default: true in "
               "a cluster, false otherwise)",
               ""},
              out.leaderElect)
      .text({"leader-election-namespace",
             "namespace of the Lease (default: the only --namespace, else the kubeconfig's or service "
             "account's namespace)",
             "NS"},
            out.leaderElectionNamespace)
      .text({"leader-election-id", "name of the Lease", "NAME"}, out.leaderElectionId, true)
      .parsed<std::optional<obs::BindAddress>>(
          {"metrics-bind-address", "address of /metrics (\"0\" disables)", "ADDR"}, out.metricsBind,
          obs::parseBindAddress, obs::formatBindAddress)
      .parsed<std::optional<obs::BindAddress>>(
          {"health-probe-bind-address", "address of /healthz and /readyz (\"0\" disables)", "ADDR"},
          out.healthBind, obs::parseBindAddress, obs::formatBindAddress)
      .deprecatedAlias("health-bind-address", "health-probe-bind-address")
      .positive({"max-writes-per-second", "global limit on workload writes and evictions per second", "N"},
                settings.writesPerSecond)
      .integer({"write-burst", "writes allowed at once before --max-writes-per-second applies", "N"},
               settings.writeBurst, {.min = 1});
  addLogFlags(table, out.logFormat, out.logLevel);
  addSelectionFlags(table, settings.selection);
  addArgoRolloutsFlag(table, settings.argoRollouts);
  table.duration({"crd-check-interval",
                  "with --argo-rollouts: while the Rollout CRD is not installed, look for it this often "
                  "(one discovery request each time; nothing is logged until it is found)",
                  "DURATION"},
                 kCrdCheckIntervalBounds, settings.crdCheckInterval);
  addDigestKeyFlags(table, settings.digestKey, "created with 32 random bytes when missing");
  addConnectionFlags(table, out.kubeconfig, out.context);
  return table;
}

cxxopts::Options makeOptions(const Io& io, const FlagTable& table) {
  cxxopts::Options options(
      io.programName + " " + kName,
      "Keep the pod templates of StatefulSets, Deployments and DaemonSets labeled\n"
      "restarter.stackable.tech/enabled=true annotated with the versions of the ConfigMaps and\n"
      "Secrets they use (so a change rolls their pods), and evict labeled pods at their\n"
      "restarter.stackable.tech/expires-at.* time. Logs go to stderr. SIGTERM: finish in-flight\n"
      "writes, release the Lease, exit 0.\n");
  options.custom_help("[flags]");
  table.declare(options);
  return options;
}

const CommandFlags<ServeControllerOptions> kFlags{kName, flagTable, makeOptions};

std::string hostName() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "restarter";
  return buffer;
}

std::string replicaIdentity() {
  std::random_device device;
  std::ostringstream out;
  out << hostName() << "_" << std::hex << device() << device();
  return out.str();
}

}  // namespace
}  // namespace serve_controller

std::optional<int> parseServeControllerFlags(const std::vector<std::string>& args, Io& io,
                                             ServeControllerOptions& out) {
  std::optional<int> exitNow = serve_controller::kFlags.parse(args, io, out).flags.exitNow;
  if (!exitNow && out.controller.maxConcurrentRollouts > 0 &&
      out.controller.minRolloutInterval <= std::chrono::milliseconds::zero()) {
    // Without an upper bound no rollout would hold a slot: the limit would silently do nothing.
    return reportUsageError(io, serve_controller::kName,
                            "--max-concurrent-rollouts needs --min-rollout-interval above 0 (the longest a "
                            "rollout holds a slot)");
  }
  return exitNow;
}

int runServeController(const ServeControllerOptions& options, Io& io) {
  // Freed memory leaves the process (runtime/allocator.hpp); the tick below returns free pages
  // after the initial sync, after each burst of work and every minute (runtime/trim_schedule.hpp),
  // keeping the steady state near what the caches hold (tests/bench/controller).
  // First, before any thread starts.
  runtime::configureAllocator();
  obs::Logger logger(io.err, options.logFormat, options.logLevel);

  kube::LoadOptions load;
  load.kubeconfigPath = options.kubeconfig;
  load.context = options.context;
  auto config = kube::loadConfig(load);
  if (!config) {
    logger.error("cannot load the connection configuration", {{"error", config.error().describe()}});
    return kExitFailure;
  }
  auto client = kube::Client::create(*config);
  if (!client) {
    logger.error("cannot create the API client", {{"error", client.error().describe()}});
    return kExitFailure;
  }

  controller::ControllerOptions controllerOptions = options.controller;
  controllerOptions.identity = serve_controller::replicaIdentity();
  const bool leaderElect = options.leaderElect.value_or(config->source == "in-cluster");
  if (leaderElect) {
    controller::LeaderElectionOptions election;
    election.name = options.leaderElectionId;
    election.identity = controllerOptions.identity;
    election.namespace_ = !options.leaderElectionNamespace.empty()   ? options.leaderElectionNamespace
                          : controllerOptions.namespaces.size() == 1 ? controllerOptions.namespaces.front()
                                                                     : config->namespace_;
    controllerOptions.leaderElection = election;
  }
  std::unique_ptr<kube::Client> leaseClient;
  if (controllerOptions.leaderElection) {
    kube::TransportOptions transport;
    transport.connectTimeout = transport.requestTimeout =
        controller::leaseRequestTimeout(*controllerOptions.leaderElection);
    auto created = kube::Client::create(*config, transport);
    if (!created) {
      logger.error("cannot create the API client", {{"error", created.error().describe()}});
      return kExitFailure;
    }
    leaseClient = std::move(created).value();
    controllerOptions.leaseClient = leaseClient.get();
  }

  obs::Registry registry;
  controller::Controller controller(**client, controllerOptions, logger, registry, base::systemClock());
  // Signals are taken by the manager's thread: blocked here, before any other thread starts (the
  // controller starts its threads in run()). That thread also returns free pages to the system
  // when `trims` says so. Declared after the controller, so it is gone before the controller is.
  runtime::TrimSchedule trims(std::chrono::seconds(2), std::chrono::minutes(1),
                              base::systemClock().monotonicNow());
  runtime::ManagerOptions process;
  process.healthBind = options.healthBind;
  process.metricsBind = options.metricsBind;
  process.metricsPrefix = "restarter_controller";
  process.tick = [&] {
    if (trims.due(controller.synced(), controller.reconciled(), base::systemClock().monotonicNow())) {
      runtime::returnFreeMemory();
    }
  };
  runtime::Manager manager(std::move(process), logger, registry);

  std::string namespaces;
  for (const std::string& ns : controllerOptions.namespaces) namespaces += (namespaces.empty() ? "" : ",") + ns;
  const obs::Fields starting = {
      {"server", config->server},
      {"namespaces", namespaces.empty() ? "*" : namespaces},
      {"identity", controllerOptions.identity},
      {"leaderElection",
       leaderElect ? controllerOptions.leaderElection->namespace_ + "/" + controllerOptions.leaderElection->name
                   : "off"},
      {"dryRun", controllerOptions.dryRun ? "true" : "false"}};
  runtime::Runnable runnable;
  runnable.ready = [&controller] { return controller.synced(); };
  runnable.notReadyReason = [&controller] { return controller.notReadyReason(); };
  runnable.run = [&](std::stop_token stop) {
    logger.info("starting controller", starting);
    core::Status ran = controller.run(stop);
    if (!ran) logger.error("controller stopped", {{"error", ran.error().describe()}});
    return ran;
  };
  const core::Status status = manager.run(runnable);
  return status ? kExitOk : kExitFailure;
}

Subcommand serveControllerCommand() {
  return Subcommand{serve_controller::kName,
                    "restart labeled workloads when their ConfigMaps/Secrets change; evict pods "
                    "whose credentials expire",
                    [](const std::vector<std::string>& args, Io& io) {
                      ServeControllerOptions options;
                      if (auto exit = parseServeControllerFlags(args, io, options)) return *exit;
                      return runServeController(options, io);
                    },
                    [](const Io& io) { return serve_controller::kFlags.describe(io); }};
}

}  // namespace restarter::cli
