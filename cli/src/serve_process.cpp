#include "serve_process.hpp"

#include <ctime>
#include <utility>

#include <cxxopts.hpp>

namespace restarter::cli {

SignalWaiter::SignalWaiter(std::stop_source source, obs::Logger& logger, std::function<void()> tick,
                           std::chrono::milliseconds period) {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set_, &previous_);
  thread_ = std::thread([this, source, &logger, tick = std::move(tick), period]() mutable {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(period);
    const timespec wait{static_cast<time_t>(seconds.count()),
                        static_cast<long>(std::chrono::nanoseconds(period - seconds).count())};
    while (!done_) {
      if (tick) tick();
      const int signal = sigtimedwait(&set_, nullptr, &wait);
      if ((signal == SIGINT || signal == SIGTERM) && !done_) {
        if (received_ == 0) {
          logger.info("signal received; shutting down", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
          received_ = signal;
        }
        source.request_stop();
      }
    }
  });
}

SignalWaiter::~SignalWaiter() {
  done_ = true;
  pthread_kill(thread_.native_handle(), SIGTERM);  // wakes sigtimedwait (blocked, so not delivered)
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

namespace {

std::string describe(const obs::BindAddress& address, int port) {
  return (address.host.empty() ? std::string("0.0.0.0") : address.host) + ":" + std::to_string(port);
}

}  // namespace

bool startEndpoints(const std::optional<obs::BindAddress>& healthBind,
                    const std::optional<obs::BindAddress>& metricsBind, std::function<bool()> ready,
                    const obs::Registry& registry, obs::Logger& logger, Endpoints& endpoints) {
  obs::EndpointServer& health = endpoints.health;
  obs::EndpointServer& metrics = endpoints.metrics;
  if (healthBind) {
    obs::addHealthRoutes(health, [] { return true; }, std::move(ready));
    auto port = health.start(*healthBind);
    if (!port) {
      logger.error("cannot serve health endpoints", {{"error", port.error().describe()}});
      return false;
    }
    logger.info("serving /healthz and /readyz", {{"address", describe(*healthBind, *port)}});
  }
  if (metricsBind) {
    obs::addMetricsRoute(metrics, registry);
    auto port = metrics.start(*metricsBind);
    if (!port) {
      logger.error("cannot serve metrics", {{"error", port.error().describe()}});
      health.stop();
      return false;
    }
    logger.info("serving /metrics", {{"address", describe(*metricsBind, *port)}});
  }
  return true;
}

std::optional<std::string> parseLogFlags(const cxxopts::ParseResult& flags, obs::LogFormat& format,
                                         obs::LogLevel& level) {
  auto parsedFormat = obs::parseLogFormat(flags["log-format"].as<std::string>());
  if (!parsedFormat) return "--log-format: " + parsedFormat.error().message;
  auto parsedLevel = obs::parseLogLevel(flags["log-level"].as<std::string>());
  if (!parsedLevel) return "--log-level: " + parsedLevel.error().message;
  format = *parsedFormat;
  level = *parsedLevel;
  return std::nullopt;
}

}  // namespace restarter::cli
