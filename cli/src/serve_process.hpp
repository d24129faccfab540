#pragma once
// What serve-controller and serve-webhook share as long-running processes: SIGINT/SIGTERM
// handling, the health and metrics endpoints, and the --log-format/--log-level flags. Internal to
// restarter::cli (not a public header).

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "restarter/obs/endpoints.hpp"
#include "restarter/obs/http_metrics.hpp"
#include "restarter/obs/log.hpp"
#include "restarter/obs/metrics.hpp"

namespace cxxopts {
class ParseResult;
}  // namespace cxxopts

namespace restarter::cli {

// Blocks SIGINT and SIGTERM in the constructing thread, so in every thread started after it
// (construct it before any other thread), and takes them on a thread of its own: the first one is
// logged ("signal received; shutting down") and requests stop on `source`. `tick`, when given,
// runs on that thread every `period` until destruction (e.g. returning free memory). The
// destructor wakes and joins the thread and restores the previous mask.
class SignalWaiter {
 public:
  SignalWaiter(std::stop_source source, obs::Logger& logger, std::function<void()> tick = {},
               std::chrono::milliseconds period = std::chrono::milliseconds(200));
  ~SignalWaiter();
  SignalWaiter(const SignalWaiter&) = delete;
  SignalWaiter& operator=(const SignalWaiter&) = delete;

  int received() const { return received_; }  // the signal taken, 0 while none

 private:
  sigset_t set_{};
  sigset_t previous_{};
  std::atomic<bool> done_{false};
  std::atomic<int> received_{0};
  std::thread thread_;
};

// The health and metrics servers of a serve subcommand, their connections counted in `http` as
// servers "health" and "metrics". `http` must outlive them.
struct Endpoints {
  explicit Endpoints(obs::HttpMetrics& http)
      : health(obs::EndpointOptions{obs::endpointLimits(), &http.server("health")}),
        metrics(obs::EndpointOptions{obs::endpointLimits(), &http.server("metrics")}) {}
  obs::EndpointServer health;
  obs::EndpointServer metrics;
};

// Starts /healthz and /readyz on `healthBind` and /metrics on `metricsBind` (each only when set),
// logging "serving /healthz and /readyz address=H:P" and "serving /metrics address=H:P" (scripts
// read the bound port from these lines). On failure logs the error, stops what it started and
// returns false.
bool startEndpoints(const std::optional<obs::BindAddress>& healthBind,
                    const std::optional<obs::BindAddress>& metricsBind, std::function<bool()> ready,
                    const obs::Registry& registry, obs::Logger& logger, Endpoints& endpoints);

// Reads --log-format and --log-level; the usage error ("--log-level: ...") when one is invalid.
std::optional<std::string> parseLogFlags(const cxxopts::ParseResult& flags, obs::LogFormat& format,
                                         obs::LogLevel& level);

}  // namespace restarter::cli
