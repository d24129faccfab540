#pragma once
// The one runtime of serve-controller and serve-webhook, in the spirit of controller-runtime's
// Manager and its Runnables: signals, /healthz and /readyz, /metrics, and one start/stop order.
//
//   Manager(...)        blocks SIGINT/SIGTERM (construct it before any thread it must cover)
//   run(runnable):
//     1. runnable.start(stop)   e.g. the webhook's first certificate and its HTTPS listener
//     2. the health endpoint (ready = runnable.ready until a signal, then never), then the
//        metrics endpoint
//     3. runnable.run(stop)     until a signal requests stop (or it fails)
//     4. metrics and health endpoints stopped
//
// A signal during start ends the run at once, successfully. The endpoints log
// "serving /healthz and /readyz address=H:P" and "serving /metrics address=H:P" (scripts read the
// bound port from these lines). Thread-safety: one owning thread calls run(); everything the
// runnable does on other threads is its own.

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "restarter/core/result.hpp"
#include "restarter/obs/endpoints.hpp"
#include "restarter/obs/http_metrics.hpp"
#include "restarter/obs/log.hpp"
#include "restarter/obs/metrics.hpp"
#include "restarter/runtime/signals.hpp"

namespace restarter::runtime {

// What a serve command runs: its parts are functions, so controller and webhook need not know this
// module (docs/architecture.md, "Modules").
struct Runnable {
  // Before the endpoints start; empty: nothing to do. A failure ends the run.
  std::function<core::Status(std::stop_token)> start;
  // /readyz; called on the health endpoint's threads.
  std::function<bool()> ready;
  // /readyz's 503 body while not ready (empty, or ""): "caches are not synced yet"); the same threads.
  std::function<std::string()> notReadyReason;
  // Until stop is requested; returns after its own work has stopped.
  std::function<core::Status(std::stop_token)> run;
};

struct ManagerOptions {
  std::optional<obs::BindAddress> healthBind;   // nullopt: no /healthz and /readyz
  std::optional<obs::BindAddress> metricsBind;  // nullopt: no /metrics
  // Prefix of the servers' HTTP metrics ("restarter_controller", "restarter_webhook").
  std::string metricsPrefix;
  // Runs on the signal thread every tickPeriod (e.g. returning free memory); empty: none.
  std::function<void()> tick;
  std::chrono::milliseconds tickPeriod{200};
};

class Manager {
 public:
  // `logger` and `registry` must outlive the manager.
  Manager(ManagerOptions options, obs::Logger& logger, obs::Registry& registry);
  Manager(const Manager&) = delete;
  Manager& operator=(const Manager&) = delete;

  // The HTTP metrics of every server of the process; the runnable's own servers register here
  // (server(name)) before run().
  obs::HttpMetrics& http() { return http_; }
  // The signal taken, 0 while none.
  int signalReceived() const { return signals_.received(); }

  // Runs `runnable` in the order above. Errors: start's or run's, or the endpoints' (logged).
  core::Status run(const Runnable& runnable);

 private:
  ManagerOptions options_;
  obs::Logger& logger_;
  obs::Registry& registry_;
  std::stop_source stop_;
  obs::HttpMetrics http_;
  obs::EndpointServer health_;
  obs::EndpointServer metrics_;
  SignalWaiter signals_;  // last: its thread (and the tick) ends before the rest is destroyed
};

}  // namespace restarter::runtime
