#include "restarter/core/roll_input.hpp"

#include <catch2/catch.hpp>

#include "restarter/base/rfc3339.hpp"
#include "restarter/testing/builders.hpp"

using namespace restarter::core;
using nlohmann::json;

namespace {

// "web" (restarter/testing/builders.hpp) with the OnDelete strategy and the manual roll, rolling to web-abc;
// without apiVersion, kind, namespace or resourceVersion (not read here).
json manualStatefulSet() {
  return restarter::testing::statefulSet(json::parse(R"({
    "apiVersion": null, "kind": null,
    "metadata": {"namespace": null, "resourceVersion": null, "uid": "u1", "generation": 4,
                 "annotations": {"restarter.stackable.tech/ondelete": "manual"}},
    "spec": {"replicas": 3, "minReadySeconds": 5, "updateStrategy": {"type": "OnDelete"}},
    "status": {"observedGeneration": 4, "updateRevision": "web-abc", "currentRevision": "web-old"}
  })"));
}

json pod() {
  return json::parse(R"({
    "metadata": {"name": "web-12", "creationTimestamp": "2030-01-01T10:00:00Z",
                 "labels": {"controller-revision-hash": "web-abc"},
                 "ownerReferences": [{"uid": "u1", "controller": true}]},
    "spec": {"nodeName": "kwok-node-0"},
    "status": {"conditions": [
      {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2030-01-01T10:00:00Z"},
      {"type": "Ready", "status": "True", "lastTransitionTime": "2030-01-01T10:00:07Z"}]}
  })");
}

}  // namespace

TEST_CASE("a StatefulSet's roll inputs", "[roll]") {
  auto w = rollWorkloadFromJson(manualStatefulSet(), WorkloadKind::StatefulSet);
  REQUIRE(w);
  CHECK(w->strategy == UpdateStrategy::OnDelete);
  CHECK(w->manual);
  CHECK(w->statusCurrent);
  CHECK(w->updateRevision == "web-abc");
  CHECK(w->desired == 3);
  CHECK(w->minReadySeconds == std::chrono::seconds{5});

  SECTION("defaults: RollingUpdate, one replica, not opted out by another value") {
    json s = manualStatefulSet();
    s["spec"].erase("updateStrategy");
    s["spec"].erase("replicas");
    s["metadata"]["annotations"]["restarter.stackable.tech/ondelete"] = "auto";
    auto d = rollWorkloadFromJson(s, WorkloadKind::StatefulSet);
    REQUIRE(d);
    CHECK(d->strategy == UpdateStrategy::RollingUpdate);
    CHECK(d->desired == 1);
    CHECK_FALSE(d->manual);
  }
  SECTION("a partition") {
    json s = manualStatefulSet();
    s["spec"]["updateStrategy"] = {{"type", "RollingUpdate"}, {"rollingUpdate", {{"partition", 2}}}};
    CHECK(rollWorkloadFromJson(s, WorkloadKind::StatefulSet)->partition == 2);
  }
  SECTION("a status behind the generation, or without one, is not current") {
    json s = manualStatefulSet();
    s["status"]["observedGeneration"] = 3;
    CHECK_FALSE(rollWorkloadFromJson(s, WorkloadKind::StatefulSet)->statusCurrent);
    s.erase("status");
    CHECK_FALSE(rollWorkloadFromJson(s, WorkloadKind::StatefulSet)->statusCurrent);
  }
  SECTION("wrong types are errors naming the field, never exceptions") {
    for (const char* bad :
         {R"({"spec": {"replicas": "3"}})", R"({"spec": []})",
          R"({"metadata": {"annotations": {"restarter.stackable.tech/ondelete": 1}}})",
          R"({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 1.5}}}})", R"([])"}) {
      auto r = rollWorkloadFromJson(json::parse(bad), WorkloadKind::StatefulSet);
      CHECK_FALSE(r);
      if (!r) CHECK(r.error().kind == ErrorKind::InvalidInput);
    }
  }
  SECTION("a Deployment has no roll") {
    CHECK_FALSE(rollWorkloadFromJson(manualStatefulSet(), WorkloadKind::Deployment));
  }
}

TEST_CASE("a DaemonSet's roll inputs take the revision from its ControllerRevisions", "[roll]") {
  const json daemonSet = json::parse(R"({
    "metadata": {"name": "agent", "uid": "d1", "generation": 2},
    "spec": {"updateStrategy": {"type": "OnDelete"}},
    "status": {"observedGeneration": 2, "desiredNumberScheduled": 2}})");
  auto revision = [](const char* uid, int number, const char* hash) {
    return json{{"metadata",
                 {{"labels", {{"controller-revision-hash", hash}}},
                  {"ownerReferences", json::array({{{"uid", uid}, {"controller", true}}})}}},
                {"revision", number}};
  };
  const std::vector<json> revisions = {revision("d1", 1, "h1"), revision("d1", 3, "h3"),
                                       revision("other", 9, "h9"), revision("d1", 2, "h2"), json("odd")};
  CHECK(daemonSetRevisionHash(revisions, "d1") == "h3");
  CHECK(daemonSetRevisionHash(revisions, "none").empty());
  auto w = rollWorkloadFromJson(daemonSet, WorkloadKind::DaemonSet, "h3");
  REQUIRE(w);
  CHECK(w->updateRevision == "h3");
  CHECK(w->desired == 2);
  CHECK(w->strategy == UpdateStrategy::OnDelete);
}

TEST_CASE("a pod's roll inputs", "[roll]") {
  auto p = rollPodFromJson(pod(), WorkloadKind::StatefulSet);
  REQUIRE(p);
  CHECK(p->name == "web-12");
  CHECK(p->ordinal == 12);
  CHECK(p->revision == "web-abc");
  CHECK(p->node == "kwok-node-0");
  CHECK(p->ready);
  CHECK_FALSE(p->terminating);
  CHECK(p->since == restarter::base::parseRfc3339("2030-01-01T10:00:07Z").value());
  CHECK(controlledBy(pod(), "u1"));
  CHECK_FALSE(controlledBy(pod(), "u2"));
  CHECK_FALSE(controlledBy(pod(), ""));

  SECTION("a DaemonSet pod has no ordinal") {
    CHECK(rollPodFromJson(pod(), WorkloadKind::DaemonSet)->ordinal == -1);
  }
  SECTION("terminating") {
    json q = pod();
    q["metadata"]["deletionTimestamp"] = "2030-01-01T11:00:00Z";
    CHECK(rollPodFromJson(q, WorkloadKind::StatefulSet)->terminating);
  }
  SECTION("not Ready without a condition: not Ready since its creation") {
    json q = pod();
    q.erase("status");
    auto r = rollPodFromJson(q, WorkloadKind::StatefulSet);
    REQUIRE(r);
    CHECK_FALSE(r->ready);
    CHECK(r->since == restarter::base::parseRfc3339("2030-01-01T10:00:00Z").value());
  }
  SECTION("names without a numeric suffix have no ordinal") {
    for (const char* name : {"web", "web-", "web-x1", "web-1x"}) {
      json q = pod();
      q["metadata"]["name"] = name;
      CHECK(rollPodFromJson(q, WorkloadKind::StatefulSet)->ordinal == -1);
    }
  }
  SECTION("wrong types are errors, never exceptions") {
    for (const char* path : {"/status/conditions", "/metadata/labels", "/metadata/name", "/spec/nodeName"}) {
      json q = pod();
      q[json::json_pointer(path)] = 7;
      CHECK_FALSE(rollPodFromJson(q, WorkloadKind::StatefulSet));
    }
    json q = pod();
    q["status"]["conditions"][1]["status"] = true;
    CHECK_FALSE(rollPodFromJson(q, WorkloadKind::StatefulSet));
    CHECK_FALSE(rollPodFromJson(json::array(), WorkloadKind::StatefulSet));
  }
}

TEST_CASE("the pod selector comes from matchLabels", "[roll]") {
  CHECK(podSelector(json::parse(R"({"spec": {"selector": {"matchLabels": {"a": "1", "b": "2", "n": 3}}}})")) ==
        "a=1,b=2");
  CHECK(podSelector(json::parse(R"({"spec": {"selector": {"matchExpressions": []}}})")).empty());
  CHECK(podSelector(json::parse(R"({"spec": {"selector": "x"}})")).empty());
  CHECK(podSelector(json::array()).empty());
}
