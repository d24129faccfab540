#include <catch2/catch.hpp>

#include "restarter/controller/controller.hpp"
#include "restarter/core/write_plan.hpp"

using namespace restarter::controller;
using nlohmann::json;

TEST_CASE("a cached ConfigMap keeps identity and the ignore label only", "[controller][cache]") {
  json cm = {{"apiVersion", "meta.k8s.io/v1"},
             {"kind", "PartialObjectMetadata"},
             {"metadata",
              {{"name", "a"},
               {"namespace", "ns"},
               {"uid", "u"},
               {"resourceVersion", "7"},
               {"labels", {{"restarter.stackable.tech/ignore", "true"}, {"app", "x"}}},
               {"annotations", {{"kubectl.kubernetes.io/last-applied-configuration", "{...}"}}},
               {"managedFields", json::array({{{"manager", "kubectl"}}})}}}};
  slimReferencedObject(cm);
  CHECK(cm == json{{"apiVersion", "meta.k8s.io/v1"},
                   {"kind", "PartialObjectMetadata"},
                   {"metadata",
                    {{"name", "a"},
                     {"namespace", "ns"},
                     {"uid", "u"},
                     {"resourceVersion", "7"},
                     {"labels", {{"restarter.stackable.tech/ignore", "true"}}}}}});
}

TEST_CASE("a cached workload keeps its template and ignore annotations and roll inputs",
          "[controller][cache]") {
  json sts = {{"apiVersion", "apps/v1"},
              {"kind", "StatefulSet"},
              {"metadata",
               {{"name", "web"},
                {"namespace", "ns"},
                {"uid", "u"},
                {"resourceVersion", "7"},
                {"generation", 3},
                {"labels", {{"restarter.stackable.tech/enabled", "true"}}},
                {"annotations",
                 {{"restarter.stackable.tech/ignore-secret.x", "s"},
                  {"other", "y"},
                  {"restarter.stackable.tech/baseline", "configmap/a=u/1"},
                  {"restarter.stackable.tech/ondelete", "manual"},
                  {"restarter.stackable.tech/rollout", "manual"}}}}},
              {"spec",
               {{"replicas", 3},
                {"template", {{"spec", {{"containers", json::array()}}}}},
                {"updateStrategy", {{"type", "OnDelete"}}},
                {"serviceName", "web"},
                {"volumeClaimTemplates", json::array()}}},
              {"status", {{"replicas", 3}, {"updateRevision", "web-1"}, {"conditions", json::array()}}}};
  const restarter::cache::PackedTrim trim = slimWorkload(sts);
  CHECK(sts["status"] == json{{"replicas", 3}, {"updateRevision", "web-1"}});
  CHECK(sts["spec"] == json{{"replicas", 3},
                            {"template", {{"spec", {{"containers", json::array()}}}}},
                            {"updateStrategy", {{"type", "OnDelete"}}}});
  CHECK(sts["metadata"]["annotations"] == json{{"restarter.stackable.tech/ignore-secret.x", "s"},
                                               {"restarter.stackable.tech/baseline", "configmap/a=u/1"},
                                               {"restarter.stackable.tech/ondelete", "manual"},
                                               {"restarter.stackable.tech/rollout", "manual"}});
  CHECK(sts["metadata"]["generation"] == 3);
  CHECK(sts["metadata"]["labels"].size() == 1);
  // The dropped annotation ("other": "y") still counts for the size check of a write: its bytes
  // are kept beside the copy, not in it.
  CHECK(trim.omittedAnnotationsBytes == 6);
  CHECK_FALSE(trim.stub);
  CHECK(restarter::core::metadataAnnotationsBytes(sts) == 41 + 48 + 39 + 38);
  CHECK(sts.size() == 5);  // apiVersion, kind, metadata, spec, status: no field added
  // Packed as the cache keeps it: the same copy, the count beside it.
  json whole = sts;
  whole["metadata"]["annotations"]["other"] = "y";
  auto entry = workloadEntry(std::move(whole), restarter::core::SelectionOptions{});
  REQUIRE(entry);
  CHECK(entry->unpack() == sts);
  CHECK(entry->trim.omittedAnnotationsBytes == 6);
}

TEST_CASE("a cached pod keeps its expiry annotations", "[controller][cache]") {
  json pod = {{"metadata",
               {{"name", "p"},
                {"namespace", "ns"},
                {"uid", "u"},
                {"resourceVersion", "7"},
                {"deletionTimestamp", "2026-01-01T00:00:00Z"},
                {"annotations", {{"restarter.stackable.tech/expires-at.tls", "t"}, {"x", "y"}}}}},
              {"spec", {{"nodeName", "n"}}}};
  slimPod(pod);
  CHECK_FALSE(pod.contains("spec"));
  CHECK(pod["metadata"]["annotations"] == json{{"restarter.stackable.tech/expires-at.tls", "t"}});
  CHECK(pod["metadata"]["deletionTimestamp"] == "2026-01-01T00:00:00Z");
  slimPod(pod);  // idempotent
  CHECK(pod["metadata"]["uid"] == "u");
}
