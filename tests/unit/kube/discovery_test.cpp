// API discovery of a custom resource (kube/discovery.hpp): served when its group version's
// discovery document lists it; not served, and no error, when the group version is unknown.
#include "restarter/kube/discovery.hpp"

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fakes.hpp"
#include "restarter/testing/fake_clock.hpp"

using restarter::core::ErrorKind;
using namespace restarter::kube;
using namespace restarter::kube::testing;
using nlohmann::json;

namespace {

struct DiscoveryFixture {
  restarter::testing::FakeClock clock;
  FakeProcessRunner runner;
  FakeTransport* transport = nullptr;
  std::unique_ptr<Client> client;
  DiscoveryFixture() {
    auto fake = std::make_unique<FakeTransport>();
    transport = fake.get();
    ConnectionConfig config;
    config.token = "t";
    client =
        std::make_unique<Client>(std::move(fake), makeAuthenticator(config, clock, runner), "default", clock);
  }
};

std::string resourceList(const json& resources) {
  return json{{"kind", "APIResourceList"},
              {"apiVersion", "v1"},
              {"groupVersion", "argoproj.io/v1alpha1"},
              {"resources", resources}}
      .dump();
}

}  // namespace

TEST_CASE("discovery: a resource listed in its group version is served", "[kube][discovery]") {
  DiscoveryFixture f;
  f.transport->push(ok(resourceList(json::array({{{"name", "analysisruns"}, {"kind", "AnalysisRun"}},
                                                 {{"name", "rollouts"}, {"kind", "Rollout"}},
                                                 {{"name", "rollouts/status"}, {"kind", "Rollout"}}}))));
  auto served = resourceServed(*f.client, resources::rollouts());
  REQUIRE(served);
  CHECK(*served);
  REQUIRE(f.transport->requests().size() == 1);
  CHECK(f.transport->requests()[0].path == "/apis/argoproj.io/v1alpha1");
}

TEST_CASE("discovery: an unknown group version or a list without the resource is not served",
          "[kube][discovery]") {
  DiscoveryFixture f;
  f.transport->push(
      status(404, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404})"));
  auto absent = resourceServed(*f.client, resources::rollouts());
  REQUIRE(absent);
  CHECK_FALSE(*absent);
  f.transport->push(ok(resourceList(json::array({{{"name", "experiments"}}, "rollouts", {{"name", 7}}}))));
  auto other = resourceServed(*f.client, resources::rollouts());
  REQUIRE(other);
  CHECK_FALSE(*other);
}

TEST_CASE("discovery: an answer that is no resource list or a failure is an error", "[kube][discovery]") {
  DiscoveryFixture f;
  f.transport->push(ok("not json"));
  CHECK(resourceServed(*f.client, resources::rollouts()).error().kind == ErrorKind::InvalidInput);
  f.transport->push(ok(R"({"kind":"APIResourceList"})"));
  CHECK(resourceServed(*f.client, resources::rollouts()).error().kind == ErrorKind::InvalidInput);
  f.transport->push(ok("[]"));
  CHECK(resourceServed(*f.client, resources::rollouts()).error().kind == ErrorKind::InvalidInput);
  f.transport->push(
      status(403, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403})"));
  CHECK(resourceServed(*f.client, resources::rollouts()).error().kind == ErrorKind::Forbidden);
  // A document nested past the parser's depth limit is refused before anything is built.
  CHECK(listsResource(std::string(100000, '['), resources::rollouts()).error().kind == ErrorKind::InvalidInput);
}
