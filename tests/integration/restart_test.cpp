// A Reflector's watch survives a kube-apiserver restart and misses no change: after the restart
// and further writes, the store equals a fresh list (same names, same resourceVersions). Beside
// it, a store that keeps only referenced objects as entries, as the controller's ConfigMap and
// Secret stores do (docs/architecture.md, "Memory that follows references"): afterwards its entries
// are the referenced objects at their latest version, every other object is still known as
// unloaded, and a deleted one is neither.

#include <map>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "restarter/cache/reflector.hpp"
#include "support.hpp"

using namespace restarter;
using namespace restarter::integration;
using kube::json;
using namespace std::chrono_literals;

namespace {

std::map<std::string, std::string> versions(const std::vector<cache::ObjectPtr>& objects) {
  std::map<std::string, std::string> out;
  for (const auto& o : objects)
    out[(*o)["metadata"]["name"].get<std::string>()] = (*o)["metadata"]["resourceVersion"].get<std::string>();
  return out;
}

std::map<std::string, std::string> versions(const std::vector<json>& objects) {
  std::map<std::string, std::string> out;
  for (const auto& o : objects)
    out[o["metadata"]["name"].get<std::string>()] = o["metadata"]["resourceVersion"].get<std::string>();
  return out;
}

// Writes until it succeeds or the deadline passes (the apiserver may still be coming up).
bool eventually(const std::function<bool()>& write) { return waitUntil(120s, write, 250ms); }

}  // namespace

TEST_CASE("a watch survives a kube-apiserver restart and misses no change", "[integration][restart]") {
  auto client = adminClient();
  TestNamespace ns(*client, "it-restart");
  auto cm = [](const std::string& name, const std::string& value) {
    return json{
        {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}, {"data", {{"v", value}}}};
  };
  for (int i = 0; i < 50; ++i)
    REQUIRE(
        client->create(kube::resources::configMaps(), ns.name(), cm("before-" + std::to_string(i), "0")).ok());

  cache::Store store;
  std::vector<std::string> errors;
  std::mutex errorsMutex;
  cache::ReflectorOptions options;
  options.resource = kube::resources::configMaps();
  options.namespace_ = ns.name();
  options.metadataOnly = true;
  options.backoff.initial = 200ms;
  options.backoff.max = 2s;
  options.onError = [&](const core::Error& e) {
    std::lock_guard lock(errorsMutex);
    errors.push_back(e.describe());
  };
  cache::Reflector reflector(*client, store, options, base::systemClock());
  std::jthread thread([&](std::stop_token stop) { reflector.run(stop); });
  REQUIRE(store.waitForSync(60s));
  // Referenced: one changed before the restart, one after, one deleted after, one created after.
  const std::set<std::string> referenced = {"before-0", "before-15", "before-45", "after-3"};
  cache::Store retainedStore;
  retainedStore.setRetention(
      [&](std::string_view key) { return referenced.contains(std::string(key.substr(key.find('/') + 1))); });
  cache::Reflector retainedReflector(*client, retainedStore, options, base::systemClock());
  std::jthread retainedThread([&](std::stop_token stop) { retainedReflector.run(stop); });
  REQUIRE(retainedStore.waitForSync(60s));
  CHECK(retainedStore.unloadedSize() == 51 - 3);  // kube-root-ca.crt is unreferenced too
  auto watchesBefore = reflector.watchCount();

  // Changes right before the restart may still be in flight when the apiserver stops.
  for (int i = 0; i < 10; ++i)
    REQUIRE(client
                ->mergePatch(kube::resources::configMaps(), ns.name(), "before-" + std::to_string(i),
                             {{"data", {{"v", "1"}}}})
                .ok());

  std::string restarted = restartApiserver(*client, 180s);
  REQUIRE(restarted.empty());

  // Changes after the restart: updates, deletes and creates.
  for (int i = 10; i < 20; ++i)
    REQUIRE(eventually([&] {
      return client
          ->mergePatch(kube::resources::configMaps(), ns.name(), "before-" + std::to_string(i),
                       {{"data", {{"v", "2"}}}})
          .ok();
    }));
  for (int i = 40; i < 50; ++i)
    REQUIRE(eventually([&] {
      return client->remove(kube::resources::configMaps(), ns.name(), "before-" + std::to_string(i)).ok();
    }));
  for (int i = 0; i < 10; ++i)
    REQUIRE(eventually([&] {
      return client->create(kube::resources::configMaps(), ns.name(), cm("after-" + std::to_string(i), "x"))
          .ok();
    }));

  kube::ListOptions listOptions;
  listOptions.metadataOnly = true;
  auto fresh = client->list(kube::resources::configMaps(), ns.name(), listOptions);
  REQUIRE(fresh.ok());
  auto want = versions(fresh->items);
  CHECK(want.size() == 51);  // 50 of ours and the namespace's kube-root-ca.crt
  bool same = waitUntil(60s, [&] {
    auto all = store.list();
    return all.ok() && versions(*all) == want;
  });
  std::map<std::string, std::string> wantReferenced;
  for (const auto& [name, version] : want)
    if (referenced.contains(name)) wantReferenced[name] = version;
  CHECK(wantReferenced.size() == 3);  // before-45 was deleted
  bool sameReferenced = waitUntil(60s, [&] {
    auto entries = retainedStore.list();
    return entries.ok() && versions(*entries) == wantReferenced &&
           retainedStore.unloadedSize() == want.size() - wantReferenced.size();
  });
  if (!same || !sameReferenced) {
    std::lock_guard lock(errorsMutex);
    for (const auto& e : errors) WARN(e);
  }
  CHECK(same);
  CHECK(sameReferenced);
  CHECK(retainedStore.unloadedSize() == want.size() - 3);
  auto deleted = retainedStore.find(ns.name() + "/before-45");
  REQUIRE(deleted.ok());
  CHECK(deleted->entry == nullptr);
  CHECK_FALSE(deleted->unloaded);
  auto unreferenced = retainedStore.find(ns.name() + "/before-16");
  REQUIRE(unreferenced.ok());
  CHECK(unreferenced->unloaded);
  CHECK(reflector.watchCount() > watchesBefore);  // the watch was re-established
  thread.request_stop();
  retainedThread.request_stop();
}
