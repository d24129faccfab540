// The typed operations against the real apiserver: server-side apply field ownership, JSON and
// merge patches, delete preconditions, eviction (and a PodDisruptionBudget's 429), Events,
// Leases. (410 Gone is proven by the scripted unit tests: whether a given old resourceVersion is
// still in the apiserver's watch-cache window is not deterministic on a fresh cluster.)

#include <catch2/catch.hpp>

#include "restarter/kube/client.hpp"
#include "support.hpp"

using namespace restarter;
using namespace restarter::integration;
using kube::json;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> managersOf(const json& object) {
  std::vector<std::string> out;
  for (const auto& entry : object["metadata"]["managedFields"]) out.push_back(entry["manager"]);
  std::sort(out.begin(), out.end());
  return out;
}

json applyCm(const std::string& name, const json& data) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}, {"data", data}};
}

}  // namespace

TEST_CASE("server-side apply field ownership behaves as documented", "[integration][apply]") {
  auto client = adminClient();
  TestNamespace ns(*client, "it-ssa");
  const auto cms = kube::resources::configMaps();
  kube::ApplyOptions alice{"alice", false, false};
  kube::ApplyOptions bob{"bob", false, false};
  kube::ApplyOptions bobForce{"bob", true, false};

  REQUIRE(client->apply(cms, ns.name(), "x", applyCm("x", {{"a", "1"}, {"b", "1"}}), alice).ok());
  // Another manager setting a field alice owns to a different value: a conflict naming alice.
  auto conflict = client->apply(cms, ns.name(), "x", applyCm("x", {{"a", "2"}}), bob);
  REQUIRE_FALSE(conflict.ok());
  CHECK(conflict.error().kind == core::ErrorKind::Conflict);
  CHECK(conflict.error().message.find("alice") != std::string::npos);
  // Setting it to the same value is no conflict: both co-own it.
  auto shared = client->apply(cms, ns.name(), "x", applyCm("x", {{"b", "1"}}), bob);
  REQUIRE(shared.ok());
  CHECK(managersOf(*shared) == std::vector<std::string>{"alice", "bob"});
  // force takes the field over.
  auto forced = client->apply(cms, ns.name(), "x", applyCm("x", {{"a", "2"}, {"b", "1"}}), bobForce);
  REQUIRE(forced.ok());
  CHECK((*forced)["data"]["a"] == "2");
  // alice stops applying `a` (no longer hers): it stays, bob owns it.
  auto aliceDrops = client->apply(cms, ns.name(), "x", applyCm("x", {{"b", "1"}}), alice);
  REQUIRE(aliceDrops.ok());
  CHECK((*aliceDrops)["data"]["a"] == "2");
  // bob stops applying `a`, its only owner: the field is removed. `b` stays (alice still owns it).
  auto bobDrops = client->apply(cms, ns.name(), "x", applyCm("x", json::object()), bob);
  REQUIRE(bobDrops.ok());
  CHECK_FALSE((*bobDrops)["data"].contains("a"));
  CHECK((*bobDrops)["data"]["b"] == "1");
  // dry run changes nothing.
  REQUIRE(
      client->apply(cms, ns.name(), "x", applyCm("x", {{"b", "9"}}), kube::ApplyOptions{"alice", false, true})
          .ok());
  CHECK((*client->get(cms, ns.name(), "x"))["data"]["b"] == "1");
}

TEST_CASE("patches and deletes with preconditions", "[integration][operations]") {
  auto client = adminClient();
  TestNamespace ns(*client, "it-ops");
  const auto cms = kube::resources::configMaps();
  auto created = client->create(cms, ns.name(), applyCm("p", {{"k", "v"}}));
  REQUIRE(created.ok());
  auto again = client->create(cms, ns.name(), applyCm("p", {{"k", "v"}}));
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().kind == core::ErrorKind::AlreadyExists);

  auto patched = client->jsonPatch(
      cms, ns.name(), "p",
      json::array({{{"op", "add"}, {"path", "/metadata/annotations"}, {"value", {{"a/b", "1"}}}}}));
  REQUIRE(patched.ok());
  CHECK((*patched)["metadata"]["annotations"]["a/b"] == "1");
  auto testFails = client->jsonPatch(cms, ns.name(), "p",
                                     json::array({{{"op", "test"}, {"path", "/data/k"}, {"value", "other"}}}));
  REQUIRE_FALSE(testFails.ok());
  auto merged = client->mergePatch(cms, ns.name(), "p", {{"data", {{"k", nullptr}, {"n", "2"}}}});
  REQUIRE(merged.ok());
  CHECK((*merged)["data"] == json{{"n", "2"}});

  // Stale resourceVersion on replace: Conflict.
  json stale = *created;
  stale["data"] = {{"z", "1"}};
  auto replaced = client->replace(cms, ns.name(), "p", stale);
  REQUIRE_FALSE(replaced.ok());
  CHECK(replaced.error().kind == core::ErrorKind::Conflict);

  kube::DeleteOptions wrongUid;
  wrongUid.uid = "00000000-0000-0000-0000-000000000000";
  auto refused = client->remove(cms, ns.name(), "p", wrongUid);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().kind == core::ErrorKind::Conflict);
  kube::DeleteOptions rightUid;
  rightUid.uid = (*created)["metadata"]["uid"].get<std::string>();
  REQUIRE(client->remove(cms, ns.name(), "p", rightUid).ok());
  auto gone = client->get(cms, ns.name(), "p");
  REQUIRE_FALSE(gone.ok());
  CHECK(gone.error().kind == core::ErrorKind::NotFound);
}

TEST_CASE("eviction honours a PodDisruptionBudget", "[integration][operations]") {
  auto client = adminClient();
  TestNamespace ns(*client, "it-evict");
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"labels", {{"app", "evict"}}}}},
              {"spec",
               {{"nodeName", "kwok-node-0"},
                {"automountServiceAccountToken", false},
                {"containers", json::array({{{"name", "c"}, {"image", "example.invalid/none"}}})}}}};
  // The ServiceAccount admission plugin waits for the namespace's default ServiceAccount.
  REQUIRE(waitUntil(
      60s, [&] { return client->create(kube::resources::pods(), ns.name(), pod).ok(); }, 200ms));
  kube::ResourceRef pdbs{"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true};
  json pdb = {{"apiVersion", "policy/v1"},
              {"kind", "PodDisruptionBudget"},
              {"metadata", {{"name", "keep"}}},
              {"spec", {{"minAvailable", 1}, {"selector", {{"matchLabels", {{"app", "evict"}}}}}}}};
  REQUIRE(client->create(pdbs, ns.name(), pdb).ok());
  // The Eviction API skips the budget for a pod that is not Running yet, and refuses only once the
  // disruption controller has processed the budget: wait for both (kwok runs the pod).
  REQUIRE(waitUntil(60s, [&] {
    auto p = client->get(kube::resources::pods(), ns.name(), "p");
    return p.ok() && p->contains("status") && (*p)["status"].value("phase", "") == "Running";
  }));
  REQUIRE(waitUntil(60s, [&] {
    auto b = client->get(pdbs, ns.name(), "keep");
    if (!b.ok() || !b->contains("status") || !(*b)["status"].is_object()) return false;
    const json& status = (*b)["status"];
    return status.value("observedGeneration", std::int64_t{0}) >=
               (*b)["metadata"].value("generation", std::int64_t{1}) &&
           status.value("currentHealthy", std::int64_t{0}) >= 1;
  }));
  auto refused = client->evict(ns.name(), "p");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().kind == core::ErrorKind::TooManyRequests);
  REQUIRE(client->remove(pdbs, ns.name(), "keep").ok());
  REQUIRE(client->evict(ns.name(), "p").ok());
  CHECK(waitUntil(60s, [&] {
    auto p = client->get(kube::resources::pods(), ns.name(), "p");
    return (!p.ok() && p.error().kind == core::ErrorKind::NotFound) ||
           (p.ok() && p->contains("metadata") && (*p)["metadata"].contains("deletionTimestamp"));
  }));
  auto missing = client->evict(ns.name(), "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == core::ErrorKind::NotFound);
}

TEST_CASE("Events and Leases", "[integration][operations]") {
  auto client = adminClient();
  TestNamespace ns(*client, "it-events");
  auto cm = client->create(kube::resources::configMaps(), ns.name(), applyCm("about", json::object()));
  REQUIRE(cm.ok());
  kube::EventRecord record;
  record.namespace_ = ns.name();
  record.regarding = {"v1", "ConfigMap", ns.name(), "about", (*cm)["metadata"]["uid"]};
  record.reason = "Restarted";
  record.action = "Restart";
  record.note = "configmap/about changed";
  record.reportingController = "restarter.stackable.tech/test";
  record.reportingInstance = "integration";
  auto event = client->createEvent(record);
  if (!event) FAIL(event.error().describe());
  auto events = client->list(kube::resources::events(), ns.name());
  REQUIRE(events.ok());
  REQUIRE(events->items.size() == 1);
  CHECK(events->items[0]["reason"] == "Restarted");
  CHECK(events->items[0]["regarding"]["name"] == "about");

  kube::LeaseRecord lease;
  lease.name = "leader";
  lease.namespace_ = ns.name();
  lease.holderIdentity = "a";
  lease.leaseDurationSeconds = 15;
  lease.renewTime = "2026-01-01T00:00:00.000000Z";
  auto created = client->createLease(lease);
  REQUIRE(created.ok());
  auto taken = *created;
  taken.holderIdentity = "b";
  taken.leaseTransitions = 1;
  auto updated = client->updateLease(taken);
  REQUIRE(updated.ok());
  CHECK(updated->holderIdentity == "b");
  // The first copy is stale now: optimistic concurrency refuses it.
  auto stale = client->updateLease(*created);
  REQUIRE_FALSE(stale.ok());
  CHECK(stale.error().kind == core::ErrorKind::Conflict);
  CHECK(client->getLease(ns.name(), "leader")->holderIdentity == "b");
}

TEST_CASE("an unreachable server fails within the connect timeout", "[integration][operations]") {
  auto config = adminConfig();
  config.server = "https://127.0.0.1:1";  // loopback inside the cluster's namespace: nothing listens
  kube::TransportOptions options;
  options.connectTimeout = 2s;
  auto client = kube::Client::create(config, options);
  REQUIRE(client.ok());
  auto start = std::chrono::steady_clock::now();
  auto result = (*client)->list(kube::resources::namespaces(), "");
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().kind == core::ErrorKind::Unavailable);
  CHECK(std::chrono::steady_clock::now() - start < 3s);
}
