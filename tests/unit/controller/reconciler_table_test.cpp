#include "restarter/controller/reconciler_table.hpp"

#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace reconciler_table_test {

using namespace restarter::controller;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// Gives `caches` a workload store per kind, indexed as the controller indexes them.
void addWorkloadStores(NamespaceCaches& caches, const std::vector<WorkloadResource>& kinds) {
  caches.namespace_ = "ns";
  for (const WorkloadResource& kind : kinds) {
    auto store = std::make_unique<restarter::cache::PackedStore>();
    store->addIndex(kConfigMapIndex, packedReferenceIndex(restarter::core::RefKind::ConfigMap));
    store->addIndex(kSecretIndex, packedReferenceIndex(restarter::core::RefKind::Secret));
    caches.workloads.emplace(kind.name, std::move(store));
  }
}

struct Fixture {
  Fixture() { addWorkloadStores(caches, kinds); }

  testing::Harness harness;
  std::vector<WorkloadResource> kinds = enabledWorkloadResources(/*argoRollouts=*/true);
  NamespaceCaches caches;
  Evictor evictor{*harness.context};
  ReconcilerParts parts{.context = *harness.context,
                        .cachesFor = [this](std::string_view) { return &caches; },
                        .referenceLoader = [](NamespaceCaches&) { return ReferenceLoader{}; },
                        .rollEvictor = evictor,
                        .onDeleteReadyTimeout = 60s,
                        .debounce = 250ms,
                        .workers = 2};
  std::vector<ReconcilerRow> table = reconcilerTable(kinds, parts);
};

// What the watches queued: "<reconciler>/<namespace>/<name> <reason>".
struct Recorder {
  std::vector<std::string> queued;
  Enqueue enqueue() {
    return [this](QueueKey key, milliseconds, QueueReason reason) {
      queued.push_back(key.toString() + " " + std::string(queueReasonName(reason)));
    };
  }
};

}  // namespace

TEST_CASE("every row of the reconciler table has a name a factory a watch and workers", "[controller][table]") {
  Fixture f;
  std::vector<std::string> names;
  for (const ReconcilerRow& row : f.table) {
    INFO(row.name);
    CHECK_FALSE(row.name.empty());
    REQUIRE(row.make);
    CHECK_FALSE(row.watches.empty());
    CHECK(row.workers == 2);
    CHECK(row.make()->name() == row.name);  // the row's name is its reconciler's label
    names.push_back(row.name);
  }
  CHECK(names == std::vector<std::string>{"statefulset", "ondelete-statefulset", "deployment", "daemonset",
                                          "ondelete-daemonset", "rollout", "pod-expiry"});
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
}

TEST_CASE("the table's watches queue each reconciler's own keys", "[controller][table]") {
  Fixture f;
  Recorder recorder;
  std::vector<std::unique_ptr<Reconciler>> reconcilers;
  for (ReconcilerRow& row : f.table) {
    reconcilers.push_back(row.make());
    for (const WatchOn& watch : row.watches) watch(f.caches, *reconcilers.back(), recorder.enqueue());
  }
  const json statefulSet = {
      {"metadata", {{"namespace", "ns"}, {"name", "web"}, {"resourceVersion", "1"}}},
      {"spec", {{"template", {{"spec", {{"volumes", {{{"name", "v"}, {"configMap", {{"name", "cm"}}}}}}}}}}}}};
  f.caches.workloads.at("statefulset")->replace({statefulSet}, "1");
  CHECK(recorder.queued == std::vector<std::string>{"statefulset/ns/web object-changed",
                                                    "ondelete-statefulset/ns/web object-changed"});

  recorder.queued.clear();
  f.caches.configMaps.replace({{{"metadata", {{"namespace", "ns"}, {"name", "cm"}, {"uid", "u"}}}}}, "2");
  CHECK(recorder.queued == std::vector<std::string>{"statefulset/ns/web related-changed"});

  recorder.queued.clear();
  f.caches.pods.replace({{{"metadata", {{"namespace", "ns"}, {"name", "p"}}}}}, "3");
  CHECK(recorder.queued == std::vector<std::string>{"pod-expiry/ns/p object-changed"});
}

}  // namespace reconciler_table_test
