#pragma once
// A small plain-HTTP server for /healthz, /readyz and /metrics on restarter::http (one I/O thread,
// no thread per connection). The serve subcommands run one for health and one for metrics, as
// controller-runtime does, so the two can bind different addresses. Handlers are cheap and run
// inline on the I/O thread: a slow or idle client costs a bounded slot, never a probe's answer.
//
// Thread-safety: handlers run on the server's I/O thread and must be thread-safe. start() and
// stop() are called from one owning thread.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "restarter/core/result.hpp"
#include "restarter/http/server.hpp"
#include "restarter/obs/metrics.hpp"

namespace restarter::obs {

struct BindAddress {
  std::string host;  // "" means every interface
  int port = 0;      // 0 means any free port
};

// Parses "host:port", ":port", "[v6]:port" or "0" (disabled: returns nullopt inside the result).
core::Result<std::optional<BindAddress>> parseBindAddress(std::string_view text);
// The text parseBindAddress reads back: "host:port", ":port", "[v6]:port", or "0" for nullopt.
std::string formatBindAddress(const std::optional<BindAddress>& address);

struct HttpResponse {
  int status = 200;
  std::string contentType = "text/plain; charset=utf-8";
  std::string body;
};

// Limits for a health or metrics port: only small GETs from kubelets and scrapers.
//   - 64 connections: a kubelet probes with a new connection each time, Prometheus keeps one or
//     two; the least-deserving (idle, or slow) one is evicted beyond that, so neither idle nor
//     slow floods can lock probes out.
//   - heads 8 KiB, bodies 1 KiB (a GET has none), 64 KiB in flight in all.
//   - head and body deadlines 5 s: a kubelet's probe times out after 1 s by default, a scrape after
//     10 s; no honest client needs 5 s to send a GET.
//   - idle 120 s, over Go's 90 s (Prometheus keeps its scrape connection open between scrapes).
//   - fair admission (http::Limits): at most 32 connections and 32 KiB of the budget per client
//     address (kubelet probes come from the node's address, an attacking pod has its own), 8
//     reserved slots for newcomers whose GET arrives at once, a request's bytes must arrive within
//     1 s of its first (a probe times out after 1 s), then at 4 KiB/s.
http::Limits endpointLimits();

struct EndpointOptions {
  http::Limits limits = endpointLimits();
  http::Observer* observer = nullptr;  // connection and rejection counts; must outlive the server
};

class EndpointServer {
 public:
  EndpointServer();  // endpointLimits(), no observer
  explicit EndpointServer(EndpointOptions options);
  ~EndpointServer();  // stops the server
  EndpointServer(const EndpointServer&) = delete;
  EndpointServer& operator=(const EndpointServer&) = delete;

  // Registers a GET handler. Call before start().
  void get(const std::string& path, std::function<HttpResponse()> handler);

  // Binds and starts serving on a background thread; returns the bound port. Unavailable with the
  // reason when the address cannot be bound.
  core::Result<int> start(const BindAddress& address);
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Routes: /healthz answers 200 "ok" while `live()` is true, /readyz 200 while `ready()` is true
// (503 with the reason otherwise: "not ready: " and `notReadyReason()`, or "caches are not synced
// yet" when it is empty or answers ""), as Kubernetes probes expect.
void addHealthRoutes(EndpointServer& server, std::function<bool()> live, std::function<bool()> ready,
                     std::function<std::string()> notReadyReason = {});
// Route: /metrics renders `registry` (which must outlive the server).
void addMetricsRoute(EndpointServer& server, const Registry& registry);

}  // namespace restarter::obs
