#include "restarter/controller/leader_election.hpp"

#include <catch2/catch.hpp>

#include "support.hpp"

using namespace restarter::controller;
using nlohmann::json;
using restarter::kube::testing::ok;
using restarter::kube::testing::status;
using namespace std::chrono_literals;

namespace {

std::string lease(const std::string& holder, const std::string& renew, const std::string& rv) {
  json spec = {{"leaseDurationSeconds", 15}, {"renewTime", renew}, {"leaseTransitions", 3}};
  if (!holder.empty()) spec["holderIdentity"] = holder;
  return json{{"apiVersion", "coordination.k8s.io/v1"},
              {"kind", "Lease"},
              {"metadata", {{"name", "restarter-controller"}, {"namespace", "ns"}, {"resourceVersion", rv}}},
              {"spec", spec}}
      .dump();
}

const char* kNotFound = R"({"kind":"Status","reason":"NotFound","message":"not found","code":404})";

struct Fixture {
  Fixture() : elector(*harness.client, options(), harness.clock, harness.logger) {}
  static LeaderElectionOptions options() {
    LeaderElectionOptions o;
    o.namespace_ = "ns";
    o.identity = "me";
    return o;
  }
  // Acquires the Lease (our own, read then renewed): two requests, the elector is leader.
  bool becomeLeader() {
    harness.transport->push(ok(lease("me", "t1", "5")));
    harness.transport->push(ok(lease("me", "t2", "6")));
    return elector.tryAcquireOrRenew();
  }
  restarter::controller::testing::Harness harness;
  LeaderElector elector;
};

}  // namespace

TEST_CASE("a missing Lease is created and held", "[controller][leader]") {
  Fixture f;
  f.harness.transport->push(status(404, kNotFound));
  f.harness.transport->push(ok(lease("me", "t", "1")));
  CHECK(f.elector.tryAcquireOrRenew());
  auto requests = f.harness.transport->requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[1].method == "POST");
  const json spec = json::parse(requests[1].body)["spec"];
  CHECK(spec["holderIdentity"] == "me");
  // Wall time, as metav1.MicroTime: six fraction digits (the fake clock starts at 2027-01-15T08:00Z).
  CHECK(spec["acquireTime"] == "2027-01-15T08:00:00.000000Z");
  CHECK(spec["renewTime"] == "2027-01-15T08:00:00.000000Z");
}

TEST_CASE("a Lease another replica renews is not taken but a stale one is", "[controller][leader]") {
  Fixture f;
  f.harness.transport->push(ok(lease("other", "t1", "5")));
  CHECK_FALSE(f.elector.tryAcquireOrRenew());
  f.harness.clock.advance(10s);
  f.harness.transport->push(ok(lease("other", "t2", "6")));  // renewed meanwhile
  CHECK_FALSE(f.elector.tryAcquireOrRenew());
  f.harness.clock.advance(16s);
  f.harness.transport->push(ok(lease("other", "t2", "6")));  // unchanged for a whole duration
  f.harness.transport->push(ok(lease("me", "t3", "7")));
  CHECK(f.elector.tryAcquireOrRenew());
  auto requests = f.harness.transport->requests();
  REQUIRE(requests.size() == 4);
  CHECK(requests[3].method == "PUT");
  json body = json::parse(requests[3].body);
  CHECK(body["metadata"]["resourceVersion"] == "6");
  CHECK(body["spec"]["holderIdentity"] == "me");
  CHECK(body["spec"]["leaseTransitions"] == 4);
}

TEST_CASE("a released Lease is taken at once and a conflict loses", "[controller][leader]") {
  Fixture f;
  f.harness.transport->push(ok(lease("", "t1", "5")));
  f.harness.transport->push(
      status(409, R"({"kind":"Status","reason":"Conflict","message":"changed","code":409})"));
  CHECK_FALSE(f.elector.tryAcquireOrRenew());
  f.harness.transport->push(ok(lease("", "t1", "6")));
  f.harness.transport->push(ok(lease("me", "t2", "7")));
  CHECK(f.elector.tryAcquireOrRenew());
}

TEST_CASE("release clears the holder", "[controller][leader]") {
  Fixture f;
  f.harness.transport->push(ok(lease("me", "t1", "5")));
  f.harness.transport->push(ok(lease("", "t2", "6")));
  f.elector.release();
  auto requests = f.harness.transport->requests();
  REQUIRE(requests.size() == 2);
  json body = json::parse(requests[1].body);
  CHECK_FALSE(body["spec"].contains("holderIdentity"));
  CHECK(body["spec"]["leaseDurationSeconds"] == 1);
}

TEST_CASE("a leader that cannot renew for the renew deadline gives up and stops renewing",
          "[controller][leader]") {
  Fixture f;
  REQUIRE(f.becomeLeader());
  const auto start = f.harness.clock.monotonicNow();
  // Every renewal fails (the apiserver answers 500): renewals every retryPeriod (2 s) until the
  // renew deadline (10 s) has passed since the last success, then hold() reports the loss.
  for (int i = 0; i < 10; ++i) {
    f.harness.transport->push(
        status(500, R"({"kind":"Status","reason":"InternalError","message":"etcd","code":500})"));
  }
  std::stop_source never;
  CHECK_FALSE(f.elector.hold(never.get_token()));
  CHECK(f.harness.clock.monotonicNow() - start == 10s);
  CHECK(f.harness.transport->requests().size() == 2 + 5);  // five failed renewals, no more
  CHECK(f.harness.logs.str().find("ERROR leadership lost") != std::string::npos);
}

TEST_CASE("a leader whose Lease another replica holds gives up at the next renewal", "[controller][leader]") {
  Fixture f;
  REQUIRE(f.becomeLeader());
  f.harness.transport->push(ok(lease("other", "t9", "8")));
  std::stop_source never;
  CHECK_FALSE(f.elector.hold(never.get_token()));
  auto requests = f.harness.transport->requests();
  REQUIRE(requests.size() == 3);
  CHECK(requests[2].method == "GET");  // no attempt to write the Lease back
  CHECK(f.harness.logs.str().find("holder=other") != std::string::npos);
}

TEST_CASE("a leader stopped while renewing keeps the Lease for release", "[controller][leader]") {
  Fixture f;
  REQUIRE(f.becomeLeader());
  std::stop_source stop;
  stop.request_stop();
  CHECK(f.elector.hold(stop.get_token()));
  CHECK(f.harness.transport->requests().size() == 2);
}

TEST_CASE("a stuck Lease request cannot keep a holder working past the lease duration",
          "[controller][leader]") {
  LeaderElectionOptions defaults;
  const auto timeout = leaseRequestTimeout(defaults);
  CHECK(timeout == 2s);
  // An attempt (GET and PUT) that starts just before the renew deadline ends by then + 2 timeouts.
  CHECK(defaults.renewDeadline + 2 * timeout < defaults.leaseDuration);
  LeaderElectionOptions fast;
  fast.renewDeadline = 4s;
  fast.retryPeriod = 2s;
  fast.leaseDuration = 7s;
  CHECK(leaseRequestTimeout(fast) == 1s);
  CHECK(fast.renewDeadline + 2 * leaseRequestTimeout(fast) < fast.leaseDuration);
}
