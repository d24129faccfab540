#include "restarter/core/write_plan.hpp"

#include <catch2/catch.hpp>

#include "restarter/core/constants.hpp"

using namespace restarter::core;
using nlohmann::json;

namespace {

const std::string kPlanCmKey = "configmap.restarter.stackable.tech/app-config";
const std::string kPlanFiller = "example.com/filler";

// A labeled StatefulSet referencing ConfigMap app-config, with the given template and metadata
// annotations.
json planWorkload(const json& templateAnnotations, const json& metadataAnnotations) {
  json object = {{"apiVersion", "apps/v1"}, {"kind", "StatefulSet"}};
  object["metadata"] = {{"name", "web"},
                        {"namespace", "ns"},
                        {"labels", {{"restarter.stackable.tech/enabled", "true"}}},
                        {"annotations", metadataAnnotations}};
  json& podTemplate = object["spec"]["template"];
  podTemplate["metadata"]["annotations"] = templateAnnotations;
  podTemplate["spec"]["volumes"] = json::array({{{"name", "cfg"}, {"configMap", {{"name", "app-config"}}}}});
  podTemplate["spec"]["containers"] = json::array({{{"name", "app"}, {"image", "x"}}});
  return object;
}

// Annotations of exactly `total` bytes: one foreign filler.
json planFilledTo(std::size_t total) { return {{kPlanFiller, std::string(total - kPlanFiller.size(), 'x')}}; }

DesiredAnnotations planDesired(const std::string& value, const std::string& record = "",
                               const std::string& baseline = "") {
  DesiredAnnotations desired;
  desired.annotations = {{kPlanCmKey, value}};
  desired.contentDigests = record;
  desired.baseline = baseline;
  return desired;
}

}  // namespace

TEST_CASE("write plan: nothing to write when the template and the baseline are as desired", "[write_plan]") {
  const json object = planWorkload({{kPlanCmKey, "u/1"}}, json::object());
  const auto plan = planWrite(object, planDesired("u/1"));
  REQUIRE(plan.ok());
  CHECK(plan->kind == WriteKind::None);
  CHECK(plan->changes.empty());
  CHECK(plan->fits());
  CHECK(plan->refusal().empty());
}

TEST_CASE("write plan: a template change carries the content record and empties the baseline", "[write_plan]") {
  const json object =
      planWorkload(json::object(), {{std::string(kBaselineAnnotation), "configmap/app-config=u/1"}});
  const auto plan = planWrite(object, planDesired("u/2", "configmap/app-config=u/2/abc"));
  REQUIRE(plan.ok());
  CHECK(plan->kind == WriteKind::Template);
  REQUIRE(plan->changes.size() == 1);
  REQUIRE(plan->records.size() == 2);
  CHECK(plan->records[0].key == kContentDigestsAnnotation);
  CHECK(plan->records[0].value == "configmap/app-config=u/2/abc");
  CHECK(plan->records[1].key == kBaselineAnnotation);
  CHECK(plan->records[1].value.empty());
  CHECK(plan->templateSize.after == kPlanCmKey.size() + 3);
  // The baseline goes, the record comes.
  CHECK(plan->metadataSize.before == kBaselineAnnotation.size() + 24);
  CHECK(plan->metadataSize.after == kContentDigestsAnnotation.size() + 28);
  CHECK(plan->fits());
}

TEST_CASE("write plan: the controller's last-rollout stamp counts at its longest form", "[write_plan]") {
  const json object = planWorkload(json::object(), json::object());
  const auto webhook = planWrite(object, planDesired("u/2"));
  const auto controller = planWrite(object, planDesired("u/2"), WriteOptions{true});
  REQUIRE(webhook.ok());
  REQUIRE(controller.ok());
  CHECK(webhook->metadataSize.after == 0);
  // "2026-12-03T16:18:36.123456Z": 27 bytes.
  CHECK(controller->metadataSize.after == kLastRolloutAnnotation.size() + 27);
  // Not among the records: its time is the write's.
  for (const MetadataAnnotation& record : controller->records) CHECK(record.key != kLastRolloutAnnotation);
}

TEST_CASE("write plan: a template over the limit does not fit and says so", "[write_plan]") {
  const json templateAnnotations = planFilledTo(kMaxAnnotationsBytes - kPlanCmKey.size() - 2);
  const json object = planWorkload(templateAnnotations, json::object());
  const auto exact = planWrite(object, planDesired("u/"));
  REQUIRE(exact.ok());
  CHECK(exact->templateSize.after == kMaxAnnotationsBytes);
  CHECK(exact->fits());
  const auto over = planWrite(object, planDesired("u/1"));
  REQUIRE(over.ok());
  CHECK_FALSE(over->fits());
  CHECK(
      over->refusal() ==
      "the pod template's annotations would be 262145 bytes (now 262097), over the apiserver's limit of 262144");
}

TEST_CASE("write plan: metadata annotations near the limit refuse the content record", "[write_plan]") {
  // A kubectl last-applied-configuration, say, leaves 40 bytes: the record's key alone needs 40.
  const json object = planWorkload(json::object(), planFilledTo(kMaxAnnotationsBytes - 40));
  const auto plan = planWrite(object, planDesired("u/1", "configmap/app-config=u/1/abc"));
  REQUIRE(plan.ok());
  CHECK(plan->kind == WriteKind::Template);
  CHECK(plan->templateSize.fits());
  CHECK_FALSE(plan->metadataSize.fits());
  CHECK_FALSE(plan->fits());
  CHECK(plan->refusal().find("the workload's metadata annotations would be 262172 bytes (now 262104)") == 0);
  // Without a record (content-aware off) the same write fits.
  const auto plain = planWrite(object, planDesired("u/1"));
  REQUIRE(plain.ok());
  CHECK(plain->fits());
}

TEST_CASE("write plan: a baseline alone is a record-only write and is checked too", "[write_plan]") {
  json object = planWorkload(json::object(), planFilledTo(kMaxAnnotationsBytes - 40));
  DesiredAnnotations desired;
  desired.baseline = "configmap/app-config=u/1";
  const auto plan = planWrite(object, desired);
  REQUIRE(plan.ok());
  CHECK(plan->kind == WriteKind::RecordOnly);
  CHECK(plan->changes.empty());
  REQUIRE(plan->records.size() == 2);
  CHECK(plan->records[0].key == kBaselineAnnotation);
  CHECK_FALSE(plan->fits());
  object["metadata"]["annotations"] = json::object();
  const auto room = planWrite(object, desired);
  REQUIRE(room.ok());
  CHECK(room->fits());
  CHECK(room->metadataSize.after == kBaselineAnnotation.size() + desired.baseline.size());
}

TEST_CASE("write plan: annotations a trimmed copy dropped still count", "[write_plan]") {
  const json object = planWorkload(json::object(), json::object());
  CHECK(metadataAnnotationsBytes(object) == 0);
  WriteOptions trimmed;
  trimmed.omittedAnnotationsBytes = kMaxAnnotationsBytes - 40;
  const auto plan = planWrite(object, planDesired("u/1", "configmap/app-config=u/1/abc"), trimmed);
  REQUIRE(plan.ok());
  CHECK(plan->metadataSize.before == kMaxAnnotationsBytes - 40);
  CHECK_FALSE(plan->metadataSize.fits());
  // The same copy, nothing trimmed: the record fits.
  const auto whole = planWrite(object, planDesired("u/1", "configmap/app-config=u/1/abc"));
  REQUIRE(whole.ok());
  CHECK(whole->metadataSize.fits());
}

TEST_CASE("write plan: annotations of the wrong type are invalid input", "[write_plan]") {
  json object = planWorkload(json::object(), json::object());
  object["spec"]["template"]["metadata"]["annotations"] = json::array();
  CHECK_FALSE(planWrite(object, planDesired("u/1")).ok());
}
