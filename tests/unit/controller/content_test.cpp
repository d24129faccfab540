// The workload reconciler with content-aware caches (docs/architecture.md, "Content-aware
// restarts"): a metadata-only change writes nothing, a content change writes the template and
// the content record, migration writes nothing.
#include <algorithm>

#include <catch2/catch.hpp>

#include "restarter/testing/builders.hpp"

#include "restarter/controller/controller.hpp"
#include "restarter/controller/workload.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/content.hpp"
#include "support.hpp"

using namespace restarter::controller;
using nlohmann::json;

namespace {

const char* kCm = "configmap.restarter.stackable.tech/app-config";
const std::string kRecord(restarter::core::kContentDigestsAnnotation);

const restarter::core::DigestKey& contentTestKey() {
  static const restarter::core::DigestKey key = *restarter::core::DigestKey::fromBytes(std::string(32, 'k'));
  return key;
}

// "web" (restarter/testing/builders.hpp) with its metadata annotations, mounting ConfigMap app-config.
json recordingStatefulSet(json templateAnnotations, json workloadAnnotations = json::object()) {
  json object = restarter::testing::statefulSet();
  object["metadata"]["annotations"] = std::move(workloadAnnotations);
  object["spec"] = {{"template",
                     {{"metadata", {{"annotations", std::move(templateAnnotations)}}},
                      {"spec",
                       {{"volumes", {{{"name", "c"}, {"configMap", {{"name", "app-config"}}}}}},
                        {"containers", {{{"name", "app"}, {"image", "x"}}}}}}}}};
  return object;
}

// A whole ConfigMap as the API sends it (the content-aware cache's entry maker hashes and slims it).
json cachedConfigMap(const std::string& rv, const std::string& value, json labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata",
           {{"name", "app-config"},
            {"namespace", "ns"},
            {"uid", "cm-uid"},
            {"resourceVersion", rv},
            {"labels", labels},
            {"annotations", {{"kubectl.kubernetes.io/last-applied-configuration", value}}}}},
          {"data", {{"key", value}}}};
}

// The h1 digest (what releases before this one wrote: the content alone, keyed) of a ConfigMap
// holding `value`.
std::string h1DigestOf(const std::string& value) {
  json object = {{"data", {{"key", value}}}};
  return restarter::core::formatDigest(
      *restarter::core::keyedContentDigest(object, restarter::core::RefKind::ConfigMap, contentTestKey()));
}

// The h2 digest of ns/app-config with `uid` holding `value`, as the cache holds it.
std::string keyedDigestOf(const std::string& value, const std::string& uid = "cm-uid") {
  json object = {{"metadata", {{"namespace", "ns"}, {"name", "app-config"}, {"uid", uid}}},
                 {"data", {{"key", value}}}};
  return restarter::core::formatDigest(
      *restarter::core::objectContentDigest(object, restarter::core::RefKind::ConfigMap, contentTestKey()));
}

// A record entry's digest text: h2 (what this release writes), or h1.
std::string digestOf(const std::string& value, const std::string& uid = "cm-uid") {
  return "h2." + contentTestKey().id() + "." + keyedDigestOf(value, uid);
}
std::string h1EntryOf(const std::string& value) {
  return "h1." + contentTestKey().id() + "." + h1DigestOf(value);
}

struct Fixture {
  // The ConfigMaps cached as the controller caches them with `key` (nullopt: metadata only, the
  // content not read).
  explicit Fixture(std::optional<restarter::core::DigestKey> key = contentTestKey()) : harness(false) {
    configMaps.setEntryMaker([key](json&& object) {
      return referencedEntry(std::move(object), restarter::core::RefKind::ConfigMap, key ? &*key : nullptr);
    });
    reconciler = std::make_unique<WorkloadReconciler>(
        workloadResources().front(),
        [this](std::string_view) {
          return std::optional<WorkloadCaches>(WorkloadCaches{&workloads, &configMaps, &secrets});
        },
        *harness.context);
    harness.context->digestKeyId = contentTestKey().id();
    secrets.replace({}, "1");
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
  json storedTemplateAnnotations() const { return stored()["spec"]["template"]["metadata"]["annotations"]; }
  std::string storedRecord() const { return stored()["metadata"]["annotations"].value(kRecord, ""); }
  std::size_t workloadWrites() const { return restarter::controller::testing::statefulSetWrites(harness); }
};

}  // namespace

TEST_CASE("the content-aware entry keeps digests beside the metadata and drops the content",
          "[controller][content]") {
  auto meta = referencedEntry(cachedConfigMap("5", "s3cr3t", {{"team", "x"}}),
                              restarter::core::RefKind::ConfigMap, &contentTestKey());
  REQUIRE(meta);
  CHECK(meta->resourceVersion == "5");
  CHECK(meta->labels.empty());  // slimmed: only the ignore label is kept
  CHECK(meta->contentDigest == restarter::core::parseDigest(keyedDigestOf("s3cr3t")));
  CHECK(meta->otherDigest == restarter::core::parseDigest(h1DigestOf("s3cr3t")));
  CHECK(keyedDigestOf("s3cr3t") != h1DigestOf("s3cr3t"));
  CHECK(meta->keyDigestsKnown);
  CHECK(meta->keyDigests.size() == 1);

  json unhashable = {{"metadata", {{"name", "x"}, {"uid", "u"}, {"resourceVersion", "1"}}}, {"data", "s3cr3t"}};
  auto noDigest = referencedEntry(std::move(unhashable), restarter::core::RefKind::Secret, &contentTestKey());
  REQUIRE(noDigest);
  CHECK_FALSE(noDigest->contentDigest);
  CHECK_FALSE(noDigest->otherDigest);
  CHECK_FALSE(noDigest->keyDigestsKnown);

  // Metadata only: no digest, whatever the object holds.
  auto metadataOnly =
      referencedEntry(cachedConfigMap("5", "s3cr3t"), restarter::core::RefKind::ConfigMap, nullptr);
  REQUIRE(metadataOnly);
  CHECK_FALSE(metadataOnly->contentDigest);
  CHECK_FALSE(metadataOnly->keyDigestsKnown);
  CHECK_FALSE(
      referencedEntry(json{{"data", {{"key", "v"}}}}, restarter::core::RefKind::ConfigMap, &contentTestKey()));
}

TEST_CASE("a metadata-only change with a recorded digest sends no request", "[controller][content]") {
  Fixture f;
  f.seed(recordingStatefulSet({{kCm, "cm-uid/1"}},
                              {{kRecord, "configmap/app-config=cm-uid/1/" + digestOf("v1")}}));
  f.configMaps.replace({cachedConfigMap("2", "v1", {{"team", "x"}})}, "20");
  auto action = f.reconciler->reconcile({"ns", "web"});
  REQUIRE(action.ok());
  CHECK(f.harness.api->requests().empty());
  const std::string logs = f.harness.logs.str();
  CHECK(logs.find("same content as recorded, no restart") != std::string::npos);
  CHECK(logs.find("configmap/app-config: cm-uid/1 kept, now cm-uid/2") != std::string::npos);
  // The same state again logs nothing more.
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  const std::string again = f.harness.logs.str();
  CHECK(again.find("same content as recorded, no restart", logs.size()) == std::string::npos);
}

TEST_CASE("an h1 record whose content still matches is rewritten as h2 in a metadata-only write",
          "[controller][content]") {
  Fixture f;
  // As the previous release left it: the template at version 1, the record h1 (content only); since
  // then a metadata-only change (version 2, same content).
  f.seed(recordingStatefulSet({{kCm, "cm-uid/1"}},
                              {{kRecord, "configmap/app-config=cm-uid/1/" + h1EntryOf("v1")}}));
  f.configMaps.replace({cachedConfigMap("2", "v1", {{"team", "x"}})}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.workloadWrites() == 1);
  CHECK(f.harness.api->events().empty());  // nothing restarts
  // The template keeps its version (no restart: generation 1), the record comes back keyed for it.
  CHECK(f.storedTemplateAnnotations() == json{{kCm, "cm-uid/1"}});
  CHECK(f.stored()["metadata"]["generation"] == 1);
  CHECK(f.storedRecord() == "configmap/app-config=cm-uid/1/" + digestOf("v1"));
  CHECK(f.harness.logs.str().find("content record rewritten keyed, no restart") != std::string::npos);
  // Before the cache shows that write: planned against it, nothing more is written.
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.workloadWrites() == 1);
}

TEST_CASE("an h1 record whose content changed rolls and records h2", "[controller][content]") {
  Fixture f;
  f.seed(recordingStatefulSet({{kCm, "cm-uid/1"}},
                              {{kRecord, "configmap/app-config=cm-uid/1/" + h1EntryOf("v1")}}));
  f.configMaps.replace({cachedConfigMap("3", "v2")}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.storedTemplateAnnotations() == json{{kCm, "cm-uid/3"}});
  CHECK(f.storedRecord() == "configmap/app-config=cm-uid/3/" + digestOf("v2"));
  REQUIRE(f.harness.api->events().size() == 1);
  CHECK(f.harness.api->events()[0]["reason"] == "Restarted");
}

TEST_CASE("a content change applies the new version and records its digest", "[controller][content]") {
  Fixture f;
  f.seed(recordingStatefulSet({{kCm, "cm-uid/1"}},
                              {{kRecord, "configmap/app-config=cm-uid/1/" + digestOf("v1")}}));
  f.configMaps.replace({cachedConfigMap("3", "v2")}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.storedTemplateAnnotations() == json{{kCm, "cm-uid/3"}});
  CHECK(f.stored()["metadata"]["generation"] == 2);
  CHECK(f.storedRecord() == "configmap/app-config=cm-uid/3/" + digestOf("v2"));
  const auto events = f.harness.api->events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["note"].get<std::string>().find("cm-uid/1 -> cm-uid/3 (updated)") != std::string::npos);
}

TEST_CASE(
    "a migrated workload gets its content record alone and its first metadata-only change restarts nothing",
    "[controller][content]") {
  Fixture f;
  // As commons-operator leaves it (or a release that did not read this kind's content): the
  // current version, no record.
  f.seed(recordingStatefulSet({{kCm, "cm-uid/1"}}));
  f.configMaps.replace({cachedConfigMap("1", "v1")}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  // One metadata-only write: the record of the version the template holds, the template untouched.
  CHECK(f.workloadWrites() == 1);
  CHECK(f.storedTemplateAnnotations() == json{{kCm, "cm-uid/1"}});
  CHECK(f.stored()["metadata"]["generation"] == 1);
  CHECK(f.storedRecord() == "configmap/app-config=cm-uid/1/" + digestOf("v1"));
  CHECK(f.harness.logs.str().find("content record completed, no restart") != std::string::npos);
  CHECK(f.harness.api->events().empty());

  // A new version with the same content: no restart, no write.
  f.configMaps.replace({cachedConfigMap("2", "v1", {{"team", "x"}})}, "21");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.workloadWrites() == 1);
  CHECK(f.storedTemplateAnnotations() == json{{kCm, "cm-uid/1"}});

  // Its content changes: one rollout.
  f.configMaps.replace({cachedConfigMap("3", "v2")}, "22");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.workloadWrites() == 2);
  CHECK(f.storedTemplateAnnotations() == json{{kCm, "cm-uid/3"}});
  CHECK(f.storedRecord() == "configmap/app-config=cm-uid/3/" + digestOf("v2"));
}

TEST_CASE("a re-created object rolls even with the same content", "[controller][content]") {
  Fixture f;
  f.seed(recordingStatefulSet({{kCm, "old-uid/1"}},
                              {{kRecord, "configmap/app-config=old-uid/1/" + digestOf("v1", "old-uid")}}));
  // Deleted and re-created (a new uid) with the content the template's version had: the h2 digest
  // covers the uid (docs/architecture.md, "Keyed digests"), so the new object's digest is not the
  // recorded one and the workload rolls once.
  f.configMaps.replace({cachedConfigMap("9", "v1")}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.storedTemplateAnnotations() == json{{kCm, "cm-uid/9"}});
  CHECK(f.storedRecord() == "configmap/app-config=cm-uid/9/" + digestOf("v1"));
  const auto events = f.harness.api->events();
  REQUIRE(events.size() == 1);
  CHECK(events[0]["note"].get<std::string>().find("(recreated)") != std::string::npos);
}

TEST_CASE("without content in the cache every new version rolls and no record is sent",
          "[controller][content]") {
  Fixture f(std::nullopt);
  f.seed(recordingStatefulSet({{kCm, "cm-uid/1"}},
                              {{kRecord, "configmap/app-config=cm-uid/1/" + digestOf("v1")}}));
  // --content-aware=off: metadata-only entries, no digest.
  f.configMaps.replace(
      {json{{"metadata",
             {{"name", "app-config"}, {"namespace", "ns"}, {"uid", "cm-uid"}, {"resourceVersion", "2"}}}}},
      "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.storedTemplateAnnotations() == json{{kCm, "cm-uid/2"}});
  // No record in the apply: server-side apply then removes the one restarter owned. (The
  // in-memory server has no field ownership, so the apply itself is what shows it.)
  const auto requests = f.harness.api->requests();
  const auto apply = std::find_if(requests.begin(), requests.end(),
                                  [](const auto& request) { return request.method == "PATCH"; });
  REQUIRE(apply != requests.end());
  CHECK_FALSE(json::parse(apply->body)["metadata"]["annotations"].contains(kRecord));
}

TEST_CASE("the workload slim keeps the content record", "[controller][content]") {
  json sts =
      recordingStatefulSet(json::object(), {{kRecord, "configmap/a=u/1/" + digestOf("x")}, {"other", "y"}});
  slimWorkload(sts);
  CHECK(sts["metadata"]["annotations"] == json{{kRecord, "configmap/a=u/1/" + digestOf("x")}});
}

TEST_CASE("during a rotation a relabel of a record under the previous key restarts nothing and rewrites it",
          "[controller][content]") {
  // The rotation of issue 39: records under the key before; the controller restarted with the new
  // key and the previous one beside it. A relabel (new version, same content) in that window must
  // not restart, and the record comes back under the new key in one metadata-only write.
  const restarter::core::DigestKey rotated =
      restarter::core::DigestKey::fromBytes(std::string(32, 'n'))->withPrevious(contentTestKey());
  Fixture f(rotated);
  f.harness.context->digestKeyId = rotated.id();
  f.harness.context->otherDigest = otherDigestKind(rotated);
  CHECK(f.harness.context->otherDigest.keyId == contentTestKey().id());
  f.seed(recordingStatefulSet({{kCm, "cm-uid/1"}},
                              {{kRecord, "configmap/app-config=cm-uid/1/" + digestOf("v1")}}));
  // The cache as the rotated controller slims it: h2 under the new key, h2 under the previous one.
  json whole = {{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"metadata",
                 {{"name", "app-config"},
                  {"namespace", "ns"},
                  {"uid", "cm-uid"},
                  {"resourceVersion", "2"},
                  {"labels", {{"team", "x"}}}}},
                {"data", {{"key", "v1"}}}};
  CHECK(referencedEntry(json(whole), restarter::core::RefKind::ConfigMap, &rotated)->otherDigest ==
        restarter::core::parseDigest(keyedDigestOf("v1")));  // under the previous key
  f.configMaps.replace({whole}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.workloadWrites() == 1);
  CHECK(f.harness.api->events().empty());
  CHECK(f.stored()["metadata"]["generation"] == 1);
  CHECK(f.storedTemplateAnnotations() == json{{kCm, "cm-uid/1"}});
  json underNew = {{"metadata", {{"namespace", "ns"}, {"name", "app-config"}, {"uid", "cm-uid"}}},
                   {"data", {{"key", "v1"}}}};
  CHECK(f.storedRecord() == "configmap/app-config=cm-uid/1/h2." + rotated.id() + "." +
                                restarter::core::formatDigest(*restarter::core::objectContentDigest(
                                    underNew, restarter::core::RefKind::ConfigMap, rotated)));
}

TEST_CASE("after a rotation without the previous key a record under the old key cannot be compared and rolls",
          "[controller][content]") {
  // What the issue measured with the old procedure (delete the key, restart): the previous key
  // is gone, so the relabel is judged a change. This is why the rotation keeps it.
  const restarter::core::DigestKey fresh = *restarter::core::DigestKey::fromBytes(std::string(32, 'n'));
  Fixture f(fresh);
  f.harness.context->digestKeyId = fresh.id();
  f.harness.context->otherDigest = otherDigestKind(fresh);
  f.seed(recordingStatefulSet({{kCm, "cm-uid/1"}},
                              {{kRecord, "configmap/app-config=cm-uid/1/" + digestOf("v1")}}));
  json whole = {
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", "app-config"}, {"namespace", "ns"}, {"uid", "cm-uid"}, {"resourceVersion", "2"}}},
      {"data", {{"key", "v1"}}}};
  f.configMaps.replace({whole}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.storedTemplateAnnotations() == json{{kCm, "cm-uid/2"}});
  CHECK(f.harness.api->events().size() == 1);
}

TEST_CASE("through the cache a workload reading one key is not written when another key changes",
          "[controller][content]") {
  Fixture f;
  auto sharedMap = [](const std::string& rv, const std::string& read, const std::string& other) {
    json object = {
        {"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata", {{"name", "app-config"}, {"namespace", "ns"}, {"uid", "cm-uid"}, {"resourceVersion", rv}}},
        {"data", {{"read", read}, {"other", other}}}};
    return object;
  };
  json workload = restarter::testing::statefulSet();
  workload["spec"] = {
      {"template",
       {{"metadata", {{"annotations", {{kCm, "cm-uid/1"}}}}},
        {"spec",
         {{"containers",
           {{{"name", "app"},
             {"image", "x"},
             {"env",
              {{{"name", "R"},
                {"valueFrom", {{"configMapKeyRef", {{"name", "app-config"}, {"key", "read"}}}}}}}}}}}}}}}};
  f.seed(workload);
  // Annotated, no record yet: the record is completed with the digest of the key read.
  f.configMaps.replace({sharedMap("1", "r1", "o1")}, "20");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.storedTemplateAnnotations() == json{{kCm, "cm-uid/1"}});
  CHECK(f.storedRecord().find("configmap/app-config=cm-uid/1/k2.") == 0);
  const std::size_t writes = f.workloadWrites();

  f.configMaps.replace({sharedMap("2", "r1", "o2")}, "21");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.workloadWrites() == writes);

  f.configMaps.replace({sharedMap("3", "r2", "o2")}, "22");
  REQUIRE(f.reconciler->reconcile({"ns", "web"}).ok());
  CHECK(f.workloadWrites() == writes + 1);
  CHECK(f.storedTemplateAnnotations() == json{{kCm, "cm-uid/3"}});
}
