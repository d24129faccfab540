#include "restarter/obs/http_metrics.hpp"

namespace restarter::obs {

class HttpMetrics::ServerObserver final : public http::Observer {
 public:
  ServerObserver(HttpMetrics& families, const std::string& name)
      : connections_(families.connections_.with({name})), inFlight_(families.inFlight_.with({name})) {
    for (std::size_t i = 0; i < http::kCloseReasonCount; ++i) {
      closed_[i] = &families.closed_.with({name, http::closeReasonName(static_cast<http::CloseReason>(i))});
    }
    for (std::size_t i = 0; i < http::kRejectReasonCount; ++i) {
      rejected_[i] =
          &families.rejected_.with({name, http::rejectReasonName(static_cast<http::RejectReason>(i))});
    }
  }

  void connectionOpened() override { connections_.inc(); }
  void connectionClosed(http::CloseReason reason) override {
    // The count first: whoever sees the gauge drop sees the reason counted.
    closed_[static_cast<std::size_t>(reason)]->inc();
    if (reason != http::CloseReason::RefusedAtCap && reason != http::CloseReason::RefusedSourceShare) {
      connections_.dec();
    }
  }
  void requestRejected(http::RejectReason reason) override {
    rejected_[static_cast<std::size_t>(reason)]->inc();
  }
  void inFlightBytesChanged(std::int64_t delta) override { inFlight_.inc(static_cast<double>(delta)); }

 private:
  Gauge& connections_;
  Gauge& inFlight_;
  std::array<Counter*, http::kCloseReasonCount> closed_{};
  std::array<Counter*, http::kRejectReasonCount> rejected_{};
};

HttpMetrics::HttpMetrics(Registry& registry, const std::string& prefix)
    : connections_(
          registry.gauge(prefix + "_http_connections", "HTTP connections open, by server.", {"server"})),
      closed_(registry.counter(
          prefix + "_http_connections_closed_total",
          "HTTP connections closed, by server and reason (deadlines, too slow requests, evictions "
          "and refusals at the connection caps included).",
          {"server", "reason"})),
      rejected_(
          registry.counter(prefix + "_http_requests_rejected_total",
                           "HTTP requests answered by the server itself with an error, by server and reason "
                           "(over_budget, source_over_budget and queue_full are 503).",
                           {"server", "reason"})),
      inFlight_(registry.gauge(prefix + "_http_in_flight_bytes",
                               "Bytes charged against the in-flight request budget, by server.", {"server"})) {}

HttpMetrics::~HttpMetrics() = default;

http::Observer& HttpMetrics::server(const std::string& name) {
  auto& slot = servers_[name];
  if (!slot) slot = std::make_unique<ServerObserver>(*this, name);
  return *slot;
}

}  // namespace restarter::obs
