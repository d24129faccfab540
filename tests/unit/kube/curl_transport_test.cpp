#include <chrono>

#include <catch2/catch.hpp>

#include "restarter/kube/transport.hpp"

using restarter::core::ErrorKind;
using namespace restarter::kube;
using namespace std::chrono_literals;

// Loopback only: port 1 on 127.0.0.1 has no listener, so the connection is refused at once.
TEST_CASE("an unreachable server is a clear Unavailable error within the connect timeout", "[kube][curl]") {
  ConnectionConfig config;
  config.server = "https://127.0.0.1:1";
  TransportOptions options;
  options.connectTimeout = 2s;
  auto transport = makeCurlTransport(config, options);
  REQUIRE(transport.ok());
  Request request;
  request.path = "/version";
  auto start = std::chrono::steady_clock::now();
  auto response = (*transport)->send(request);
  REQUIRE_FALSE(response.ok());
  CHECK(std::chrono::steady_clock::now() - start < 3s);
  CHECK(response.error().kind == ErrorKind::Unavailable);
  CHECK(response.error().message.find("https://127.0.0.1:1") != std::string::npos);
}

TEST_CASE("a malformed server URL is refused up front", "[kube][curl]") {
  ConnectionConfig config;
  config.server = "https://[bad";
  auto transport = makeCurlTransport(config, TransportOptions{});
  REQUIRE_FALSE(transport.ok());
  CHECK(transport.error().kind == ErrorKind::InvalidInput);
}
