#include "restarter/controller/predicates.hpp"

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace predicates_test {

using namespace restarter::controller;
using nlohmann::json;
using restarter::core::WorkloadKind;

namespace {

// A StatefulSet of 3 replicas at generation 1, rolled out, with one template annotation.
json statefulSet() {
  return {
      {"metadata",
       {{"namespace", "ns"},
        {"name", "web"},
        {"uid", "u1"},
        {"resourceVersion", "1"},
        {"generation", 1},
        {"annotations", {{"restarter.stackable.tech/ignore-configmap.a", "x"}}}}},
      {"spec",
       {{"replicas", 3},
        {"template", {{"metadata", {{"annotations", {{"configmap.restarter.stackable.tech/cfg", "c/1"}}}}}}}}},
      {"status", {{"observedGeneration", 1}, {"updatedReplicas", 3}, {"readyReplicas", 3}}}};
}

restarter::cache::PackedPtr packed(const json& object) {
  auto made = restarter::cache::packObject(object);
  REQUIRE(made);
  return std::make_shared<const restarter::cache::PackedObject>(std::move(*made));
}

restarter::cache::ObjectPtr plain(const json& object) { return std::make_shared<const json>(object); }

// One update of statefulSet(): what it changes and what each workload predicate must say of it.
struct Update {
  const char* what;
  json::json_pointer field;
  json value;
  bool workloadChanged;
  bool rollInputChanged;
};

}  // namespace

TEST_CASE("each workload predicate queues exactly the updates it is for", "[controller][predicates]") {
  const std::vector<Update> updates = {
      {"a new resourceVersion alone", json::json_pointer("/metadata/resourceVersion"), "2", false, false},
      {"a new generation (the template changed)", json::json_pointer("/metadata/generation"), 2, true, true},
      {"an ignore annotation",
       json::json_pointer("/metadata/annotations/restarter.stackable.tech~1ignore-configmap.a"), "y", true,
       true},
      {"a template annotation", json::json_pointer("/spec/template/metadata/annotations/x"), "1", true, true},
      {"a new uid (deleted and created again)", json::json_pointer("/metadata/uid"), "u2", true, true},
      {"status: a pod became not ready", json::json_pointer("/status/readyReplicas"), 2, false, true},
      {"a label", json::json_pointer("/metadata/labels/team"), "a", false, true},
  };
  const json before = statefulSet();
  for (const Update& update : updates) {
    INFO(update.what);
    json after = before;
    after[update.field] = update.value;
    CHECK(workloadChanged(packed(before), packed(after)) == update.workloadChanged);
    CHECK(rollInputChanged(packed(before), packed(after)) == update.rollInputChanged);
  }
}

TEST_CASE("a rollout's end is one update and no other status change is", "[controller][predicates]") {
  json rolling = statefulSet();
  rolling["metadata"]["generation"] = 2;
  rolling["status"] = {{"observedGeneration", 2}, {"updatedReplicas", 1}, {"readyReplicas", 3}};
  json further = rolling;
  further["status"]["updatedReplicas"] = 2;
  json done = rolling;
  done["status"]["updatedReplicas"] = 3;
  json settledAgain = done;
  settledAgain["metadata"]["resourceVersion"] = "9";

  CHECK_FALSE(rolloutFinished(WorkloadKind::StatefulSet, packed(rolling), packed(further)));
  CHECK(rolloutFinished(WorkloadKind::StatefulSet, packed(further), packed(done)));
  CHECK_FALSE(rolloutFinished(WorkloadKind::StatefulSet, packed(done), packed(settledAgain)));
  CHECK_FALSE(rolloutFinished(WorkloadKind::StatefulSet, packed(done), packed(rolling)));  // a new one began
}

TEST_CASE("a pod update queues its expiry check only for its annotations or uid", "[controller][predicates]") {
  const json pod = {{"metadata",
                     {{"namespace", "ns"},
                      {"name", "p"},
                      {"uid", "u1"},
                      {"resourceVersion", "1"},
                      {"annotations", {{"restarter.stackable.tech/expires-at.tls", "2026-12-06T10:00:00Z"}}}}},
                    {"status", {{"phase", "Running"}}}};
  json moved = pod;
  moved["metadata"]["resourceVersion"] = "2";
  moved["status"]["phase"] = "Succeeded";
  CHECK_FALSE(podChanged(plain(pod), plain(moved)));
  json expiry = pod;
  expiry["metadata"]["annotations"]["restarter.stackable.tech/expires-at.tls"] = "2026-12-07T10:00:00Z";
  CHECK(podChanged(plain(pod), plain(expiry)));
  json recreated = pod;
  recreated["metadata"]["uid"] = "u2";
  CHECK(podChanged(plain(pod), plain(recreated)));
  json unannotated = pod;
  unannotated["metadata"].erase("annotations");
  CHECK(podChanged(plain(pod), plain(unannotated)));
}

TEST_CASE("sameMetadata compares a field of any type and treats absence as a value",
          "[controller][predicates]") {
  const json a = {{"metadata", {{"generation", 1}, {"labels", {{"x", "1"}}}}}};
  const json b = {{"metadata", {{"generation", 1}}}};
  CHECK(sameMetadata(a, b, "generation"));
  CHECK_FALSE(sameMetadata(a, b, "labels"));
  CHECK(sameMetadata(b, b, "labels"));  // absent in both
  CHECK(sameMetadata(json(nullptr), json::array(), "uid"));
}

}  // namespace predicates_test
