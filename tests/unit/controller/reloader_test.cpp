// The controller with --reloader-annotations (docs/architecture.md, "Reloader annotations"): what
// the caches keep, what the index names and what a reconcile writes.
#include <catch2/catch.hpp>

#include "restarter/testing/builders.hpp"

#include "restarter/controller/controller.hpp"
#include "restarter/controller/workload.hpp"
#include "support.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace reloader_test {

using namespace restarter::controller;
using nlohmann::json;

namespace {

const restarter::core::SelectionOptions kReloader{true, false};

// "web" (restarter/testing/builders.hpp) with its metadata annotations, mounting ConfigMap app-config.
json deployment(json workloadAnnotations) {
  json spec = {{"volumes", {{{"name", "config"}, {"configMap", {{"name", "app-config"}}}}}},
               {"containers", {{{"name", "app"}, {"image", "x"}}}}};
  json object = restarter::testing::statefulSet();
  object["metadata"]["annotations"] = std::move(workloadAnnotations);
  object["spec"] = {{"template", {{"metadata", {{"annotations", json::object()}}}, {"spec", std::move(spec)}}}};
  return object;
}

json configMap(const std::string& name, bool match) {
  json cm = {
      {"apiVersion", "meta.k8s.io/v1"},
      {"kind", "PartialObjectMetadata"},
      {"metadata", {{"name", name}, {"namespace", "ns"}, {"uid", name + "-uid"}, {"resourceVersion", "2"}}}};
  if (match) cm["metadata"]["annotations"] = {{"reloader.stakater.com/match", "true"}};
  return cm;
}

struct Fixture {
  Fixture() : harness(false) {
    harness.context->selection = kReloader;
    reconciler = std::make_unique<WorkloadReconciler>(
        workloadResources().front(),
        [this](std::string_view) {
          return std::optional<WorkloadCaches>(WorkloadCaches{&workloads, &configMaps, &secrets});
        },
        *harness.context);
  }
  restarter::controller::testing::Harness harness;
  restarter::cache::PackedStore workloads;
  restarter::cache::MetaStore configMaps;
  restarter::cache::MetaStore secrets;
  std::unique_ptr<WorkloadReconciler> reconciler;

  void seed(const json& workload) {
    restarter::controller::testing::seedStatefulSet(harness, workloads, workload);
  }
  json stored() const { return restarter::controller::testing::storedStatefulSet(harness); }
};

}  // namespace

TEST_CASE("a workload Reloader's annotations do not opt in is cached as a stub", "[controller][reloader]") {
  json plain = deployment({{"other", "x"}});
  CHECK(slimWorkload(plain, kReloader).stub);
  CHECK_FALSE(plain.contains("spec"));
  CHECK(plain["metadata"] ==
        json{{"name", "web"}, {"namespace", "ns"}, {"uid", "sts-uid"}, {"resourceVersion", "10"}});

  json opted = deployment({{"reloader.stakater.com/search", "true"}, {"other", "x"}});
  CHECK_FALSE(slimWorkload(opted, kReloader).stub);
  CHECK(opted["metadata"]["annotations"] == json{{"reloader.stakater.com/search", "true"}});
  CHECK(opted["spec"].contains("template"));

  // Without the flag nothing is cut (the label selector chose the workloads).
  json unflagged = deployment({{"other", "x"}});
  slimWorkload(unflagged, restarter::core::SelectionOptions{});
  CHECK(unflagged.contains("spec"));
}

TEST_CASE("a cached ConfigMap keeps Reloader's match and ignore as booleans", "[controller][reloader]") {
  json cm = configMap("app-config", true);
  cm["metadata"]["annotations"]["reloader.stakater.com/ignore"] = "true";
  cm["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = "{\"data\":{}}";
  slimReferencedObject(cm);
  CHECK(cm["metadata"]["annotations"] ==
        json{{"reloader.stakater.com/ignore", "true"}, {"reloader.stakater.com/match", "true"}});
  restarter::cache::MetaStore store;
  store.replace({cm}, "1");
  auto lookup = cacheLookup(store, store, "ns");
  auto state = lookup(restarter::core::RefKind::ConfigMap, "app-config");
  CHECK(state.reloaderMatch);
  CHECK(state.reloaderIgnore);
}

TEST_CASE("the reference index names the reload lists' objects", "[controller][reloader]") {
  const json w = deployment({{"configmap.reloader.stakater.com/reload", "shared"}});
  CHECK(referenceIndex(restarter::core::RefKind::ConfigMap, kReloader)(w) ==
        std::vector<std::string>{"ns/app-config", "ns/shared"});
  CHECK(referenceIndex(restarter::core::RefKind::ConfigMap)(w) == std::vector<std::string>{"ns/app-config"});
}

TEST_CASE("search tracks only the objects annotated match from a baseline that restarts nothing",
          "[controller][reloader]") {
  Fixture f;
  f.seed(deployment({{"reloader.stakater.com/search", "true"}}));
  f.configMaps.replace({configMap("app-config", false)}, "20");
  f.secrets.replace({}, "20");
  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK(f.harness.api->requests().empty());

  f.configMaps.replace({configMap("app-config", true)}, "21");
  action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  // The running workload is opted in by what search selects now: the version its pods run with is
  // recorded in its metadata (the baseline), the template is left alone (no rollout).
  const json stored = f.stored();
  CHECK(stored["metadata"]["annotations"]["restarter.stackable.tech/baseline"] ==
        "configmap/app-config=app-config-uid/2");
  CHECK(stored["spec"]["template"]["metadata"]["annotations"] == json::object());
  CHECK(stored["metadata"]["generation"] == 1);
}

TEST_CASE("a stub is never written", "[controller][reloader]") {
  Fixture f;
  // Cached as the controller caches it: a stub (workloadEntry).
  f.workloads.setEntryMaker([](json&& object) { return workloadEntry(std::move(object), kReloader); });
  const json stub = deployment({{"other", "x"}});
  f.harness.api->seed(restarter::kube::resources::statefulSets(), stub);
  f.workloads.replace({stub}, "10");
  CHECK((*f.workloads.get("ns/web"))->trim.stub);
  f.configMaps.replace({configMap("app-config", true)}, "20");
  f.secrets.replace({}, "20");
  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK(f.harness.api->requests().empty());
  CHECK(f.harness.api->events().empty());
}

}  // namespace reloader_test
