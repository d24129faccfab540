#include "restarter/controller/watches.hpp"

#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace watches_test {

using namespace restarter::controller;
using nlohmann::json;
using restarter::cache::ObjectPtr;
using restarter::cache::Store;
using namespace std::chrono_literals;

namespace {

restarter::controller::testing::NamedReconciler statefulSets("statefulset");

json object(const std::string& name, const std::string& version, int replicas) {
  return {{"metadata", {{"namespace", "ns"}, {"name", name}, {"resourceVersion", version}}},
          {"spec", {{"replicas", replicas}}}};
}

// What a row queued, in order: the key, its delay and its reason.
struct Queued {
  std::string key;
  milliseconds delay;
  QueueReason reason;
  friend bool operator==(const Queued&, const Queued&) = default;
};

struct Recorder {
  std::vector<Queued> queued;
  Enqueue enqueue() {
    return [this](QueueKey key, milliseconds delay, QueueReason reason) {
      queued.push_back({key.toString(), delay, reason});
    };
  }
};

bool specChanged(const ObjectPtr& before, const ObjectPtr& after) {
  return (*before)["spec"] != (*after)["spec"];
}

}  // namespace

TEST_CASE("a watch row queues its object's own key when the object changes", "[controller][watches]") {
  Store store;
  Recorder recorder;
  installWatch<json>(store,
                     {.reconciler = &statefulSets, .delay = 250ms, .deleteDelay = 0ms, .updated = specChanged},
                     recorder.enqueue());
  store.replace({object("web", "1", 1)}, "1");
  const Queued added{"statefulset/ns/web", 250ms, QueueReason::ObjectChanged};
  CHECK(recorder.queued == std::vector<Queued>{added});

  store.upsert(object("web", "2", 1));  // the predicate says no: a new version alone queues nothing
  CHECK(recorder.queued.size() == 1);
  store.upsert(object("web", "3", 2));
  store.erase(object("web", "3", 2));
  CHECK(recorder.queued ==
        std::vector<Queued>{added, added, {"statefulset/ns/web", 0ms, QueueReason::ObjectChanged}});
}

TEST_CASE("a watch row without a delete delay queues nothing when the object is deleted",
          "[controller][watches]") {
  Store store;
  Recorder recorder;
  installWatch<json>(store, {.reconciler = &statefulSets, .deleteDelay = std::nullopt}, recorder.enqueue());
  store.replace({object("web", "1", 1)}, "1");
  store.upsert(object("web", "2", 1));  // no predicate: every update queues
  store.erase(object("web", "2", 1));
  CHECK(recorder.queued.size() == 2);
}

TEST_CASE("a watch row with a mapper queues the keys it names as related changes", "[controller][watches]") {
  Store store;
  Recorder recorder;
  auto referencing = [](const ObjectPtr& configMap) {
    const std::string name = (*configMap)["metadata"]["name"];
    // Two workloads reference it; a key without a name is dropped, never queued.
    return std::vector<QueueKey>{{&statefulSets, {"ns", name + "-reader"}}, {&statefulSets, {"ns", ""}}};
  };
  installWatch<json>(store, {.delay = 1s, .map = referencing}, recorder.enqueue());
  store.replace({object("cfg", "1", 0)}, "1");
  CHECK(recorder.queued == std::vector<Queued>{{"statefulset/ns/cfg-reader", 1s, QueueReason::RelatedChanged}});
}

}  // namespace watches_test
