#pragma once
// `restarter serve-controller`: the workload restarter (StatefulSets, Deployments, DaemonSets
// labeled restarter.stackable.tech/enabled=true) and the pod expiry restarter, with leader
// election, /healthz, /readyz (after every cache has synced) and /metrics. SIGTERM or SIGINT:
// stop taking work, finish in-flight writes, release the Lease, exit 0. Leadership lost: exit 1.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "restarter/cli/digest_key_flags.hpp"
#include "restarter/cli/subcommand.hpp"
#include "restarter/controller/controller.hpp"
#include "restarter/controller/ondelete.hpp"
#include "restarter/core/time.hpp"
#include "restarter/obs/endpoints.hpp"
#include "restarter/obs/log.hpp"

namespace restarter::cli {

// The controller's own settings are bound to `controller`'s fields (their defaults are
// controller::ControllerOptions'); the rest is the program's: connection, leader election's
// flags, endpoints and logs.
struct ServeControllerOptions {
  controller::ControllerOptions controller{};
  std::string kubeconfig;
  std::string context;
  std::optional<bool> leaderElect;      // nullopt: on when running in a cluster
  std::string leaderElectionNamespace;  // empty: the only --namespace, else the config's namespace
  std::string leaderElectionId = "restarter-controller";
  std::optional<obs::BindAddress> metricsBind = obs::BindAddress{"", 8080};
  std::optional<obs::BindAddress> healthBind = obs::BindAddress{"", 8081};
  obs::LogFormat logFormat = obs::LogFormat::Text;
  obs::LogLevel logLevel = obs::LogLevel::Info;
};

// Parses the flags after `serve-controller`. Returns an exit code when the command must end now
// (--help: 0; a usage error, reported on io.err: 2), nothing when `out` is ready to run.
std::optional<int> parseServeControllerFlags(const std::vector<std::string>& args, Io& io,
                                             ServeControllerOptions& out);

// --debounce: up to 1h; --min-rollout-interval: up to 24h (a held change waits at most this long).
inline constexpr core::DurationBounds kDebounceBounds{.max = std::chrono::hours(1)};
inline constexpr core::DurationBounds kMinRolloutIntervalBounds{.max = std::chrono::hours(24)};
// --max-concurrent-rollouts: 0 (no limit) to 100000 (the slots and the queue are one entry per
// workload; a larger number is no limit in practice).
inline constexpr std::int64_t kMaxConcurrentRolloutsLimit = 100'000;
// --crd-check-interval: 1s to 1h (one discovery request per interval while a CRD is missing).
inline constexpr core::DurationBounds kCrdCheckIntervalBounds{.min = std::chrono::seconds(1),
                                                              .max = std::chrono::hours(1)};

// Runs until SIGTERM/SIGINT. Logs go to io.err.
int runServeController(const ServeControllerOptions& options, Io& io);

Subcommand serveControllerCommand();

}  // namespace restarter::cli
