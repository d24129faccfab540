#include "restarter/obs/endpoints.hpp"

#include <charconv>
#include <chrono>
#include <vector>

namespace restarter::obs {

core::Result<std::optional<BindAddress>> parseBindAddress(std::string_view text) {
  if (text == "0") return std::optional<BindAddress>{};
  auto bad = [&](const char* why) {
    return core::makeError(core::ErrorKind::InvalidInput, "not a bind address (" + std::string(why) + "): \"" +
                                                              std::string(text) +
                                                              "\"; use host:port, :port, or 0 to disable");
  };
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("no port");
  std::string_view host = text.substr(0, colon);
  const std::string_view portText = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return bad("an IPv6 host needs brackets");
  }
  int port = -1;
  const auto [end, ec] = std::from_chars(portText.data(), portText.data() + portText.size(), port);
  if (ec != std::errc() || end != portText.data() + portText.size() || port < 0 || port > 65535) {
    return bad("port must be 0-65535");
  }
  return std::optional<BindAddress>{BindAddress{std::string(host), port}};
}

std::string formatBindAddress(const std::optional<BindAddress>& address) {
  if (!address) return "0";
  const bool v6 = address->host.find(':') != std::string::npos;
  return (v6 ? "[" + address->host + "]" : address->host) + ":" + std::to_string(address->port);
}

http::Limits endpointLimits() {
  http::Limits limits;
  limits.headTimeout = std::chrono::seconds(5);
  limits.bodyTimeout = std::chrono::seconds(5);
  limits.writeTimeout = std::chrono::seconds(10);
  limits.idleTimeout = std::chrono::seconds(120);
  limits.maxConnections = 64;
  limits.maxHeadBytes = 8 * 1024;
  limits.maxBodyBytes = 1024;
  limits.maxInFlightBytes = 64 * 1024;
  limits.maxConnectionsPerSource = 32;
  // A probe or a scrape sends its request at once on a new connection.
  limits.firstRequestTimeout = std::chrono::seconds(2);
  limits.receiveGrace = std::chrono::seconds(1);
  limits.minReceiveBytesPerSecond = 4 * 1024;
  limits.maxInFlightBytesPerSource = 32 * 1024;
  limits.inFlightReserveBytes = 8 * 1024;
  return limits;
}

struct EndpointServer::Impl {
  EndpointOptions options;
  std::vector<http::Route> routes;
  std::unique_ptr<http::Server> server;
};

EndpointServer::EndpointServer() : EndpointServer(EndpointOptions{}) {}

EndpointServer::EndpointServer(EndpointOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
}

EndpointServer::~EndpointServer() { stop(); }

void EndpointServer::get(const std::string& path, std::function<HttpResponse()> handler) {
  impl_->routes.push_back(http::Route{"GET", path,
                                      [handler = std::move(handler)](const http::Request&) {
                                        HttpResponse response = handler();
                                        return http::Response{response.status, std::move(response.contentType),
                                                              std::move(response.body), false, 0};
                                      },
                                      http::Dispatch::Inline, 1});
}

core::Result<int> EndpointServer::start(const BindAddress& address) {
  http::ServerOptions options;
  options.host = address.host;
  options.port = address.port;
  options.limits = impl_->options.limits;
  // One I/O thread: the handlers only read atomics or render the registry.
  options.ioThreads = 1;
  options.routes = impl_->routes;
  options.observer = impl_->options.observer;
  impl_->server = std::make_unique<http::Server>(std::move(options));
  return impl_->server->start();
}

void EndpointServer::stop() {
  if (impl_->server) impl_->server->stop();
}

void addHealthRoutes(EndpointServer& server, std::function<bool()> live, std::function<bool()> ready,
                     std::function<std::string()> notReadyReason) {
  server.get("/healthz", [live = std::move(live)] {
    return live() ? HttpResponse{200, "text/plain; charset=utf-8", "ok\n"}
                  : HttpResponse{503, "text/plain; charset=utf-8", "not live\n"};
  });
  server.get("/readyz", [ready = std::move(ready), reason = std::move(notReadyReason)] {
    if (ready()) return HttpResponse{200, "text/plain; charset=utf-8", "ok\n"};
    std::string why = reason ? reason() : std::string();
    if (why.empty()) why = "caches are not synced yet";
    return HttpResponse{503, "text/plain; charset=utf-8", "not ready: " + why + "\n"};
  });
}

void addMetricsRoute(EndpointServer& server, const Registry& registry) {
  server.get("/metrics", [&registry] {
    return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", registry.render()};
  });
}

}  // namespace restarter::obs
