// The fake API server answers the real kube::Client as the apiserver would (fake_api_server.hpp).

#include <catch2/catch.hpp>

#include <thread>

#include "restarter/base/clock.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/discovery.hpp"
#include "restarter/kube/resource.hpp"

#include "restarter/testing/fake_api_server.hpp"

namespace restarter::testing {
namespace {

using nlohmann::json;

json configMap(const std::string& name, const std::string& value, json labels = json::object()) {
  return json{{"metadata", {{"name", name}, {"namespace", "shop"}, {"labels", std::move(labels)}}},
              {"data", {{"v", value}}}};
}

json statefulSetObject(const std::string& name) {
  return json{{"metadata", {{"name", name}, {"namespace", "shop"}}},
              {"spec", {{"replicas", 1}, {"template", {{"metadata", json::object()}}}}}};
}

}  // namespace

TEST_CASE("fake api: a created object is read back with uid and resourceVersion") {
  auto api = connectFakeApi(base::systemClock());
  auto created = api.client->create(kube::resources::configMaps(), "shop", configMap("app", "1"));
  REQUIRE(created);
  CHECK_FALSE(created->at("metadata").at("uid").get<std::string>().empty());
  auto read = api.client->get(kube::resources::configMaps(), "shop", "app");
  REQUIRE(read);
  CHECK(read->at("data").at("v") == "1");
  CHECK(read->at("metadata").at("resourceVersion") == created->at("metadata").at("resourceVersion"));
  auto missing = api.client->get(kube::resources::configMaps(), "shop", "other");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().kind == core::ErrorKind::NotFound);
}

TEST_CASE("fake api: a second create is AlreadyExists and a stale replace a Conflict") {
  auto api = connectFakeApi(base::systemClock());
  auto first = api.client->create(kube::resources::configMaps(), "shop", configMap("app", "1"));
  REQUIRE(first);
  auto again = api.client->create(kube::resources::configMaps(), "shop", configMap("app", "2"));
  REQUIRE_FALSE(again);
  CHECK(again.error().kind == core::ErrorKind::AlreadyExists);

  json update = *first;
  update["data"]["v"] = "2";
  REQUIRE(api.client->replace(kube::resources::configMaps(), "shop", "app", update));
  update["data"]["v"] = "3";  // still at the first resourceVersion
  auto stale = api.client->replace(kube::resources::configMaps(), "shop", "app", update);
  REQUIRE_FALSE(stale);
  CHECK(stale.error().kind == core::ErrorKind::Conflict);
  CHECK(api.server->object(kube::resources::configMaps(), "shop", "app")->at("data").at("v") == "2");
}

TEST_CASE("fake api: list selects by label and watch delivers the changes after its resourceVersion") {
  auto api = connectFakeApi(base::systemClock());
  api.server->seed(kube::resources::configMaps(), configMap("a", "1", {{"tier", "web"}}));
  api.server->seed(kube::resources::configMaps(), configMap("b", "1", {{"tier", "db"}}));
  kube::ListOptions options;
  options.labelSelector = "tier=web";
  auto listed = api.client->list(kube::resources::configMaps(), "shop", options);
  REQUIRE(listed);
  REQUIRE(listed->items.size() == 1);
  CHECK(listed->items[0].at("metadata").at("name") == "a");

  std::vector<std::string> seen;
  std::jthread watcher([&](std::stop_token stop) {
    kube::WatchOptions watch;
    watch.resourceVersion = listed->resourceVersion;
    (void)api.client->watch(
        kube::resources::configMaps(), "shop", watch,
        [&](kube::WatchEvent&& event) {
          seen.push_back(std::string(kube::watchEventTypeName(event.type)) + " " +
                         event.object.at("metadata").at("name").get<std::string>());
          return seen.size() < 2;
        },
        stop);
  });
  REQUIRE(api.client->create(kube::resources::configMaps(), "shop", configMap("c", "1")));
  REQUIRE(api.client->remove(kube::resources::configMaps(), "shop", "a", {}).ok());
  watcher.join();
  CHECK(seen == std::vector<std::string>{"ADDED c", "DELETED a"});
}

TEST_CASE("fake api: a watch from before compact() ends with 410 Gone") {
  auto api = connectFakeApi(base::systemClock());
  auto seeded = api.server->seed(kube::resources::configMaps(), configMap("a", "1"));
  api.server->seed(kube::resources::configMaps(), configMap("b", "1"));
  api.server->compact();
  kube::WatchOptions watch;
  watch.resourceVersion = seeded.at("metadata").at("resourceVersion").get<std::string>();
  auto ended = api.client->watch(kube::resources::configMaps(), "shop", watch,
                                 [](kube::WatchEvent&&) { return true; }, {});
  REQUIRE_FALSE(ended);
  CHECK(ended.error().kind == core::ErrorKind::Gone);
}

TEST_CASE("fake api: apply creates then merges and a spec change raises the generation") {
  auto api = connectFakeApi(base::systemClock());
  kube::ApplyOptions options;
  options.fieldManager = "test";
  auto created =
      api.client->apply(kube::resources::statefulSets(), "shop", "web", statefulSetObject("web"), options);
  REQUIRE(created);
  CHECK(created->at("metadata").at("generation") == 1);

  json annotate = {{"apiVersion", "apps/v1"},
                   {"kind", "StatefulSet"},
                   {"metadata", {{"name", "web"}}},
                   {"spec", {{"template", {{"metadata", {{"annotations", {{"k", "v"}}}}}}}}}};
  auto applied = api.client->apply(kube::resources::statefulSets(), "shop", "web", annotate, options);
  REQUIRE(applied);
  CHECK(applied->at("metadata").at("generation") == 2);
  CHECK(applied->at("spec").at("replicas") == 1);

  options.dryRun = true;
  annotate["spec"]["replicas"] = 3;
  REQUIRE(api.client->apply(kube::resources::statefulSets(), "shop", "web", annotate, options));
  CHECK(api.server->object(kube::resources::statefulSets(), "shop", "web")->at("spec").at("replicas") == 1);
}

TEST_CASE("fake api: a JSON Patch whose test fails is a Conflict and changes nothing") {
  auto api = connectFakeApi(base::systemClock());
  api.server->seed(kube::resources::configMaps(), configMap("app", "1"));
  json patch = json::array({{{"op", "test"}, {"path", "/data/v"}, {"value", "0"}},
                            {{"op", "replace"}, {"path", "/data/v"}, {"value", "2"}}});
  auto refused = api.client->jsonPatch(kube::resources::configMaps(), "shop", "app", patch, {});
  REQUIRE_FALSE(refused);
  CHECK(refused.error().kind == core::ErrorKind::Conflict);
  patch[0]["value"] = "1";
  REQUIRE(api.client->jsonPatch(kube::resources::configMaps(), "shop", "app", patch, {}));
  CHECK(api.server->object(kube::resources::configMaps(), "shop", "app")->at("data").at("v") == "2");
}

TEST_CASE("fake api: Events and Leases are stored as the apiserver stores them") {
  auto api = connectFakeApi(base::systemClock());
  kube::EventRecord event;
  event.namespace_ = "shop";
  event.regarding = {"apps/v1", "StatefulSet", "shop", "web", "uid-1"};
  event.reason = "Restarted";
  event.action = "Restart";
  event.note = "configmap/app changed";
  REQUIRE(api.client->createEvent(event));
  const auto events = api.server->events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].at("reason") == "Restarted");
  CHECK(events[0].at("regarding").at("name") == "web");

  kube::LeaseRecord lease;
  lease.name = "restarter";
  lease.namespace_ = "shop";
  lease.holderIdentity = "a";
  lease.leaseDurationSeconds = 15;
  auto created = api.client->createLease(lease);
  REQUIRE(created);
  auto taken = *created;
  taken.holderIdentity = "b";
  REQUIRE(api.client->updateLease(taken));
  auto stale = api.client->updateLease(*created);  // the first resourceVersion again
  REQUIRE_FALSE(stale);
  CHECK(stale.error().kind == core::ErrorKind::Conflict);
  CHECK(api.client->getLease("shop", "restarter")->holderIdentity == "b");
}

TEST_CASE("fake api: an interceptor answers before the server") {
  auto api = connectFakeApi(base::systemClock());
  api.server->seed(kube::resources::configMaps(), configMap("app", "1"));
  api.server->setInterceptor([](const kube::Request&) -> std::optional<kube::Response> {
    return kube::Response{503, {}, R"({"kind":"Status","code":503,"reason":"ServiceUnavailable"})"};
  });
  auto failed = api.client->get(kube::resources::configMaps(), "shop", "app");
  REQUIRE_FALSE(failed);
  CHECK(failed.error().kind == core::ErrorKind::Unavailable);
  api.server->setInterceptor(nullptr);
  CHECK(api.client->get(kube::resources::configMaps(), "shop", "app"));
}

TEST_CASE("fake api: another writer's put replaces in place and its erase deletes without a request") {
  auto api = connectFakeApi(base::systemClock());
  auto created = api.client->create(kube::resources::configMaps(), "shop", configMap("app", "1"));
  REQUIRE(created);
  const json replaced = api.server->put(kube::resources::configMaps(), configMap("app", "2"));
  CHECK(replaced["metadata"]["uid"] == created->at("metadata").at("uid"));
  CHECK(replaced["metadata"]["resourceVersion"] != created->at("metadata").at("resourceVersion"));
  auto read = api.client->get(kube::resources::configMaps(), "shop", "app");
  REQUIRE(read);
  CHECK(read->at("data").at("v") == "2");
  // A put of a name not stored creates it, as seed() does.
  CHECK_FALSE(api.server->put(kube::resources::configMaps(), configMap("new", "1"))["metadata"]["uid"]
                  .get<std::string>()
                  .empty());

  CHECK(api.server->erase(kube::resources::configMaps(), "shop", "app"));
  CHECK_FALSE(api.server->erase(kube::resources::configMaps(), "shop", "app"));
  CHECK_FALSE(api.server->object(kube::resources::configMaps(), "shop", "app"));
  CHECK(api.server->requests().size() == 2);  // the create and the get: put and erase send none
}

TEST_CASE("fake api: writes and applies count the requests that were writes") {
  auto api = connectFakeApi(base::systemClock());
  REQUIRE(api.client->create(kube::resources::configMaps(), "shop", configMap("app", "1")));
  REQUIRE(api.client->get(kube::resources::configMaps(), "shop", "app"));
  CHECK(api.server->writes() == 1);
  CHECK(api.server->applies() == 0);
  json applied = configMap("app", "2");
  applied["apiVersion"] = "v1";
  applied["kind"] = "ConfigMap";
  REQUIRE(api.client->apply(kube::resources::configMaps(), "shop", "app", applied, kube::ApplyOptions{"test"}));
  CHECK(api.server->writes() == 2);
  CHECK(api.server->applies() == 1);
}

TEST_CASE("fake api: discovery lists a group version's resources once they are installed") {
  auto api = connectFakeApi(base::systemClock());
  const kube::ResourceRef analysisRuns{"argoproj.io", "v1alpha1", "analysisruns", "AnalysisRun", true};
  // No CRD of the group version installed: the apiserver does not serve it (404).
  auto before = kube::resourceServed(*api.client, kube::resources::rollouts());
  REQUIRE(before);
  CHECK_FALSE(*before);
  api.server->install(kube::resources::rollouts());
  auto after = kube::resourceServed(*api.client, kube::resources::rollouts());
  REQUIRE(after);
  CHECK(*after);
  // Served now, the group version lists only what was installed.
  auto other = kube::resourceServed(*api.client, analysisRuns);
  REQUIRE(other);
  CHECK_FALSE(*other);
  auto document = api.client->getRaw("/apis/argoproj.io/v1alpha1");
  REQUIRE(document);
  const json list = json::parse(*document);
  CHECK(list["kind"] == "APIResourceList");
  CHECK(list["groupVersion"] == "argoproj.io/v1alpha1");
  CHECK(list["resources"] == json::parse(R"([{"name":"rollouts","namespaced":true,"kind":"Rollout",
      "verbs":["create","delete","deletecollection","get","list","patch","update","watch"]}])"));
  // The core group's document is at /api/v1.
  api.server->install(kube::resources::namespaces());
  auto core = api.client->getRaw("/api/v1");
  REQUIRE(core);
  CHECK(json::parse(*core)["resources"][0]["namespaced"] == false);
  CHECK(json::parse(*core)["groupVersion"] == "v1");
}

}  // namespace restarter::testing
