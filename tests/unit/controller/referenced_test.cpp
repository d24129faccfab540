// The controller keeps as entries only the ConfigMaps a workload references, and reads one it came
// to reference from the API once (docs/architecture.md, "Memory that follows references"): the
// whole controller over the in-memory API server.
#include <chrono>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "restarter/base/clock.hpp"
#include "restarter/controller/controller.hpp"
#include "restarter/testing/builders.hpp"
#include "restarter/testing/fake_api_server.hpp"
#include "support.hpp"

using namespace restarter;
using namespace restarter::controller;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

json referencedConfigMap(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", "ns"}}},
          {"data", {{"v", "1"}}}};
}

// The labeled StatefulSet "web" reading ConfigMaps `names` through envFrom.
json referencingWeb(const std::vector<std::string>& names) {
  json envFrom = json::array();
  for (const auto& name : names) envFrom.push_back({{"configMapRef", {{"name", name}}}});
  json sts = restarter::testing::statefulSet(
      {{"metadata", {{"labels", {{"restarter.stackable.tech/enabled", "true"}}}}},
       {"spec",
        {{"replicas", 1},
         {"selector", {{"matchLabels", {{"app", "web"}}}}},
         {"template",
          {{"metadata", {{"labels", {{"app", "web"}}}}},
           {"spec", {{"containers", {{{"name", "c"}, {"image", "i"}, {"envFrom", envFrom}}}}}}}}}}});
  sts["metadata"].erase("uid");
  sts["metadata"].erase("resourceVersion");
  return sts;
}

// Polls `condition` until it holds or 30 s pass (a deadline for a broken build, not a timing).
bool referencesEventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

struct ReferencesFixture {
  ReferencesFixture() {
    auto server = std::make_unique<restarter::testing::FakeApiServer>();
    api = server.get();
    client = std::make_unique<kube::Client>(std::move(server),
                                            std::make_unique<restarter::controller::testing::NoAuth>(), "ns",
                                            base::systemClock());
  }
  ~ReferencesFixture() {
    stop.request_stop();
    if (runner.joinable()) runner.join();
  }
  void start() {
    ControllerOptions options;
    options.namespaces = {"ns"};
    options.debounce = 0ms;
    options.minRolloutInterval = 0ms;
    options.identity = "me";
    controller = std::make_unique<Controller>(*client, options, logger, registry, base::systemClock());
    runner = std::thread([this] { (void)controller->run(stop.get_token()); });
  }
  std::size_t gets(const std::string& path) const {
    std::size_t count = 0;
    for (const kube::Request& request : api->requests()) {
      if (request.method == "GET" && request.path.substr(0, request.path.find('?')) == path) ++count;
    }
    return count;
  }
  bool metric(const std::string& line) const { return registry.render().find(line) != std::string::npos; }
  json statefulSet() const { return *api->object(kube::resources::statefulSets(), "ns", "web"); }
  std::string templateAnnotation(const std::string& key) const {
    const json sts = statefulSet();
    const json::json_pointer annotations("/spec/template/metadata/annotations");
    if (!sts.contains(annotations)) return {};
    auto it = sts.at(annotations).find(key);
    return it != sts.at(annotations).end() ? it->get<std::string>() : std::string();
  }
  std::string versionOf(const std::string& name) const {
    const json cm = *api->object(kube::resources::configMaps(), "ns", name);
    return cm["metadata"]["uid"].get<std::string>() + "/" +
           cm["metadata"]["resourceVersion"].get<std::string>();
  }
  // The baseline the first look records (metadata annotation restarter.stackable.tech/baseline)
  // names `entry` ("configmap/app=<uid>/<rv>" and so on).
  bool baselineNames(const std::string& entry) const {
    const json sts = statefulSet();
    const json::json_pointer pointer("/metadata/annotations/restarter.stackable.tech~1baseline");
    return sts.contains(pointer) && sts.at(pointer).get<std::string>().find(entry) != std::string::npos;
  }
  // The content record (metadata annotation restarter.stackable.tech/content-digests) holds `entry`.
  bool recordNames(const std::string& entry) const {
    const json sts = statefulSet();
    const json::json_pointer pointer("/metadata/annotations/restarter.stackable.tech~1content-digests");
    return sts.contains(pointer) && sts.at(pointer).get<std::string>().find(entry) != std::string::npos;
  }
  void update(const std::string& name, const std::string& value) {
    REQUIRE(client->mergePatch(kube::resources::configMaps(), "ns", name, {{"data", {{"v", value}}}}).ok());
  }

  restarter::testing::FakeApiServer* api = nullptr;
  std::unique_ptr<kube::Client> client;
  std::ostringstream logs;
  obs::Logger logger{logs, obs::LogFormat::Text, obs::LogLevel::Debug};
  obs::Registry registry;
  std::unique_ptr<Controller> controller;
  std::stop_source stop;
  std::thread runner;
};

const std::string kReferencesUnloaded = "restarter_controller_cache_unloaded_objects{resource=\"configmaps\"} ";

}  // namespace

TEST_CASE("only referenced ConfigMaps are cached as entries and an unreferenced one's changes read nothing",
          "[controller][references]") {
  ReferencesFixture f;
  f.api->seed(kube::resources::configMaps(), referencedConfigMap("app"));
  f.api->seed(kube::resources::configMaps(), referencedConfigMap("unrelated"));
  f.api->seed(kube::resources::statefulSets(), referencingWeb({"app"}));
  f.start();
  // The first look records the baseline of "app"; "unrelated" is held only as existing.
  REQUIRE(referencesEventually([&] { return f.baselineNames("configmap/app=" + f.versionOf("app")); }));
  REQUIRE(referencesEventually([&] { return f.metric(kReferencesUnloaded + "1"); }));
  f.update("unrelated", "2");
  f.update("app", "2");
  const std::string key = "configmap.restarter.stackable.tech/app";
  REQUIRE(referencesEventually([&] { return f.templateAnnotation(key) == f.versionOf("app"); }));
  // Neither ConfigMap was ever read one by one: the list and the watch told everything.
  CHECK(f.gets("/api/v1/namespaces/ns/configmaps/app") == 0);
  CHECK(f.gets("/api/v1/namespaces/ns/configmaps/unrelated") == 0);
  REQUIRE(referencesEventually([&] { return f.metric(kReferencesUnloaded + "1"); }));
}

TEST_CASE("a new reference to an unreferenced ConfigMap reads it once and then follows its changes",
          "[controller][references]") {
  ReferencesFixture f;
  f.api->seed(kube::resources::configMaps(), referencedConfigMap("app"));
  f.api->seed(kube::resources::configMaps(), referencedConfigMap("later"));
  f.api->seed(kube::resources::statefulSets(), referencingWeb({"app"}));
  f.start();
  REQUIRE(referencesEventually([&] { return f.baselineNames("configmap/app=" + f.versionOf("app")); }));
  REQUIRE(referencesEventually([&] { return f.metric(kReferencesUnloaded + "1"); }));
  // The StatefulSet comes to read "later" (its owner edits the template).
  json edited = f.statefulSet();
  edited["spec"]["template"]["spec"]["containers"][0]["envFrom"].push_back(
      {{"configMapRef", {{"name", "later"}}}});
  REQUIRE(f.client->replace(kube::resources::statefulSets(), "ns", "web", edited).ok());
  REQUIRE(referencesEventually([&] {
    return f.metric("restarter_controller_reference_loads_total{resource=\"configmaps\",result=\"loaded\"} 1");
  }));
  CHECK(f.gets("/api/v1/namespaces/ns/configmaps/later") == 1);
  REQUIRE(referencesEventually([&] { return f.metric(kReferencesUnloaded + "0"); }));
  // What the controller records for the new reference settles before the change below.
  REQUIRE(referencesEventually([&] {
    return f.baselineNames("configmap/later=" + f.versionOf("later")) ||
           f.templateAnnotation("configmap.restarter.stackable.tech/later") == f.versionOf("later");
  }));
  // The read object was hashed as the reflector would have (the store's entry maker): the content
  // record has its digest.
  REQUIRE(
      referencesEventually([&] { return f.recordNames("configmap/later=" + f.versionOf("later") + "/h2."); }));
  // From now on its changes come by the watch and roll the StatefulSet, with no further read.
  f.update("later", "2");
  const std::string key = "configmap.restarter.stackable.tech/later";
  REQUIRE(referencesEventually([&] { return f.templateAnnotation(key) == f.versionOf("later"); }));
  CHECK(f.gets("/api/v1/namespaces/ns/configmaps/later") == 1);
}

TEST_CASE("a referenced ConfigMap created after its workload is cached without a read",
          "[controller][references]") {
  ReferencesFixture f;
  json sts = referencingWeb({"late"});
  sts["spec"]["template"]["spec"]["containers"][0]["envFrom"][0]["configMapRef"]["optional"] = true;
  f.api->seed(kube::resources::statefulSets(), sts);
  f.start();
  REQUIRE(referencesEventually([&] { return f.controller->synced(); }));
  f.api->seed(kube::resources::configMaps(), referencedConfigMap("late"));
  REQUIRE(referencesEventually(
      [&] { return f.metric("restarter_controller_cache_objects{resource=\"configmaps\"} 1"); }));
  CHECK(f.metric(kReferencesUnloaded + "0"));
  CHECK(f.gets("/api/v1/namespaces/ns/configmaps/late") == 0);
}
