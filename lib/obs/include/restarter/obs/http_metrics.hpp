#pragma once
// Prometheus metrics of a process's HTTP servers (restarter::http): one set of families per
// process, one `server` label value per server (e.g. webhook, health, metrics).
//
//   <prefix>_http_connections{server}                      gauge: connections open now
//   <prefix>_http_connections_closed_total{server,reason}  counter: by http::closeReasonName
//                                                           (head_deadline, too_slow,
//                                                           first_request_deadline,
//                                                           evicted_idle, evicted_unserved,
//                                                           evicted_slow, preempted,
//                                                           refused_at_cap,
//                                                           refused_source_share, ...)
//   <prefix>_http_requests_rejected_total{server,reason}   counter: answered by the server itself,
//                                                           by http::rejectReasonName
//                                                           (over_budget, source_over_budget
//                                                           and queue_full are 503)
//   <prefix>_http_in_flight_bytes{server}                  gauge: bytes charged against the
//                                                           in-flight budget
//
// Every series of a server exists (at 0) from server() on, so alerts see them before the first
// event. Thread-safety: server() from the owning thread before the servers start; the observers it
// returns are thread-safe (atomic metrics, looked up once).

#include <array>
#include <map>
#include <memory>
#include <string>

#include "restarter/http/server.hpp"
#include "restarter/obs/metrics.hpp"

namespace restarter::obs {

class HttpMetrics {
 public:
  // Registers the families in `registry` (which must outlive this) under `prefix`, e.g.
  // "restarter_webhook".
  HttpMetrics(Registry& registry, const std::string& prefix);
  ~HttpMetrics();
  HttpMetrics(const HttpMetrics&) = delete;
  HttpMetrics& operator=(const HttpMetrics&) = delete;

  // The observer for the server labeled `name` (created once; valid as long as this object).
  http::Observer& server(const std::string& name);

 private:
  class ServerObserver;
  Family<Gauge>& connections_;
  Family<Counter>& closed_;
  Family<Counter>& rejected_;
  Family<Gauge>& inFlight_;
  std::map<std::string, std::unique_ptr<ServerObserver>> servers_;
};

}  // namespace restarter::obs
