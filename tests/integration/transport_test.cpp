// The libcurl transport against the real apiserver: HTTP/2 negotiated, connections reused,
// tls-server-name, insecure-skip-tls-verify, and a CA that does not match.

#include <catch2/catch.hpp>

#include "restarter/kube/client.hpp"
#include "support.hpp"

using namespace restarter;
using namespace restarter::integration;
using namespace std::chrono_literals;

namespace {

core::Result<kube::Response> version(kube::Transport& transport, const kube::ConnectionConfig& config) {
  kube::Request request;
  request.path = "/version";
  request.clientCertPem = config.clientCertPem;
  request.clientKeyPem = config.clientKeyPem;
  return transport.send(request);
}

}  // namespace

TEST_CASE("HTTP/2 is negotiated and the connection is kept alive and reused", "[integration][transport]") {
  auto config = adminConfig();
  auto transport = kube::makeCurlTransport(config, kube::TransportOptions{});
  REQUIRE(transport.ok());
  auto first = version(**transport, config);
  REQUIRE(first.ok());
  CHECK(first->status == 200);
  CHECK(first->httpVersion == 2);
  CHECK(first->newConnections == 1);
  for (int i = 0; i < 5; ++i) {
    auto again = version(**transport, config);
    REQUIRE(again.ok());
    CHECK(again->newConnections == 0);  // reused
  }
}

TEST_CASE("tls-server-name picks the name verified in the server certificate", "[integration][transport]") {
  auto config = adminConfig();
  REQUIRE(config.server.find("127.0.0.1") != std::string::npos);
  config.tlsServerName = "kubernetes";  // a DNS name of the apiserver certificate
  auto good = kube::makeCurlTransport(config, kube::TransportOptions{});
  REQUIRE(good.ok());
  auto answer = version(**good, config);
  REQUIRE(answer.ok());
  CHECK(answer->status == 200);

  config.tlsServerName = "not-in-the-certificate.invalid";
  auto bad = kube::makeCurlTransport(config, kube::TransportOptions{});
  REQUIRE(bad.ok());
  auto refused = version(**bad, config);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().kind == core::ErrorKind::Unavailable);
}

TEST_CASE("without the CA the server is refused unless insecure-skip-tls-verify", "[integration][transport]") {
  auto config = adminConfig();
  config.caPem = config.clientCertPem;  // a certificate that did not sign the server's
  auto wrongCa = kube::makeCurlTransport(config, kube::TransportOptions{});
  REQUIRE(wrongCa.ok());
  auto refused = version(**wrongCa, config);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().kind == core::ErrorKind::Unavailable);

  config.caPem.clear();
  config.insecureSkipTlsVerify = true;
  auto insecure = kube::makeCurlTransport(config, kube::TransportOptions{});
  REQUIRE(insecure.ok());
  auto answer = version(**insecure, config);
  REQUIRE(answer.ok());
  CHECK(answer->status == 200);
}
