#include "restarter/obs/endpoints.hpp"

#include <sys/socket.h>

#include <atomic>
#include <charconv>
#include <thread>

#include <httplib.h>

namespace restarter::obs {

core::Result<std::optional<BindAddress>> parseBindAddress(std::string_view text) {
  if (text == "0") return std::optional<BindAddress>{};
  auto bad = [&](const char* why) {
    return core::makeError(core::ErrorKind::InvalidInput,
                           "not a bind address (" + std::string(why) + "): \"" + std::string(text) +
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

struct EndpointServer::Impl {
  httplib::Server server;
  std::thread thread;
  std::atomic<bool> listenReturned{false};
};

EndpointServer::EndpointServer() : impl_(std::make_unique<Impl>()) {
  // cpp-httplib's default also sets SO_REUSEPORT, which lets a second process bind the same port
  // and silently take half the connections. Keep only SO_REUSEADDR (quick restarts).
  impl_->server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
}

EndpointServer::~EndpointServer() { stop(); }

void EndpointServer::get(const std::string& path, std::function<HttpResponse()> handler) {
  impl_->server.Get(path, [handler = std::move(handler)](const httplib::Request&, httplib::Response& res) {
    const HttpResponse response = handler();
    res.status = response.status;
    res.set_content(response.body, response.contentType.c_str());
  });
}

core::Result<int> EndpointServer::start(const BindAddress& address) {
  const std::string host = address.host.empty() ? "0.0.0.0" : address.host;
  int port = address.port;
  if (port == 0) {
    port = impl_->server.bind_to_any_port(host);
    if (port < 0) port = 0;
  } else if (!impl_->server.bind_to_port(host, port)) {
    port = 0;
  }
  if (port == 0) {
    return core::makeError(core::ErrorKind::Unavailable,
                           "cannot listen on " + host + ":" + std::to_string(address.port));
  }
  impl_->listenReturned = false;
  impl_->thread = std::thread([this] {
    impl_->server.listen_after_bind();
    impl_->listenReturned = true;
  });
  // httplib's stop() is a no-op until the listen loop runs, so a stop() right after start() would
  // leave the loop running forever. Wait for the loop (it starts at once) or its early return.
  while (!impl_->server.is_running() && !impl_->listenReturned) std::this_thread::yield();
  return port;
}

void EndpointServer::stop() {
  if (!impl_->thread.joinable()) return;
  impl_->server.stop();
  impl_->thread.join();
}

void addHealthRoutes(EndpointServer& server, std::function<bool()> live, std::function<bool()> ready) {
  server.get("/healthz", [live = std::move(live)] {
    return live() ? HttpResponse{200, "text/plain; charset=utf-8", "ok\n"}
                  : HttpResponse{503, "text/plain; charset=utf-8", "not live\n"};
  });
  server.get("/readyz", [ready = std::move(ready)] {
    return ready() ? HttpResponse{200, "text/plain; charset=utf-8", "ok\n"}
                   : HttpResponse{503, "text/plain; charset=utf-8", "not ready: caches are not synced yet\n"};
  });
}

void addMetricsRoute(EndpointServer& server, const Registry& registry) {
  server.get("/metrics", [&registry] {
    return HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", registry.render()};
  });
}

}  // namespace restarter::obs
