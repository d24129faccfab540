#include "restarter/obs/http_metrics.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include <httplib.h>
#include <catch2/catch.hpp>

#include "restarter/obs/endpoints.hpp"

using namespace restarter::obs;
using namespace std::chrono_literals;

namespace {

template <typename Predicate>
bool waitUntil(Predicate predicate) {
  const auto end = std::chrono::steady_clock::now() + 30s;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// A loopback connection that sends `text` and then nothing (a slow or idle client).
struct Stalled {
  int fd = -1;
  Stalled(int port, const std::string& text) {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 && !text.empty()) {
      (void)!send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    }
  }
  ~Stalled() { close(fd); }
};

}  // namespace

TEST_CASE("slow and idle clients do not keep health probes from being answered", "[http_metrics]") {
  Registry registry;
  HttpMetrics http(registry, "restarter_test");
  EndpointServer server(EndpointOptions{endpointLimits(), &http.server("health")});
  addHealthRoutes(
      server, [] { return true; }, [] { return true; });
  auto port = server.start(BindAddress{"127.0.0.1", 0});
  REQUIRE(port.ok());
  // Twice what took the old thread-per-connection server down: half in the middle of a head,
  // half idle.
  std::vector<std::unique_ptr<Stalled>> stalled;
  for (int i = 0; i < 16; ++i)
    stalled.push_back(std::make_unique<Stalled>(*port, i % 2 == 0 ? "GET /hea" : ""));
  REQUIRE(waitUntil([&] {
    return registry.render().find("restarter_test_http_connections{server=\"health\"} 16\n") !=
           std::string::npos;
  }));
  httplib::Client client("127.0.0.1", *port);
  auto healthz = client.Get("/healthz");
  REQUIRE(healthz);
  CHECK(healthz->status == 200);
  client.stop();
  stalled.clear();
  // Every connection closed is counted by reason, and the gauge returns to 0.
  REQUIRE(waitUntil([&] {
    return registry.render().find("restarter_test_http_connections{server=\"health\"} 0\n") !=
           std::string::npos;
  }));
  const std::string text = registry.render();
  CHECK(text.find("restarter_test_http_connections_closed_total{server=\"health\",reason=\"peer\"} 17\n") !=
        std::string::npos);
  CHECK(text.find(
            "restarter_test_http_connections_closed_total{server=\"health\",reason=\"head_deadline\"} 0\n") !=
        std::string::npos);
  CHECK(
      text.find("restarter_test_http_requests_rejected_total{server=\"health\",reason=\"over_budget\"} 0\n") !=
      std::string::npos);
  CHECK(text.find("restarter_test_http_in_flight_bytes{server=\"health\"} 0\n") != std::string::npos);
}

TEST_CASE("rejections are counted by reason", "[http_metrics]") {
  Registry registry;
  HttpMetrics http(registry, "restarter_test");
  EndpointServer server(EndpointOptions{endpointLimits(), &http.server("metrics")});
  addMetricsRoute(server, registry);
  auto port = server.start(BindAddress{"127.0.0.1", 0});
  REQUIRE(port.ok());
  httplib::Client client("127.0.0.1", *port);
  auto missing = client.Get("/nope");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  // More than a health port takes in a body.
  auto big = client.Post("/metrics", std::string(4096, 'x'), "text/plain");
  REQUIRE(big);
  CHECK(big->status == 413);
  client.stop();
  const std::string text = registry.render();
  CHECK(text.find("restarter_test_http_requests_rejected_total{server=\"metrics\",reason=\"not_found\"} 1\n") !=
        std::string::npos);
  CHECK(text.find(
            "restarter_test_http_requests_rejected_total{server=\"metrics\",reason=\"body_too_large\"} 1\n") !=
        std::string::npos);
}
