#include "restarter/controller/leader_election.hpp"

#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace leader_election_test {

using namespace restarter::controller;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// The Lease `holder` (none when empty) last renewed at `renew`, as a replica writes it.
json lease(const std::string& holder, const std::string& renew) {
  json spec = {{"leaseDurationSeconds", 15}, {"renewTime", renew}, {"leaseTransitions", 3}};
  if (!holder.empty()) spec["holderIdentity"] = holder;
  return json{{"apiVersion", "coordination.k8s.io/v1"},
              {"kind", "Lease"},
              {"metadata", {{"name", "restarter-controller"}, {"namespace", "ns"}}},
              {"spec", spec}};
}

// The apiserver failing (etcd unavailable).
restarter::kube::Response internalError() {
  return {500, {}, R"({"kind":"Status","reason":"InternalError","message":"etcd","code":500})"};
}

struct Fixture {
  Fixture() : harness(false), elector(*harness.client, options(), harness.clock, harness.logger) {}
  static LeaderElectionOptions options() {
    LeaderElectionOptions o;
    o.namespace_ = "ns";
    o.identity = "me";
    return o;
  }
  // Another replica (or our previous run, as `holder`) writes the Lease; returns it as stored.
  json write(const std::string& holder, const std::string& renew) {
    return harness.api->put(restarter::kube::resources::leases(), lease(holder, renew));
  }
  json stored() const {
    auto stored = harness.api->object(restarter::kube::resources::leases(), "ns", "restarter-controller");
    REQUIRE(stored);
    return *stored;
  }
  std::vector<restarter::kube::Request> requests() const { return harness.api->requests(); }
  // Acquires the Lease (our own, read then renewed): two requests, the elector is leader.
  bool becomeLeader() {
    write("me", "t1");
    return elector.tryAcquireOrRenew();
  }
  restarter::controller::testing::Harness harness;
  LeaderElector elector;
};

}  // namespace

TEST_CASE("a missing Lease is created and held", "[controller][leader]") {
  Fixture f;
  CHECK(f.elector.tryAcquireOrRenew());
  auto requests = f.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[1].method == "POST");
  const json spec = json::parse(requests[1].body)["spec"];
  CHECK(spec["holderIdentity"] == "me");
  // Wall time, as metav1.MicroTime: six fraction digits (the fake clock starts at 2027-01-15T08:00Z).
  CHECK(spec["acquireTime"] == "2027-01-15T08:00:00.000000Z");
  CHECK(spec["renewTime"] == "2027-01-15T08:00:00.000000Z");
  CHECK(f.stored()["spec"]["holderIdentity"] == "me");
}

TEST_CASE("a Lease another replica renews is not taken but a stale one is", "[controller][leader]") {
  Fixture f;
  f.write("other", "t1");
  CHECK_FALSE(f.elector.tryAcquireOrRenew());
  f.harness.clock.advance(10s);
  const json renewed = f.write("other", "t2");  // renewed meanwhile
  CHECK_FALSE(f.elector.tryAcquireOrRenew());
  f.harness.clock.advance(16s);  // unchanged for a whole duration
  CHECK(f.elector.tryAcquireOrRenew());
  auto requests = f.requests();
  REQUIRE(requests.size() == 4);
  CHECK(requests[3].method == "PUT");
  json body = json::parse(requests[3].body);
  CHECK(body["metadata"]["resourceVersion"] == renewed["metadata"]["resourceVersion"]);
  CHECK(body["spec"]["holderIdentity"] == "me");
  CHECK(body["spec"]["leaseTransitions"] == 4);
}

// The wall clock of the standby's node jumps forward by more than the lease duration between
// two reads, as an NTP step can: the Lease it sees keeps changing, so it is live, and judged on
// monotonic time no lease duration has passed. Judged on wall time the standby would take a live
// Lease and two replicas would work at once.
TEST_CASE("a forward step of the wall clock does not let a standby take a renewed Lease",
          "[controller][leader]") {
  Fixture f;
  f.write("other", "t1");
  CHECK_FALSE(f.elector.tryAcquireOrRenew());
  for (int i = 2; i < 10; ++i) {
    f.harness.clock.stepWall(1h);
    f.harness.clock.advance(2s);
    f.write("other", "t" + std::to_string(i));  // the holder renewed
    CHECK_FALSE(f.elector.tryAcquireOrRenew());
  }
  // Even a Lease that has not changed since is not stale before a lease duration of monotonic time.
  f.harness.clock.stepWall(24h);
  f.harness.clock.advance(14s);
  CHECK_FALSE(f.elector.tryAcquireOrRenew());
  for (const auto& request : f.requests()) CHECK(request.method == "GET");
}

TEST_CASE("a standby takes a Lease its holder stopped renewing after a lease duration of monotonic time",
          "[controller][leader]") {
  Fixture f;
  f.write("other", "t1");
  CHECK_FALSE(f.elector.tryAcquireOrRenew());
  // The wall clock steps back meanwhile: it must not delay the takeover either.
  f.harness.clock.stepWall(-1h);
  f.harness.clock.advance(14s);
  CHECK_FALSE(f.elector.tryAcquireOrRenew());
  f.harness.clock.advance(1s);  // 15 s (the lease duration) since the Lease last changed
  CHECK(f.elector.tryAcquireOrRenew());
  auto requests = f.requests();
  REQUIRE(requests.size() == 4);
  CHECK(requests[3].method == "PUT");
  CHECK(json::parse(requests[3].body)["spec"]["holderIdentity"] == "me");
}

// The leader's own node steps its wall clock forward past the renew deadline while one renewal
// fails: judged on monotonic time only one retry period has passed, so it keeps the Lease (and
// renews it at the next attempt) instead of stopping as if the deadline had passed.
TEST_CASE("a forward step of the wall clock does not make a leader give up its Lease", "[controller][leader]") {
  Fixture f;
  REQUIRE(f.becomeLeader());
  std::stop_source stop;
  bool failedOnce = false;
  f.harness.api->setInterceptor(
      [&](const restarter::kube::Request& request) -> std::optional<restarter::kube::Response> {
        if (!failedOnce) {  // the first renewal's GET fails while the wall clock steps
          failedOnce = true;
          f.harness.clock.stepWall(1h);
          return internalError();
        }
        if (request.method == "PUT") stop.request_stop();  // renewed: enough
        return std::nullopt;
      });
  CHECK(f.elector.hold(stop.get_token()));
  CHECK(f.requests().size() == 2 + 3);  // the failed GET, then a GET and a PUT
  CHECK(f.harness.logs.str().find("leadership lost") == std::string::npos);
}

TEST_CASE("a released Lease is taken at once and a conflict loses", "[controller][leader]") {
  Fixture f;
  f.write("", "t1");
  // Another replica writes the Lease between our read and our write: our PUT is stale (409).
  bool raced = false;
  f.harness.api->setInterceptor(
      [&](const restarter::kube::Request& request) -> std::optional<restarter::kube::Response> {
        if (request.method == "PUT" && !raced) {
          raced = true;
          f.write("", "t1");
        }
        return std::nullopt;
      });
  CHECK_FALSE(f.elector.tryAcquireOrRenew());
  CHECK(f.elector.tryAcquireOrRenew());
  CHECK(f.stored()["spec"]["holderIdentity"] == "me");
}

TEST_CASE("release clears the holder", "[controller][leader]") {
  Fixture f;
  f.write("me", "t1");
  f.elector.release();
  auto requests = f.requests();
  REQUIRE(requests.size() == 2);
  json body = json::parse(requests[1].body);
  CHECK_FALSE(body["spec"].contains("holderIdentity"));
  CHECK(body["spec"]["leaseDurationSeconds"] == 1);
  CHECK_FALSE(f.stored()["spec"].contains("holderIdentity"));
}

TEST_CASE("a leader that cannot renew for the renew deadline gives up and stops renewing",
          "[controller][leader]") {
  Fixture f;
  REQUIRE(f.becomeLeader());
  const auto start = f.harness.clock.monotonicNow();
  // Every renewal fails (the apiserver answers 500): renewals every retryPeriod (2 s) until the
  // renew deadline (10 s) has passed since the last success, then hold() reports the loss.
  f.harness.api->setInterceptor([](const restarter::kube::Request&) { return internalError(); });
  std::stop_source never;
  CHECK_FALSE(f.elector.hold(never.get_token()));
  CHECK(f.harness.clock.monotonicNow() - start == 10s);
  CHECK(f.requests().size() == 2 + 5);  // five failed renewals, no more
  CHECK(f.harness.logs.str().find("ERROR leadership lost") != std::string::npos);
}

TEST_CASE("a leader whose Lease another replica holds gives up at the next renewal", "[controller][leader]") {
  Fixture f;
  REQUIRE(f.becomeLeader());
  f.write("other", "t9");
  std::stop_source never;
  CHECK_FALSE(f.elector.hold(never.get_token()));
  auto requests = f.requests();
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
  CHECK(f.requests().size() == 2);
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

}  // namespace leader_election_test
