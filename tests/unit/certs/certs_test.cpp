#include "restarter/certs/certs.hpp"

#include <catch2/catch.hpp>

using namespace restarter::certs;
using namespace std::chrono;
using restarter::core::ErrorKind;

namespace {

const TimePoint kNow = TimePoint{sys_days{year{2026} / 11 / 29}} + hours{12};

KeyedCertificate makeCa(KeyType type = KeyType::EcdsaP256, seconds validity = hours{24 * 365}) {
  CaRequest request;
  request.keyType = type;
  request.validity = validity;
  auto ca = createCa(request, kNow);
  REQUIRE(ca.ok());
  return ca.value();
}

ServingRequest servingFor(std::vector<std::string> dns, std::vector<std::string> ips = {}) {
  ServingRequest request;
  request.dnsNames = std::move(dns);
  request.ipAddresses = std::move(ips);
  request.validity = hours{24};
  return request;
}

}  // namespace

TEST_CASE("a CA is self-signed and marked as a CA", "[certs]") {
  const KeyedCertificate ca = makeCa();
  auto info = inspect(ca.certPem);
  REQUIRE(info.ok());
  REQUIRE(info->size() == 1);
  const CertificateInfo& c = info->front();
  CHECK(c.isCa);
  CHECK(c.subject == "CN=restarter-webhook-ca");
  CHECK(c.issuer == c.subject);
  CHECK(c.notBefore == kNow - kBackdate);
  CHECK(c.notAfter == kNow + hours{24 * 365});
  CHECK(c.sha256Fingerprint.size() == 64);
  CHECK(c.serialHex.size() == 32);
  CHECK(checkKeyMatches(ca.certPem, ca.keyPem).ok());
  CHECK(checkIssuedBy(ca.certPem, ca.certPem).ok());
  CHECK(ca.keyPem.find("-----BEGIN PRIVATE KEY-----") == 0);
}

TEST_CASE("serving certificates carry the SANs and chain to their CA", "[certs]") {
  for (KeyType type : {KeyType::EcdsaP256, KeyType::EcdsaP384, KeyType::Rsa2048}) {
    INFO(keyTypeName(type));
    const KeyedCertificate ca = makeCa(type);
    ServingRequest request =
        servingFor({"restarter-webhook.restarter.svc", "*.example.org"}, {"127.0.0.1", "::1"});
    request.keyType = type;
    auto leaf = issueServing(request, ca, kNow);
    REQUIRE(leaf.ok());
    auto info = inspect(leaf->certPem);
    REQUIRE(info.ok());
    const CertificateInfo& c = info->front();
    CHECK_FALSE(c.isCa);
    CHECK(c.subject == "CN=restarter-webhook.restarter.svc");
    CHECK(c.issuer == "CN=restarter-webhook-ca");
    CHECK(c.dnsNames == std::vector<std::string>{"restarter-webhook.restarter.svc", "*.example.org"});
    CHECK(c.ipAddresses == std::vector<std::string>{"127.0.0.1", "::1"});
    CHECK(c.notAfter == kNow + hours{24});
    CHECK(checkKeyMatches(leaf->certPem, leaf->keyPem).ok());
    CHECK(checkIssuedBy(leaf->certPem, ca.certPem).ok());
  }
}

TEST_CASE("a serving certificate never outlives its CA", "[certs]") {
  const KeyedCertificate ca = makeCa(KeyType::EcdsaP256, hours{2});
  auto leaf = issueServing(servingFor({"a.example"}), ca, kNow);
  REQUIRE(leaf.ok());
  CHECK(inspect(leaf->certPem)->front().notAfter == kNow + hours{2});
}

TEST_CASE("a certificate from another CA or with another key is rejected", "[certs]") {
  const KeyedCertificate ca = makeCa();
  const KeyedCertificate other = makeCa();
  auto leaf = issueServing(servingFor({"a.example"}), ca, kNow);
  REQUIRE(leaf.ok());
  CHECK_FALSE(checkIssuedBy(leaf->certPem, other.certPem).ok());
  CHECK_FALSE(checkKeyMatches(leaf->certPem, other.keyPem).ok());
  // A CA certificate with a foreign key cannot issue.
  auto mixed = issueServing(servingFor({"a.example"}), KeyedCertificate{ca.certPem, other.keyPem}, kNow);
  REQUIRE_FALSE(mixed.ok());
  CHECK(mixed.error().kind == ErrorKind::InvalidInput);
  // A serving certificate is not a CA.
  CHECK_FALSE(issueServing(servingFor({"b.example"}), *leaf, kNow).ok());
}

TEST_CASE("bad requests are error values", "[certs]") {
  const KeyedCertificate ca = makeCa();
  for (const ServingRequest& bad :
       {servingFor({}), servingFor({"bad name"}), servingFor({"a,DNS:evil.example"}),
        servingFor({"-leading.example"}), servingFor({std::string(64, 'a') + ".example"}),
        servingFor({}, {"300.1.1.1"}), servingFor({}, {"localhost"}), servingFor({""})}) {
    auto leaf = issueServing(bad, ca, kNow);
    REQUIRE_FALSE(leaf.ok());
    CHECK(leaf.error().kind == ErrorKind::InvalidInput);
  }
  ServingRequest zero = servingFor({"a.example"});
  zero.validity = seconds{0};
  CHECK_FALSE(issueServing(zero, ca, kNow).ok());
  CaRequest noName;
  noName.commonName = "";
  CHECK_FALSE(createCa(noName, kNow).ok());
}

TEST_CASE("malformed PEM is an error and leaves nothing behind", "[certs]") {
  const KeyedCertificate ca = makeCa();
  std::string truncated = ca.certPem.substr(0, ca.certPem.size() / 2);
  std::string corrupted = ca.certPem;
  corrupted[corrupted.size() / 2] = corrupted[corrupted.size() / 2] == 'A' ? 'B' : 'A';
  for (const std::string& bad : {std::string(), std::string("hello"), truncated,
                                 std::string("-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n"),
                                 std::string(1 << 20, '-')}) {
    auto info = inspect(bad);
    REQUIRE_FALSE(info.ok());
    CHECK(info.error().kind == ErrorKind::InvalidInput);
  }
  CHECK_FALSE(checkKeyMatches(ca.certPem, "not a key").ok());
  CHECK_FALSE(checkKeyMatches(ca.certPem, ca.certPem).ok());
  // The next good call is not confused by errors left on OpenSSL's queue.
  CHECK(inspect(ca.certPem).ok());
}

TEST_CASE("caBundle merging keeps unexpired CAs once and adds the new one", "[certs]") {
  const KeyedCertificate old = makeCa(KeyType::EcdsaP256, hours{48});
  const KeyedCertificate fresh = makeCa(KeyType::EcdsaP256, hours{24 * 365});

  auto both = mergeBundle(old.certPem, fresh.certPem, kNow);
  REQUIRE(both.ok());
  auto bothInfo = inspect(*both);
  REQUIRE(bothInfo.ok());
  REQUIRE(bothInfo->size() == 2);
  CHECK(bothInfo->at(0).sha256Fingerprint == inspect(old.certPem)->front().sha256Fingerprint);

  SECTION("merging again adds nothing") {
    auto again = mergeBundle(*both, fresh.certPem, kNow);
    REQUIRE(again.ok());
    CHECK(*again == *both);
  }
  SECTION("an expired CA is dropped") {
    auto later = mergeBundle(*both, fresh.certPem, kNow + hours{49});
    REQUIRE(later.ok());
    REQUIRE(inspect(*later)->size() == 1);
  }
  SECTION("an empty bundle starts with the new CA") {
    auto first = mergeBundle("", fresh.certPem, kNow);
    REQUIRE(first.ok());
    CHECK(inspect(*first)->size() == 1);
  }
  SECTION("a garbage bundle is an error, not silently replaced") {
    CHECK_FALSE(mergeBundle("-----BEGIN CERTIFICATE-----\nxx\n", fresh.certPem, kNow).ok());
  }
}

TEST_CASE("key types parse from their names", "[certs]") {
  CHECK(*parseKeyType("ecdsa-p256") == KeyType::EcdsaP256);
  CHECK(*parseKeyType("rsa-4096") == KeyType::Rsa4096);
  CHECK_FALSE(parseKeyType("dsa").ok());
}
