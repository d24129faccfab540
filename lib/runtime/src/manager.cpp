#include "restarter/runtime/manager.hpp"

#include <utility>

namespace restarter::runtime {

namespace {

std::string describe(const obs::BindAddress& address, int port) {
  return (address.host.empty() ? std::string("0.0.0.0") : address.host) + ":" + std::to_string(port);
}

}  // namespace

Manager::Manager(ManagerOptions options, obs::Logger& logger, obs::Registry& registry)
    : options_(std::move(options)),
      logger_(logger),
      registry_(registry),
      http_(registry, options_.metricsPrefix),
      health_(obs::EndpointOptions{obs::endpointLimits(), &http_.server("health")}),
      metrics_(obs::EndpointOptions{obs::endpointLimits(), &http_.server("metrics")}),
      signals_(stop_, logger, options_.tick, options_.tickPeriod) {}

core::Status Manager::run(const Runnable& runnable) {
  const std::stop_token stop = stop_.get_token();
  if (runnable.start) {
    if (core::Status started = runnable.start(stop); !started) return started;
    if (stop.stop_requested()) return core::okStatus();
  }
  if (options_.healthBind) {
    // Not ready from the signal on, whatever the runnable says: a Service stops sending to a
    // process that is shutting down (docs/architecture.md, "Shutdown").
    obs::addHealthRoutes(
        health_, [] { return true; },
        [stop, ready = runnable.ready] { return !stop.stop_requested() && (!ready || ready()); },
        [stop, reason = runnable.notReadyReason] {
          if (stop.stop_requested()) return std::string("shutting down");
          return reason ? reason() : std::string();
        });
    auto port = health_.start(*options_.healthBind);
    if (!port) {
      logger_.error("cannot serve health endpoints", {{"error", port.error().describe()}});
      return std::move(port).error();
    }
    logger_.info("serving /healthz and /readyz", {{"address", describe(*options_.healthBind, *port)}});
  }
  if (options_.metricsBind) {
    obs::addMetricsRoute(metrics_, registry_);
    auto port = metrics_.start(*options_.metricsBind);
    if (!port) {
      logger_.error("cannot serve metrics", {{"error", port.error().describe()}});
      health_.stop();
      return std::move(port).error();
    }
    logger_.info("serving /metrics", {{"address", describe(*options_.metricsBind, *port)}});
  }
  core::Status status = runnable.run(stop);
  metrics_.stop();
  health_.stop();
  return status;
}

}  // namespace restarter::runtime
