#include "restarter/core/json_patch.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace restarter::core;
using nlohmann::json;

namespace {

AnnotationChange add(std::string key, std::string value) {
  AnnotationChange c;
  c.key = std::move(key);
  c.after = std::move(value);
  return c;
}
AnnotationChange remove(std::string key, std::string old) {
  AnnotationChange c;
  c.key = std::move(key);
  c.before = std::move(old);
  return c;
}

json stsWithTemplate(const json& podTemplate) {
  return {{"kind", "StatefulSet"}, {"spec", {{"template", podTemplate}}}};
}

// Applies the patch with nlohmann's own RFC 6902 implementation and returns the annotations.
json annotationsAfter(const json& sts, const std::vector<AnnotationChange>& changes) {
  auto patch = annotationPatch(sts, changes);
  REQUIRE(patch.ok());
  const json patched = sts.patch(*patch);
  return patched["spec"]["template"]["metadata"].value("annotations", json::object());
}

}  // namespace

TEST_CASE("pointer tokens escape '~' before '/'", "[patch]") {
  CHECK(escapeJsonPointerToken("configmap.restarter.stackable.tech/app") ==
        "configmap.restarter.stackable.tech~1app");
  CHECK(escapeJsonPointerToken("a~b/c") == "a~0b~1c");
  CHECK(escapeJsonPointerToken("~1") == "~01");
  CHECK(escapeJsonPointerToken("") == "");
}

TEST_CASE("missing template metadata is created with every value at once", "[patch]") {
  const json sts = stsWithTemplate({{"spec", json::object()}});
  const std::vector<AnnotationChange> changes = {add("configmap.restarter.stackable.tech/a", "u/1"),
                                                 add("secret.restarter.stackable.tech/b", "v/2")};
  auto patch = annotationPatch(sts, changes);
  REQUIRE(patch.ok());
  REQUIRE(patch->size() == 1);
  CHECK((*patch)[0]["path"] == "/spec/template/metadata");
  CHECK(annotationsAfter(sts, changes) ==
        json{{"configmap.restarter.stackable.tech/a", "u/1"}, {"secret.restarter.stackable.tech/b", "v/2"}});
}

TEST_CASE("missing annotations are created under existing metadata", "[patch]") {
  const json sts = stsWithTemplate({{"metadata", {{"labels", {{"app", "x"}}}}}});
  const std::vector<AnnotationChange> changes = {add("configmap.restarter.stackable.tech/a", "u/1")};
  auto patch = annotationPatch(sts, changes);
  REQUIRE(patch.ok());
  REQUIRE(patch->size() == 1);
  CHECK((*patch)[0]["path"] == "/spec/template/metadata/annotations");
  const json patched = sts.patch(*patch);
  CHECK(patched["spec"]["template"]["metadata"]["labels"]["app"] == "x");
  CHECK(patched["spec"]["template"]["metadata"]["annotations"].size() == 1);
}

TEST_CASE("existing annotations get per-key add and remove and foreign keys stay", "[patch]") {
  const json sts = stsWithTemplate({{"metadata",
                                     {{"annotations",
                                       {{"configmap.restarter.stackable.tech/a", "u/1"},
                                        {"configmap.restarter.stackable.tech/old", "o/1"},
                                        {"weird~key/x", "keep"}}}}}});
  const std::vector<AnnotationChange> changes = {add("configmap.restarter.stackable.tech/a", "u/2"),
                                                 remove("configmap.restarter.stackable.tech/old", "o/1"),
                                                 add("secret.restarter.stackable.tech/n~ew", "s/1"),
                                                 remove("configmap.restarter.stackable.tech/not-there", "x/1")};
  CHECK(annotationsAfter(sts, changes) == json{{"configmap.restarter.stackable.tech/a", "u/2"},
                                               {"secret.restarter.stackable.tech/n~ew", "s/1"},
                                               {"weird~key/x", "keep"}});
}

TEST_CASE("only removals on a template without annotations is an empty patch", "[patch]") {
  const json sts = stsWithTemplate(json::object());
  auto patch = annotationPatch(sts, {remove("configmap.restarter.stackable.tech/a", "u/1")});
  REQUIRE(patch.ok());
  CHECK(patch->empty());
  auto none = annotationPatch(sts, {});
  REQUIRE(none.ok());
  CHECK(none->empty());
}

TEST_CASE("malformed workloads are patch errors", "[patch]") {
  const std::vector<AnnotationChange> changes = {add("configmap.restarter.stackable.tech/a", "u/1")};
  for (const json& bad :
       {json{{"kind", "StatefulSet"}}, json{{"spec", json::object()}}, json{{"spec", {{"template", "x"}}}},
        json{{"spec", {{"template", {{"metadata", 1}}}}}},
        json{{"spec", {{"template", {{"metadata", {{"annotations", json::array()}}}}}}}}, json::array()}) {
    INFO(bad.dump());
    auto patch = annotationPatch(bad, changes);
    REQUIRE_FALSE(patch.ok());
    CHECK(patch.error().kind == ErrorKind::InvalidInput);
  }
}

TEST_CASE("contentRecordPatch sets or replaces or removes the record under metadata.annotations") {
  const std::string key = "restarter.stackable.tech~1content-digests";
  json bare = {{"spec", {{"template", json::object()}}}};
  auto noMetadata = contentRecordPatch(bare, "r1");
  REQUIRE(noMetadata);
  CHECK(*noMetadata ==
        json::array({{{"op", "add"},
                      {"path", "/metadata"},
                      {"value", {{"annotations", {{"restarter.stackable.tech/content-digests", "r1"}}}}}}}));
  json named = {{"metadata", {{"name", "web"}}}};
  auto noAnnotations = contentRecordPatch(named, "r1");
  REQUIRE(noAnnotations);
  CHECK((*noAnnotations)[0]["path"] == "/metadata/annotations");
  named["metadata"]["annotations"] = {{"restarter.stackable.tech/content-digests", "r0"}, {"x", "y"}};
  auto replaced = contentRecordPatch(named, "r1");
  REQUIRE(replaced);
  CHECK(*replaced == json::array({{{"op", "add"}, {"path", "/metadata/annotations/" + key}, {"value", "r1"}}}));
  auto same = contentRecordPatch(named, "r0");
  REQUIRE(same);
  CHECK(same->empty());
  auto removed = contentRecordPatch(named, "");
  REQUIRE(removed);
  CHECK(*removed == json::array({{{"op", "remove"}, {"path", "/metadata/annotations/" + key}}}));
  auto nothing = contentRecordPatch(bare, "");
  REQUIRE(nothing);
  CHECK(nothing->empty());
  CHECK_FALSE(contentRecordPatch(json{{"metadata", 5}}, "r1"));
  CHECK_FALSE(contentRecordPatch(json{{"metadata", {{"annotations", "x"}}}}, "r1"));
}
