#include "restarter/core/rollout_source.hpp"

#include <string>

#include <catch2/catch.hpp>

#include "restarter/core/explain.hpp"

using namespace restarter::core;
using nlohmann::json;

namespace {

json rollout(json spec) {
  return {{"metadata", {{"name", "web"}, {"namespace", "shop"}}}, {"spec", std::move(spec)}};
}

json deploymentRef(std::string name) {
  return {
      {"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", std::move(name)}, {"scaleDown", "onsuccess"}};
}

}  // namespace

TEST_CASE("rollout source: a Rollout with a template and every other kind use their own template",
          "[rollout_source]") {
  const json withTemplate = rollout({{"template", {{"spec", {{"containers", json::array()}}}}}});
  CHECK(podTemplateSourceOf(withTemplate, WorkloadKind::Rollout).source == TemplateSource::Own);
  // A Deployment is never asked about workloadRef, even when it has such a field.
  const json deployment = rollout({{"workloadRef", deploymentRef("web")}});
  CHECK(podTemplateSourceOf(deployment, WorkloadKind::Deployment).source == TemplateSource::Own);
  CHECK(podTemplateSourceOf(json::array(), WorkloadKind::Rollout).source == TemplateSource::Own);
}

TEST_CASE("rollout source: a workloadRef to an apps Deployment names it", "[rollout_source]") {
  const PodTemplateSource source =
      podTemplateSourceOf(rollout({{"workloadRef", deploymentRef("web-base")}}), WorkloadKind::Rollout);
  CHECK(source.source == TemplateSource::WorkloadRef);
  CHECK(source.name == "web-base");
  CHECK(source.problem.empty());
  // The reference decides, whatever the (empty) template holds.
  const PodTemplateSource withEmptyTemplate = podTemplateSourceOf(
      rollout({{"workloadRef", deploymentRef("web-base")}, {"template", {{"metadata", json::object()}}}}),
      WorkloadKind::Rollout);
  CHECK(withEmptyTemplate.source == TemplateSource::WorkloadRef);
}

TEST_CASE("rollout source: a Rollout without template and workloadRef has nothing to manage",
          "[rollout_source]") {
  for (const json& spec : {json::object(), json{{"workloadRef", nullptr}}, json{{"template", "x"}}}) {
    const PodTemplateSource source = podTemplateSourceOf(rollout(spec), WorkloadKind::Rollout);
    CHECK(source.source == TemplateSource::Missing);
    CHECK(source.problem == "the Rollout has neither spec.template nor spec.workloadRef");
  }
  CHECK(podTemplateSourceOf(json{{"metadata", json::object()}}, WorkloadKind::Rollout).source ==
        TemplateSource::Missing);
}

TEST_CASE("rollout source: a workloadRef restarter does not follow says why", "[rollout_source]") {
  auto problem = [](json ref) {
    const PodTemplateSource source =
        podTemplateSourceOf(rollout({{"workloadRef", std::move(ref)}}), WorkloadKind::Rollout);
    CHECK(source.source == TemplateSource::Unsupported);
    CHECK(source.name.empty());
    return source.problem;
  };
  CHECK(problem("web") == "spec.workloadRef is not an object");
  CHECK(problem({{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}, {"name", "web"}}) ==
        "spec.workloadRef names \"apps/v1\" \"ReplicaSet\": restarter follows only an apps Deployment");
  CHECK(problem({{"apiVersion", "v1"}, {"kind", "Deployment"}, {"name", "web"}})
            .find("only an apps Deployment") != std::string::npos);
  CHECK(problem({{"apiVersion", "apps/v1"}, {"kind", "Deployment"}}) ==
        "spec.workloadRef names no Deployment (no name)");
  json otherNamespace = deploymentRef("web");
  otherNamespace["namespace"] = "elsewhere";
  CHECK(problem(otherNamespace) ==
        "spec.workloadRef.namespace: a workloadRef resolves in the Rollout's own namespace only");
  // A kind of 1 MiB is cut in the message.
  const std::string huge(1 << 20, 'K');
  CHECK(problem({{"apiVersion", "apps/v1"}, {"kind", huge}, {"name", "web"}}).size() < 300);
}

TEST_CASE("rollout source: kubectl's spellings of the Rollout kind parse", "[rollout_source]") {
  for (const char* text : {"rollout", "Rollouts", "ro", "rollout.argoproj.io"}) {
    auto parsed = parseWorkloadKind(text);
    REQUIRE(parsed.ok());
    CHECK(*parsed == WorkloadKind::Rollout);
  }
  CHECK(fieldManagerFor(WorkloadKind::Rollout) == "restarter.stackable.tech/rollout");
  CHECK(std::string(workloadKindName(WorkloadKind::Rollout)) == "Rollout");
}
