#include "restarter/certs/secret_data.hpp"

#include <catch2/catch.hpp>

using nlohmann::json;
using restarter::certs::decodeSecretData;
using restarter::certs::encodeSecretData;
using restarter::certs::SecretPems;
using restarter::certs::serviceDnsNames;

TEST_CASE("certificate material survives a round trip through a Secret's data", "[certs][secret_data]") {
  const SecretPems pems = {{restarter::certs::kCaCertKey, "-----BEGIN CERTIFICATE-----\nCA\n"},
                           {restarter::certs::kLeafCertKey, "leaf"},
                           {restarter::certs::kLeafKeyKey, std::string("key\0with a nul", 14)}};
  const json data = encodeSecretData(pems);
  CHECK(data["tls.crt"] == "bGVhZg==");
  CHECK(decodeSecretData(json{{"data", data}}) == pems);
  CHECK(encodeSecretData({}) == json::object());
}

TEST_CASE("a Secret's data that is not base64 text is left out and nothing else is lost",
          "[certs][secret_data]") {
  const json secret = {
      {"data", {{"ca.crt", "Q0E="}, {"tls.crt", "not base64!"}, {"tls.key", 42}, {"x", nullptr}}}};
  CHECK(decodeSecretData(secret) == SecretPems{{"ca.crt", "CA"}});
  for (const json& odd : {json(nullptr), json::array(), json{{"data", "text"}}, json{{"data", json::array()}},
                          json{{"kind", "Secret"}}}) {
    INFO(odd.dump());
    CHECK(decodeSecretData(odd).empty());
  }
}

TEST_CASE("a Service's DNS names run from the short name to the cluster domain", "[certs][secret_data]") {
  CHECK(serviceDnsNames("hook", "ns", "cluster.local") ==
        std::vector<std::string>{"hook", "hook.ns", "hook.ns.svc", "hook.ns.svc.cluster.local"});
}
