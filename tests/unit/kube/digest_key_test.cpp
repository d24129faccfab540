// The digest key Secret during a rotation (docs/architecture.md, "Keyed digests"): the new key
// beside the previous one, written with the resourceVersion read; a second rotation refused; the
// previous key removed only if it is still the one expected; a broken previous key refused.
#include "restarter/kube/digest_key.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fakes.hpp"
#include "restarter/core/base64.hpp"
#include "restarter/testing/fake_clock.hpp"

using restarter::core::ErrorKind;
using namespace restarter::kube;
using namespace restarter::kube::testing;
using nlohmann::json;

namespace {

const std::string kOldKey(32, 'o');
const std::string kOlderKey(32, 'p');

struct KeyFixture {
  restarter::testing::FakeClock clock;
  FakeProcessRunner runner;
  FakeTransport* transport = nullptr;
  std::unique_ptr<Client> client;
  KeyFixture() {
    auto fake = std::make_unique<FakeTransport>();
    transport = fake.get();
    ConnectionConfig config;
    config.token = "t";
    client =
        std::make_unique<Client>(std::move(fake), makeAuthenticator(config, clock, runner), "default", clock);
  }
};

std::string keySecret(const json& data) {
  return json{{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"metadata", {{"name", "key"}, {"namespace", "sys"}, {"resourceVersion", "7"}}},
              {"type", "Opaque"},
              {"data", data}}
      .dump();
}

std::string keyB64(const std::string& bytes) { return restarter::core::base64Encode(bytes); }

}  // namespace

TEST_CASE("readDigestKey reads the previous key beside the key", "[kube][digest-key]") {
  KeyFixture f;
  f.transport->push(ok(keySecret({{"key", keyB64(kOldKey)}, {"previous", keyB64(kOlderKey)}})));
  auto key = readDigestKey(*f.client, "sys", "key");
  REQUIRE(key);
  CHECK(key->id() == restarter::core::DigestKey::fromBytes(kOldKey)->id());
  REQUIRE(key->previous() != nullptr);
  CHECK(key->previous()->id() == restarter::core::DigestKey::fromBytes(kOlderKey)->id());
  CHECK(key->previous()->previous() == nullptr);

  f.transport->push(ok(keySecret({{"key", keyB64(kOldKey)}})));
  auto alone = readDigestKey(*f.client, "sys", "key");
  REQUIRE(alone);
  CHECK(alone->previous() == nullptr);

  // A previous key of the wrong size (or no string) is an invalid Secret, not a key without one.
  f.transport->push(ok(keySecret({{"key", keyB64(kOldKey)}, {"previous", keyB64(std::string(31, 'x'))}})));
  auto broken = readDigestKey(*f.client, "sys", "key");
  REQUIRE_FALSE(broken);
  CHECK(broken.error().kind == ErrorKind::InvalidInput);
  CHECK(broken.error().message.find("data.previous must hold 32 bytes, holds 31") != std::string::npos);
  f.transport->push(ok(keySecret({{"key", keyB64(kOldKey)}, {"previous", 5}})));
  CHECK_FALSE(readDigestKey(*f.client, "sys", "key"));
}

TEST_CASE("rotateDigestKey keeps the current key as previous and writes with the version read",
          "[kube][digest-key]") {
  KeyFixture f;
  f.transport->push(ok(keySecret({{"key", keyB64(kOldKey)}})));
  json written;
  Scripted put = ok(keySecret({}));
  put.onServe = [&written](const Request& request) { written = json::parse(request.body); };
  f.transport->push(put);
  auto rotated = rotateDigestKey(*f.client, "sys", "key");
  REQUIRE(rotated);
  const auto requests = f.transport->requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[1].method == "PUT");
  CHECK(requests[1].path == "/api/v1/namespaces/sys/secrets/key");
  CHECK(written["metadata"]["resourceVersion"] == "7");
  CHECK(written["data"]["previous"] == keyB64(kOldKey));
  const auto fresh = restarter::core::base64Decode(written["data"]["key"].get<std::string>());
  REQUIRE(fresh);
  CHECK(fresh->size() == 32);
  CHECK(*fresh != kOldKey);
  CHECK(rotated->id() == restarter::core::DigestKey::fromBytes(*fresh)->id());
  REQUIRE(rotated->previous() != nullptr);
  CHECK(rotated->previous()->id() == restarter::core::DigestKey::fromBytes(kOldKey)->id());
}

TEST_CASE("a second rotation is refused while the previous key is kept", "[kube][digest-key]") {
  KeyFixture f;
  f.transport->push(ok(keySecret({{"key", keyB64(kOldKey)}, {"previous", keyB64(kOlderKey)}})));
  auto again = rotateDigestKey(*f.client, "sys", "key");
  REQUIRE_FALSE(again);
  CHECK(again.error().kind == ErrorKind::Conflict);
  CHECK(again.error().message.find("a rotation is under way") != std::string::npos);
  CHECK(f.transport->requests().size() == 1);  // nothing written
  // A Secret without a valid key is not rotated either (never overwritten).
  f.transport->push(ok(keySecret({{"key", keyB64(std::string(31, 'x'))}})));
  auto invalid = rotateDigestKey(*f.client, "sys", "key");
  REQUIRE_FALSE(invalid);
  CHECK(invalid.error().kind == ErrorKind::InvalidInput);
  CHECK(f.transport->requests().size() == 2);
}

TEST_CASE("finishDigestKeyRotation removes only the previous key it was told of", "[kube][digest-key]") {
  KeyFixture f;
  const std::string olderId = restarter::core::DigestKey::fromBytes(kOlderKey)->id();
  f.transport->push(ok(keySecret({{"key", keyB64(kOldKey)}, {"previous", keyB64(kOlderKey)}})));
  json written;
  Scripted put = ok(keySecret({{"key", keyB64(kOldKey)}}));
  put.onServe = [&written](const Request& request) { written = json::parse(request.body); };
  f.transport->push(put);
  auto finished = finishDigestKeyRotation(*f.client, "sys", "key", olderId);
  REQUIRE(finished);
  CHECK(finished->previous() == nullptr);
  CHECK(written["data"] == json{{"key", keyB64(kOldKey)}});
  CHECK(written["metadata"]["resourceVersion"] == "7");

  // Someone rotated again meanwhile: the previous key is another one; nothing is written.
  f.transport->push(ok(keySecret({{"key", keyB64(kOldKey)}, {"previous", keyB64(kOlderKey)}})));
  auto stale = finishDigestKeyRotation(*f.client, "sys", "key", "00000000");
  REQUIRE_FALSE(stale);
  CHECK(stale.error().kind == ErrorKind::Conflict);
  CHECK(f.transport->requests().size() == 3);
}
