// Metadata-only list and watch at scale: thousands of ConfigMaps through a Reflector, and Secrets
// whose contents must never reach the client.

#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include "restarter/cache/reflector.hpp"
#include "support.hpp"

using namespace restarter;
using namespace restarter::integration;
using kube::json;
using namespace std::chrono_literals;

namespace {

// Runs `work(i)` for i in [0, count) on `threads` threads; returns the number of failures.
int parallel(int count, int threads, const std::function<bool(int)>& work) {
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = next++; i < count; i = next++)
        if (!work(i)) ++failures;
    });
  }
  for (auto& thread : pool) thread.join();
  return failures;
}

}  // namespace

TEST_CASE("thousands of ConfigMaps are listed and watched metadata-only", "[integration][cache]") {
  constexpr int kCount = 3000;
  auto client = adminClient();
  TestNamespace ns(*client, "it-meta");
  auto cm = [&](int i) {
    return json{
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata", {{"name", "cm-" + std::to_string(i)}, {"labels", {{"group", std::to_string(i % 10)}}}}},
        {"data", {{"payload", std::string(200, 'x')}}}};
  };
  REQUIRE(parallel(kCount, 4, [&](int i) {
            return client->create(kube::resources::configMaps(), ns.name(), cm(i)).ok();
          }) == 0);

  cache::Store store;
  store.addIndex("group", [](const json& o) {
    std::vector<std::string> out;
    auto labels = o["metadata"].find("labels");
    if (labels != o["metadata"].end() && labels->contains("group")) out.push_back((*labels)["group"]);
    return out;
  });
  std::atomic<int> updates{0};
  std::atomic<int> deletes{0};
  store.addHandlers({{},
                     [&](const cache::ObjectPtr&, const cache::ObjectPtr&) { ++updates; },
                     [&](const cache::ObjectPtr&) { ++deletes; }});
  cache::ReflectorOptions options;
  options.resource = kube::resources::configMaps();
  options.namespace_ = ns.name();
  options.metadataOnly = true;
  options.labelSelector = "group";  // not the namespace's own kube-root-ca.crt
  cache::Reflector reflector(*client, store, options, base::systemClock());
  std::jthread thread([&](std::stop_token stop) { reflector.run(stop); });

  REQUIRE(store.waitForSync(120s));
  REQUIRE(store.size() == kCount);
  auto all = store.list();
  for (const auto& o : *all) {
    REQUIRE((*o)["kind"] == "PartialObjectMetadata");
    REQUIRE_FALSE(o->contains("data"));
  }
  CHECK(store.byIndex("group", "3")->size() == kCount / 10);

  // Changes after the list arrive through the watch.
  REQUIRE(parallel(300, 4, [&](int i) {
            return client
                ->mergePatch(kube::resources::configMaps(), ns.name(), "cm-" + std::to_string(i),
                             {{"metadata", {{"labels", {{"changed", "yes"}}}}}})
                .ok();
          }) == 0);
  REQUIRE(parallel(100, 4, [&](int i) {
            return client
                ->remove(kube::resources::configMaps(), ns.name(), "cm-" + std::to_string(kCount - 1 - i))
                .ok();
          }) == 0);
  CHECK(waitUntil(60s, [&] { return updates >= 300 && deletes >= 100; }));
  CHECK(store.size() == kCount - 100);
  auto changed = store.get(cache::objectKey(ns.name(), "cm-7"));
  REQUIRE(changed.ok());
  REQUIRE(*changed != nullptr);
  CHECK((**changed)["metadata"]["labels"]["changed"] == "yes");
  thread.request_stop();
}

TEST_CASE("Secrets listed and watched metadata-only carry no data", "[integration][cache]") {
  auto client = adminClient();
  TestNamespace ns(*client, "it-secret");
  const std::string secretValue = "c3VwZXItc2VjcmV0LXZhbHVl";  // "super-secret-value"
  for (int i = 0; i < 20; ++i) {
    json secret = {{"apiVersion", "v1"},
                   {"kind", "Secret"},
                   {"metadata", {{"name", "s-" + std::to_string(i)}}},
                   {"data", {{"password", secretValue}}}};
    REQUIRE(client->create(kube::resources::secrets(), ns.name(), secret).ok());
  }
  kube::ListOptions options;
  options.metadataOnly = true;
  options.limit = 7;
  auto list = client->list(kube::resources::secrets(), ns.name(), options);
  REQUIRE(list.ok());
  CHECK(list->items.size() == 20);
  for (const auto& item : list->items) {
    CHECK_FALSE(item.contains("data"));
    CHECK(item.dump().find(secretValue) == std::string::npos);
  }
  auto one = client->get(kube::resources::secrets(), ns.name(), "s-3", kube::GetOptions{true});
  REQUIRE(one.ok());
  CHECK_FALSE(one->contains("data"));

  kube::WatchOptions watchOptions;
  watchOptions.metadataOnly = true;
  watchOptions.resourceVersion = list->resourceVersion;
  watchOptions.timeout = 30s;
  std::jthread writer([&] {
    json patch = {{"data", {{"password", "bmV3LXNlY3JldA=="}}}};
    (void)client->mergePatch(kube::resources::secrets(), ns.name(), "s-5", patch);
  });
  bool sawModified = false;
  auto end = client->watch(kube::resources::secrets(), ns.name(), watchOptions, [&](kube::WatchEvent&& e) {
    if (e.type == kube::WatchEvent::Type::Modified) {
      sawModified = true;
      CHECK_FALSE(e.object.contains("data"));
      CHECK(e.object.dump().find("bmV3LXNlY3JldA") == std::string::npos);
      return false;
    }
    return true;
  });
  REQUIRE(end.ok());
  CHECK(sawModified);
}
