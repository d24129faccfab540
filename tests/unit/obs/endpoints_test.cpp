#include "restarter/obs/endpoints.hpp"

#include <atomic>

#include <httplib.h>
#include <catch2/catch.hpp>

using namespace restarter::obs;

TEST_CASE("bind addresses parse like controller-runtime's flags", "[endpoints]") {
  CHECK(parseBindAddress(":8080")->value().host.empty());
  CHECK(parseBindAddress(":8080")->value().port == 8080);
  CHECK(parseBindAddress("127.0.0.1:0")->value().host == "127.0.0.1");
  CHECK(parseBindAddress("[::1]:9443")->value().host == "::1");
  CHECK_FALSE(parseBindAddress("0")->has_value());
  for (const char* bad : {"", "8080", "host:", "host:http", ":65536", ":-1", "::1:80"}) {
    INFO(bad);
    CHECK_FALSE(parseBindAddress(bad).ok());
  }
}

TEST_CASE("a bind address formats as the text that parses back to it", "[endpoints]") {
  for (const char* text : {":8080", "127.0.0.1:0", "[::1]:9443", "0"}) {
    INFO(text);
    CHECK(formatBindAddress(*parseBindAddress(text)) == text);
  }
}

TEST_CASE("health and metrics routes answer on loopback", "[endpoints]") {
  Registry registry;
  registry.counter("restarter_writes_total", "Writes.").with().inc(7);
  std::atomic<bool> ready{false};
  EndpointServer server;
  addHealthRoutes(
      server, [] { return true; }, [&ready] { return ready.load(); });
  addMetricsRoute(server, registry);
  auto port = server.start(BindAddress{"127.0.0.1", 0});
  REQUIRE(port.ok());

  httplib::Client client("127.0.0.1", *port);
  auto healthz = client.Get("/healthz");
  REQUIRE(healthz);
  CHECK(healthz->status == 200);
  auto notReady = client.Get("/readyz");
  REQUIRE(notReady);
  CHECK(notReady->status == 503);
  ready = true;
  auto nowReady = client.Get("/readyz");
  REQUIRE(nowReady);
  CHECK(nowReady->status == 200);
  auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->get_header_value("Content-Type").rfind("text/plain; version=0.0.4", 0) == 0);
  CHECK(metrics->body.find("restarter_writes_total 7\n") != std::string::npos);
  auto missing = client.Get("/nope");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  server.stop();
}

TEST_CASE("readyz says why it is not ready", "[endpoints]") {
  std::string reason = "the digest key's namespace x does not exist: create namespace x";
  EndpointServer server;
  addHealthRoutes(
      server, [] { return true; }, [] { return false; }, [&reason] { return reason; });
  auto port = server.start(BindAddress{"127.0.0.1", 0});
  REQUIRE(port.ok());
  httplib::Client client("127.0.0.1", *port);
  auto notReady = client.Get("/readyz");
  REQUIRE(notReady);
  CHECK(notReady->status == 503);
  CHECK(notReady->body == "not ready: the digest key's namespace x does not exist: create namespace x\n");
  server.stop();
}

TEST_CASE("a taken port is a clear error", "[endpoints]") {
  EndpointServer first;
  auto port = first.start(BindAddress{"127.0.0.1", 0});
  REQUIRE(port.ok());
  EndpointServer second;
  auto clash = second.start(BindAddress{"127.0.0.1", *port});
  REQUIRE_FALSE(clash.ok());
  CHECK_THAT(clash.error().message, Catch::Contains("cannot listen on 127.0.0.1:"));
}
