#include "restarter/cli/explain_restart.hpp"

#include <catch2/catch.hpp>

#include "restarter/cli/yaml_output.hpp"

using namespace restarter;
using namespace restarter::cli;
using nlohmann::json;

namespace {

const std::string kCm = "configmap.restarter.stackable.tech/cfg";

json podTemplate(const std::string& image, const json& annotations) {
  return {{"metadata", {{"labels", {{"app", "web"}}}, {"annotations", annotations}}},
          {"spec",
           {{"containers", {{{"name", "app"}, {"image", image}}}},
            {"volumes", {{{"name", "cfg"}, {"configMap", {{"name", "cfg"}}}}}}}}};
}

ExplainInput sampleInput() {
  ExplainInput input;
  input.kind = core::WorkloadKind::StatefulSet;
  input.workload = {{"metadata", {{"name", "web"}, {"namespace", "shop"}, {"uid", "w-uid"}, {"generation", 3}}},
                    {"spec", {{"template", podTemplate("web:2", {{kCm, "u/2"}})}}}};
  input.revisions = {{"web-1", 1, "2026-11-29T18:00:00Z", podTemplate("web:1", {{kCm, "u/1"}}), 0},
                     {"web-2", 2, "2026-11-29T18:01:00Z", podTemplate("web:1", {{kCm, "u/2"}}), 0},
                     {"web-3", 3, "2026-11-29T18:02:00Z", podTemplate("web:2", {{kCm, "u/2"}}), 2}};
  input.currentRevision = "web-3";
  input.desired = core::desiredAnnotations(input.workload, [](core::RefKind, const std::string&) {
    return core::ObjectState::present("u", "3", false);
  });
  return input;
}

// ordered_json compares key order too; the schema does not fix it, so compare as plain JSON.
json plain(const nlohmann::ordered_json& value) { return json::parse(value.dump()); }

}  // namespace

TEST_CASE("the explanation document follows its schema", "[cli][explain]") {
  const auto doc = explanationDocument(sampleInput());
  CHECK(doc["apiVersion"] == "restarter.stackable.tech/v1alpha1");
  CHECK(doc["kind"] == "RestartExplanation");
  CHECK(plain(doc["workload"]) == json{{"kind", "StatefulSet"}, {"namespace", "shop"}, {"name", "web"},
                                {"uid", "w-uid"}, {"generation", 3}});
  CHECK(doc["firstRollout"]["verdict"] == "restart-free");
  REQUIRE(doc["revisions"].size() == 3);
  CHECK(plain(doc["revisions"][0]["causes"]) == json::array({{{"type", "created"}}}));
  CHECK(plain(doc["revisions"][1]["causes"][0]) == json{{"type", "annotation"},
                                                 {"object", {{"kind", "configmap"}, {"name", "cfg"}}},
                                                 {"change", "updated"},
                                                 {"before", "u/1"},
                                                 {"after", "u/2"}});
  CHECK(plain(doc["revisions"][2]["causes"][0]) == json{{"type", "template"}, {"path", "containers[app].image"}});
  CHECK(doc["revisions"][2]["current"] == true);
  CHECK(doc["revisions"][2]["pods"] == 2);
  CHECK(doc["pending"]["status"] == "restart-due");
  CHECK(doc["pending"]["changes"][0]["after"] == "u/3");
  CHECK(plain(doc["pending"]["references"][0]) == json{{"kind", "configmap"}, {"name", "cfg"}, {"optional", false},
                                                {"disposition", "tracked"}, {"value", "u/3"}});
}

TEST_CASE("the text names every cause and colours only when asked", "[cli][explain]") {
  const auto doc = explanationDocument(sampleInput());
  const std::string plain = renderText(doc, false);
  CHECK_THAT(plain, Catch::Contains("StatefulSet shop/web") &&
                        Catch::Contains("configmap/cfg: u/1 -> u/2 (updated)") &&
                        Catch::Contains("containers[app].image changed") &&
                        Catch::Contains("a restart is due") && Catch::Contains("3 *"));
  CHECK(plain.find('\033') == std::string::npos);
  CHECK(renderText(doc, true).find("\033[1m") != std::string::npos);
}

TEST_CASE("the writer line names who last wrote the annotations and does not contradict the verdict",
          "[cli][explain]") {
  // A webhook-annotated StatefulSet whose ConfigMap later changed: revision 1 was complete
  // (restart-free) and the controller owns the annotations now. The text must not claim the
  // controller wrote them after creation, which would read as the extra restart.
  auto doc = explanationDocument(sampleInput());
  doc["firstRollout"]["verdict"] = "restart-free";
  doc["firstRollout"]["annotationsWrittenBy"] = "controller";
  doc["firstRollout"]["fieldManager"] = "restarter-statefulset";
  const std::string plain = renderText(doc, false);
  CHECK_THAT(plain, Catch::Contains("restart-free") &&
                        Catch::Contains("last written by the controller (restarter-statefulset)"));
  CHECK(plain.find("after creation") == std::string::npos);
}

TEST_CASE("an unreadable reference makes pending unknown with the reason", "[cli][explain]") {
  ExplainInput input = sampleInput();
  input.desired = core::desiredAnnotations(input.workload, [](core::RefKind, const std::string&) {
    return core::ObjectState::unknown("forbidden");
  });
  const auto doc = explanationDocument(input);
  CHECK(doc["pending"]["status"] == "unknown");
  CHECK_THAT(doc["pending"]["reason"].get<std::string>(), Catch::Contains("forbidden"));
  CHECK_THAT(renderText(doc, false), Catch::Contains("Pending: unknown"));
}

TEST_CASE("yaml output quotes strings that would read as other types", "[cli][yaml]") {
  const std::string yaml = toYaml(nlohmann::ordered_json{{"a", "true"}, {"b", "123"}, {"c", true}, {"d", nullptr},
                                                         {"e", json::array({1, "x"})}});
  CHECK_THAT(yaml, Catch::Contains("a: \"true\"") && Catch::Contains("b: \"123\"") &&
                       Catch::Contains("c: true") && Catch::Contains("d: ~"));
}
