#include "restarter/core/template_diff.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace restarter::core;
using nlohmann::json;

namespace {

json podTemplate() {
  return {
      {"metadata",
       {{"labels", {{"app", "web"}}}, {"annotations", {{"configmap.restarter.stackable.tech/cfg", "u/1"}}}}},
      {"spec",
       {{"containers",
         {{{"name", "app"}, {"image", "web:1"}, {"args", {"--a", "--b"}}},
          {{"name", "sidecar"}, {"image", "proxy:1"}}}},
        {"volumes", {{{"name", "cfg"}, {"configMap", {{"name", "cfg"}}}}}}}}};
}

}  // namespace

TEST_CASE("identical templates have no changes", "[template-diff]") {
  CHECK(templateChangePaths(podTemplate(), podTemplate()).empty());
}

TEST_CASE("changes are named by container and field", "[template-diff]") {
  json after = podTemplate();
  after["spec"]["containers"][0]["image"] = "web:2";
  after["spec"]["containers"][1]["args"] = {"-v"};
  after["metadata"]["labels"]["tier"] = "front";
  after["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] = "2026-11-29T18:00:00Z";
  CHECK(templateChangePaths(podTemplate(), after) ==
        std::vector<std::string>{"metadata.annotations[kubectl.kubernetes.io/restartedAt]",
                                 "metadata.labels.tier", "containers[app].image", "containers[sidecar].args"});
}

TEST_CASE("restarter-owned annotations are left to the annotation diff", "[template-diff]") {
  json after = podTemplate();
  after["metadata"]["annotations"]["configmap.restarter.stackable.tech/cfg"] = "u/2";
  after["metadata"]["annotations"]["secret.restarter.stackable.tech/new"] = "s/1";
  CHECK(templateChangePaths(podTemplate(), after).empty());
}

TEST_CASE("added and removed named elements and unnamed lists", "[template-diff]") {
  json after = podTemplate();
  after["spec"]["containers"].erase(1);
  after["spec"]["volumes"].push_back({{"name", "extra"}, {"emptyDir", json::object()}});
  after["spec"]["containers"][0]["args"] = {"--a", "--c"};
  CHECK(templateChangePaths(podTemplate(), after) ==
        std::vector<std::string>{"containers[app].args[1]", "containers[sidecar]", "volumes[extra]"});
  json longer = podTemplate();
  longer["spec"]["containers"][0]["args"].push_back("--d");
  CHECK(templateChangePaths(podTemplate(), longer) == std::vector<std::string>{"containers[app].args"});
}

TEST_CASE("type changes and non-object templates compare as wholes", "[template-diff]") {
  json after = podTemplate();
  after["spec"]["volumes"] = "oops";
  CHECK(templateChangePaths(podTemplate(), after) == std::vector<std::string>{"volumes"});
  CHECK(templateChangePaths(json(1), json(2)) == std::vector<std::string>{""});
  CHECK(templateChangePaths(nullptr, podTemplate()) == std::vector<std::string>{""});
}

TEST_CASE("the first restarter annotation is not a metadata change", "[template-diff]") {
  json before = podTemplate();
  before["metadata"].erase("annotations");
  json emptied = podTemplate();
  emptied["metadata"]["annotations"] = json::object();
  CHECK(templateChangePaths(before, podTemplate()).empty());
  CHECK(templateChangePaths(emptied, podTemplate()).empty());
}
