// What explain-restart and status say about the digest key (docs/architecture.md, "Keyed
// digests"): the controller's advice when it cannot be read, a note while a rotation is under way.
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "restarter/core/base64.hpp"
#include "restarter/inspect/explain.hpp"
#include "restarter/kube/resource.hpp"
#include "restarter/testing/fake_api_server.hpp"
#include "restarter/testing/fake_clock.hpp"

using namespace restarter;
using nlohmann::json;

namespace {

class KeyNoAuth final : public kube::Authenticator {
 public:
  core::Result<kube::Credential> credential() override { return kube::Credential{}; }
  bool invalidate(const kube::Credential&) override { return false; }
};

struct KeyReader {
  KeyReader() {
    auto server = std::make_unique<testing::FakeApiServer>();
    api = server.get();
    client = std::make_unique<kube::Client>(std::move(server), std::make_unique<KeyNoAuth>(), "default", clock);
    judgement.digestKey.namespace_ = "sys";
  }
  void seedKey(const json& data) {
    api->seed(kube::resources::secrets(),
              {{"apiVersion", "v1"},
               {"kind", "Secret"},
               {"metadata", {{"name", "restarter-digest-key"}, {"namespace", "sys"}}},
               {"data", data}});
  }
  testing::FakeClock clock;
  testing::FakeApiServer* api = nullptr;
  std::unique_ptr<kube::Client> client;
  inspect::JudgementOptions judgement;
  std::ostringstream err;
};

}  // namespace

TEST_CASE("status and explain-restart say what is wrong with the digest key and what to do", "[inspect]") {
  KeyReader r;
  r.seedKey({{"key", core::base64Encode(std::string(31, 'k'))}});
  CHECK_FALSE(inspect::readJudgementDigestKey(*r.client, r.judgement, r.err));
  CHECK(r.err.str() ==
        "warning: digest key: secret sys/restarter-digest-key holds no valid digest key (data.key must hold 32 "
        "bytes, holds 31): put the 32-byte key back, or delete the Secret to have a new one made; contents are "
        "compared unkeyed, so a metadata-only change may be judged a change\n");
}

TEST_CASE("status and explain-restart judge under both keys during a rotation and say so", "[inspect]") {
  KeyReader r;
  r.seedKey({{"key", core::base64Encode(std::string(32, 'n'))},
             {"previous", core::base64Encode(std::string(32, 'o'))}});
  const auto key = inspect::readJudgementDigestKey(*r.client, r.judgement, r.err);
  REQUIRE(key);
  REQUIRE(key->previous() != nullptr);
  CHECK(key->previous()->id() == core::DigestKey::fromBytes(std::string(32, 'o'))->id());
  CHECK(r.err.str().find("note: digest key rotation under way (key " + key->id() + ", previous key " +
                         key->previous()->id() + ")") == 0);
}
