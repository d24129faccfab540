// Argo Rollouts' Rollout in the workload reconciler (docs/behaviour.md, "Argo Rollouts"): a
// Rollout with its own template is annotated as a Deployment is, under its own field manager; one
// whose template is its workloadRef's, or that has none, is never written and is explained once
// per generation.
#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

#include "restarter/controller/workload.hpp"
#include "restarter/testing/builders.hpp"
#include "support.hpp"

using namespace restarter::controller;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

const WorkloadResource& argoRolloutKind() {
  const auto& kinds = workloadResources();
  const auto row = std::find_if(kinds.begin(), kinds.end(), [](const WorkloadResource& kind) {
    return kind.coreKind == restarter::core::WorkloadKind::Rollout;
  });
  REQUIRE(row != kinds.end());
  return *row;
}

json argoRollout(const std::string& name, json spec, int generation = 1) {
  return {{"apiVersion", "argoproj.io/v1alpha1"},
          {"kind", "Rollout"},
          {"metadata",
           {{"name", name},
            {"namespace", "ns"},
            {"uid", name + "-uid"},
            {"resourceVersion", "5"},
            {"generation", generation},
            {"labels", {{"restarter.stackable.tech/enabled", "true"}}}}},
          {"spec", std::move(spec)}};
}

json refTo(const std::string& name, const std::string& kind = "Deployment") {
  return {{"workloadRef", {{"apiVersion", "apps/v1"}, {"kind", kind}, {"name", name}}}};
}

json managedDeployment(const std::string& name) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata",
           {{"name", name},
            {"namespace", "ns"},
            {"uid", name + "-uid"},
            {"resourceVersion", "3"},
            {"labels", {{"restarter.stackable.tech/enabled", "true"}}}}},
          {"spec", {{"template", {{"spec", {{"containers", json::array()}}}}}}}};
}

json cfgMap(const std::string& uid, const std::string& rv) {
  return {{"apiVersion", "meta.k8s.io/v1"},
          {"kind", "PartialObjectMetadata"},
          {"metadata", {{"name", "cfg"}, {"namespace", "ns"}, {"uid", uid}, {"resourceVersion", rv}}}};
}

struct RolloutFixture {
  RolloutFixture() : harness(false) {
    rollouts.addIndex(kConfigMapIndex, packedReferenceIndex(restarter::core::RefKind::ConfigMap));
    configMaps.replace({cfgMap("cm-uid", "7")}, "20");
    secrets.replace({}, "20");
    deployments.replace({}, "20");
    reconciler = std::make_unique<WorkloadReconciler>(
        argoRolloutKind(),
        [this](std::string_view) {
          return std::optional<WorkloadCaches>(WorkloadCaches{&rollouts, &configMaps, &secrets, &deployments});
        },
        *harness.context);
  }
  // How many log lines contain `text`.
  std::size_t logged(const std::string& text) const {
    const std::string logs = harness.logs.str();
    std::size_t count = 0;
    for (std::size_t at = logs.find(text); at != std::string::npos; at = logs.find(text, at + 1)) ++count;
    return count;
  }
  restarter::controller::testing::Harness harness;
  restarter::cache::PackedStore rollouts;
  restarter::cache::MetaStore configMaps;
  restarter::cache::MetaStore secrets;
  restarter::cache::PackedStore deployments;
  std::unique_ptr<WorkloadReconciler> reconciler;
};

}  // namespace

TEST_CASE("a Rollout with its own template is annotated under the rollout field manager",
          "[controller][rollout]") {
  RolloutFixture f;
  const json web = argoRollout(
      "web",
      {{"template",
        // Annotated at an older version of cfg (by the webhook at creation, say): a change.
        {{"metadata", {{"annotations", {{"configmap.restarter.stackable.tech/cfg", "cm-uid/6"}}}}},
         {"spec",
          {{"containers", {{{"name", "app"}, {"envFrom", {{{"configMapRef", {{"name", "cfg"}}}}}}}}}}}}}});
  f.harness.api->seed(restarter::kube::resources::rollouts(), web);
  f.rollouts.replace({web}, "10");
  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  auto stored = f.harness.api->object(restarter::kube::resources::rollouts(), "ns", "web");
  REQUIRE(stored);
  CHECK((*stored)["spec"]["template"]["metadata"]["annotations"]["configmap.restarter.stackable.tech/cfg"] ==
        "cm-uid/7");
  const auto requests = f.harness.api->requests();
  REQUIRE_FALSE(requests.empty());
  CHECK((*stored)["metadata"]["generation"] == 2);
  CHECK(requests[0].path.find("/apis/argoproj.io/v1alpha1/namespaces/ns/rollouts/web") == 0);
  CHECK(requests[0].path.find("fieldManager=restarter.stackable.tech%2Frollout") != std::string::npos);
}

TEST_CASE("a workloadRef Rollout is never written and its managed Deployment is said once",
          "[controller][rollout]") {
  RolloutFixture f;
  f.deployments.replace({managedDeployment("base")}, "21");
  f.rollouts.replace({argoRollout("ref", refTo("base"))}, "10");
  for (int i = 0; i < 3; ++i) {
    auto action = f.reconciler->reconcile({"ns", "ref"});
    REQUIRE(action.ok());
    CHECK_FALSE(action->requeueAfter);
  }
  CHECK(f.harness.api->requests().empty());
  CHECK(f.logged("pod template is the workloadRef Deployment's, which restarter manages") == 1);
  CHECK(f.logged("deployment=ns/base") == 1);
}

TEST_CASE("a workloadRef Deployment that is missing is warned once per generation and looked for again",
          "[controller][rollout]") {
  RolloutFixture f;
  f.rollouts.replace({argoRollout("ref", refTo("base"))}, "10");
  for (int i = 0; i < 3; ++i) {
    auto action = f.reconciler->reconcile({"ns", "ref"});
    REQUIRE(action.ok());
    CHECK(action->requeueAfter == kWorkloadRefRecheck);
  }
  CHECK(f.logged("the workloadRef Deployment is missing or not labeled") == 1);
  // A new generation is said again.
  f.rollouts.replace({argoRollout("ref", refTo("base"), 2)}, "11");
  REQUIRE(f.reconciler->reconcile({"ns", "ref"}).ok());
  CHECK(f.logged("the workloadRef Deployment is missing or not labeled") == 2);
  // The Deployment arrives (created with the Rollout, or labeled later): found at the next look.
  f.deployments.replace({managedDeployment("base")}, "22");
  auto found = f.reconciler->reconcile({"ns", "ref"});
  REQUIRE(found.ok());
  CHECK_FALSE(found->requeueAfter);
  CHECK(f.logged("which restarter manages") == 1);
  CHECK(f.harness.api->requests().empty());
}

TEST_CASE("a Rollout restarter cannot manage is warned once per generation and never written",
          "[controller][rollout]") {
  RolloutFixture f;
  f.rollouts.replace(
      {argoRollout("empty", {{"replicas", 1}}), argoRollout("other", refTo("base", "StatefulSet"))}, "10");
  for (int i = 0; i < 3; ++i) {
    for (const char* name : {"empty", "other"}) {
      auto action = f.reconciler->reconcile({"ns", name});
      REQUIRE(action.ok());
      CHECK_FALSE(action->requeueAfter);
    }
  }
  CHECK(f.logged("nothing to manage") == 2);
  CHECK(f.logged("neither spec.template nor spec.workloadRef") == 1);
  CHECK(f.logged("restarter follows only an apps Deployment") == 1);
  CHECK(f.harness.api->requests().empty());
}
