// The baseline decisions of core::desiredAnnotations (docs/architecture.md, "Restart only when
// pods need it"): opt-in, objects created after or deleted under a running workload, and the one
// rollout that takes every held reference.
#include "restarter/core/baseline.hpp"

#include <map>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "restarter/core/annotations.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/json_patch.hpp"

using namespace restarter::core;
using nlohmann::json;

namespace {

const std::string kCmTemplateKey = "configmap.restarter.stackable.tech/app-config";
const std::string kSecretTemplateKey = "secret.restarter.stackable.tech/app-secret";
const std::string kBaselineKey(kBaselineAnnotation);
const std::string kRecordKey(kContentDigestsAnnotation);
const ContentDigest kDigestA = *parseDigest("00112233445566778899aabbccddeeff");
const ContentDigest kDigestB = *parseDigest("ffeeddccbbaa99887766554433221100");

// A StatefulSet using ConfigMap app-config (volume, `optional` as given) and Secret app-secret
// (envFrom, required), with the given template and metadata annotations.
json runningSts(const json& templateAnnotations = nullptr, const json& metadataAnnotations = nullptr,
                bool configMapOptional = false) {
  json sts = {
      {"apiVersion", "apps/v1"},
      {"kind", "StatefulSet"},
      {"metadata", {{"name", "web"}, {"namespace", "default"}}},
      {"spec",
       {{"template",
         {{"metadata", {{"labels", {{"app", "web"}}}}},
          {"spec",
           {{"volumes",
             {{{"name", "cfg"}, {"configMap", {{"name", "app-config"}, {"optional", configMapOptional}}}}}},
            {"containers",
             {{{"name", "app"}, {"envFrom", {{{"secretRef", {{"name", "app-secret"}}}}}}}}}}}}}}}};
  if (!templateAnnotations.is_null()) sts["spec"]["template"]["metadata"]["annotations"] = templateAnnotations;
  if (!metadataAnnotations.is_null()) sts["metadata"]["annotations"] = metadataAnnotations;
  return sts;
}

using StateTable = std::map<RefKind, ObjectState>;

ObjectLookup tableLookup(StateTable table) {
  return [table = std::move(table)](RefKind kind, const std::string&) {
    const auto it = table.find(kind);
    return it == table.end() ? ObjectState::absent() : it->second;
  };
}

ObjectState cmAt(const std::string& rv, std::optional<ContentDigest> digest = kDigestA,
                 const std::string& uid = "cm-uid") {
  return ObjectState::present(uid, rv, false, digest);
}
ObjectState secretAt(const std::string& rv) { return ObjectState::present("s-uid", rv, false); }

DesiredAnnotations baselineDesired(const json& sts, const StateTable& table,
                                   DesiredOptions options = {true, false}) {
  auto result = desiredAnnotations(sts, tableLookup(table), options);
  if (!result.ok()) FAIL(result.error().describe());
  return result.value();
}

std::vector<AnnotationChange> baselinePlan(const json& sts, const DesiredAnnotations& desired) {
  auto plan = planAnnotationChanges(sts, desired);
  REQUIRE(plan.ok());
  return plan.value();
}

const ReferenceStatus& referenceStatusOf(const DesiredAnnotations& desired, RefKind kind) {
  for (const ReferenceStatus& status : desired.references) {
    if (status.ref.kind == kind) return status;
  }
  FAIL("no such reference");
  return desired.references.front();
}

}  // namespace

TEST_CASE("baseline records parse and format and skip entries that do not parse", "[core][baseline]") {
  const BaselineRecords records = parseBaseline(
      "secret/b=u2/7,configmap/a=u1/41,bad,pod/x=u/1,configmap/c=u/1/2,"
      "configmap/d=/1,configmap/e=u/,=u/1");
  CHECK(records == BaselineRecords{{"configmap/a", "u1/41"}, {"secret/b", "u2/7"}});
  CHECK(formatBaseline(records) == "configmap/a=u1/41,secret/b=u2/7");
  CHECK(formatBaseline({}).empty());
  CHECK(parseBaseline("").empty());
  CHECK(recordedBaseline(runningSts(nullptr, {{kBaselineKey, "configmap/a=u1/41"}})) ==
        BaselineRecords{{"configmap/a", "u1/41"}});
  CHECK(recordedBaseline(runningSts(nullptr, {{kBaselineKey, 7}})).empty());
  CHECK(recordedBaseline(json::array()).empty());
}

TEST_CASE("a workload carries a restarter record when any of restarter's annotations is there",
          "[core][baseline]") {
  CHECK_FALSE(hasRestarterRecord(runningSts()));
  CHECK_FALSE(hasRestarterRecord(runningSts({{"other", "x"}}, {{"team", "a"}})));
  CHECK(hasRestarterRecord(runningSts({{kCmTemplateKey, "cm-uid/1"}})));
  for (const std::string_view key : {kBaselineAnnotation, kContentDigestsAnnotation, kLastRolloutAnnotation}) {
    CHECK(hasRestarterRecord(runningSts(nullptr, {{std::string(key), ""}})));
  }
  CHECK_FALSE(hasRestarterRecord(json("not an object")));
}

TEST_CASE("a running workload opted in records what its pods run with and restarts nothing",
          "[core][baseline]") {
  const json sts = runningSts();
  const DesiredAnnotations desired =
      baselineDesired(sts, {{RefKind::ConfigMap, cmAt("41")}, {RefKind::Secret, secretAt("7")}});
  CHECK(desired.optingIn);
  CHECK(desired.annotations.empty());
  CHECK(baselinePlan(sts, desired).empty());
  CHECK(desired.baseline == "configmap/app-config=cm-uid/41,secret/app-secret=s-uid/7");
  CHECK(desired.contentDigests == "configmap/app-config=cm-uid/41/" + formatDigest(kDigestA));
  CHECK(referenceStatusOf(desired, RefKind::ConfigMap).noRestart == NoRestart::OptedIn);
  CHECK(std::string(noRestartText(NoRestart::OptedIn)) == "opted in: baseline recorded, no restart");

  SECTION("an optional object counts too: the running pods have it") {
    const DesiredAnnotations optional =
        baselineDesired(runningSts(nullptr, nullptr, true),
                        {{RefKind::ConfigMap, cmAt("41")}, {RefKind::Secret, secretAt("7")}});
    CHECK(optional.baseline == "configmap/app-config=cm-uid/41,secret/app-secret=s-uid/7");
  }
  SECTION("--roll-on-opt-in writes the template at once, as before") {
    const DesiredAnnotations rolled = baselineDesired(
        sts, {{RefKind::ConfigMap, cmAt("41")}, {RefKind::Secret, secretAt("7")}}, {true, true});
    CHECK_FALSE(rolled.optingIn);
    CHECK(rolled.annotations == AnnotationMap{{kCmTemplateKey, "cm-uid/41"}, {kSecretTemplateKey, "s-uid/7"}});
    CHECK(rolled.baseline.empty());
  }
  SECTION("a workload being created gets the template annotations (no pod runs yet)") {
    const DesiredAnnotations created = baselineDesired(
        sts, {{RefKind::ConfigMap, cmAt("41")}, {RefKind::Secret, secretAt("7")}}, {false, false});
    CHECK(created.annotations == AnnotationMap{{kCmTemplateKey, "cm-uid/41"}, {kSecretTemplateKey, "s-uid/7"}});
    CHECK(created.baseline.empty());
  }
}

TEST_CASE("a baseline holds until the content changes and then one rollout writes every reference",
          "[core][baseline]") {
  const json sts =
      runningSts(nullptr, {{kBaselineKey, "configmap/app-config=cm-uid/41,secret/app-secret=s-uid/7"},
                           {kRecordKey, "configmap/app-config=cm-uid/41/" + formatDigest(kDigestA)}});
  SECTION("same versions: nothing to do") {
    const DesiredAnnotations same =
        baselineDesired(sts, {{RefKind::ConfigMap, cmAt("41")}, {RefKind::Secret, secretAt("7")}});
    CHECK_FALSE(same.optingIn);
    CHECK(baselinePlan(sts, same).empty());
    CHECK(same.baseline == "configmap/app-config=cm-uid/41,secret/app-secret=s-uid/7");
    CHECK(referenceStatusOf(same, RefKind::Secret).noRestart == NoRestart::Baseline);
  }
  SECTION("a new version with the same content (metadata only): the baseline keeps its version") {
    const DesiredAnnotations same =
        baselineDesired(sts, {{RefKind::ConfigMap, cmAt("45")}, {RefKind::Secret, secretAt("7")}});
    CHECK(baselinePlan(sts, same).empty());
    CHECK(same.baseline == "configmap/app-config=cm-uid/41,secret/app-secret=s-uid/7");
    CHECK(referenceStatusOf(same, RefKind::ConfigMap).metadataOnly);
  }
  SECTION("a real change rolls once and takes the other references along") {
    const DesiredAnnotations changed =
        baselineDesired(sts, {{RefKind::ConfigMap, cmAt("45", kDigestB)}, {RefKind::Secret, secretAt("7")}});
    CHECK(changed.annotations == AnnotationMap{{kCmTemplateKey, "cm-uid/45"}, {kSecretTemplateKey, "s-uid/7"}});
    CHECK(changed.baseline.empty());
    CHECK(changed.contentDigests == "configmap/app-config=cm-uid/45/" + formatDigest(kDigestB));
    const auto plan = baselinePlan(sts, changed);
    REQUIRE(plan.size() == 2);
    CHECK(plan[0].describe() == "configmap/app-config: cm-uid/41 (baseline) -> cm-uid/45 (updated)");
    CHECK(plan[1].describe() == "secret/app-secret: s-uid/7 (baseline) -> s-uid/7 (updated)");
    CHECK(referenceStatusOf(changed, RefKind::Secret).noRestart == NoRestart::None);
  }
  SECTION("a Secret whose content is not read rolls at every new version") {
    const DesiredAnnotations changed =
        baselineDesired(sts, {{RefKind::ConfigMap, cmAt("41")}, {RefKind::Secret, secretAt("8")}});
    CHECK(changed.annotations == AnnotationMap{{kCmTemplateKey, "cm-uid/41"}, {kSecretTemplateKey, "s-uid/8"}});
  }
}

TEST_CASE("an object the pods need created after its workload restarts nothing", "[core][baseline]") {
  // The workload has a record (the Secret in its template); the ConfigMap appears later.
  const json sts = runningSts({{kSecretTemplateKey, "s-uid/7"}});
  const DesiredAnnotations waiting = baselineDesired(sts, {{RefKind::Secret, secretAt("7")}});
  CHECK(baselinePlan(sts, waiting).empty());
  CHECK(waiting.baseline.empty());

  const DesiredAnnotations appeared =
      baselineDesired(sts, {{RefKind::ConfigMap, cmAt("3")}, {RefKind::Secret, secretAt("7")}});
  CHECK(baselinePlan(sts, appeared).empty());
  CHECK(appeared.baseline == "configmap/app-config=cm-uid/3");
  CHECK(referenceStatusOf(appeared, RefKind::ConfigMap).noRestart == NoRestart::CreatedAfterWorkload);

  SECTION("an optional one rolls: the pods started without it") {
    const json optional = runningSts({{kSecretTemplateKey, "s-uid/7"}}, nullptr, true);
    const DesiredAnnotations rolled =
        baselineDesired(optional, {{RefKind::ConfigMap, cmAt("3")}, {RefKind::Secret, secretAt("7")}});
    const auto plan = baselinePlan(optional, rolled);
    REQUIRE(plan.size() == 1);
    CHECK(plan[0].describe() == "configmap/app-config: none -> cm-uid/3 (added)");
  }
}

TEST_CASE("a deleted object the pods need restarts nothing and re-created it rolls only for other content",
          "[core][baseline]") {
  const json sts = runningSts({{kCmTemplateKey, "cm-uid/41"}, {kSecretTemplateKey, "s-uid/7"}},
                              {{kRecordKey, "configmap/app-config=cm-uid/41/" + formatDigest(kDigestA)}});
  const DesiredAnnotations deleted = baselineDesired(sts, {{RefKind::Secret, secretAt("7")}});
  CHECK(baselinePlan(sts, deleted).empty());
  CHECK(referenceStatusOf(deleted, RefKind::ConfigMap).noRestart == NoRestart::DeletedKept);
  // The record of the kept version stays, for the re-creation to be compared with.
  CHECK(deleted.contentDigests == "configmap/app-config=cm-uid/41/" + formatDigest(kDigestA));

  const DesiredAnnotations sameContent = baselineDesired(
      sts, {{RefKind::ConfigMap, cmAt("50", kDigestA, "new-uid")}, {RefKind::Secret, secretAt("7")}});
  CHECK(baselinePlan(sts, sameContent).empty());

  const DesiredAnnotations otherContent = baselineDesired(
      sts, {{RefKind::ConfigMap, cmAt("50", kDigestB, "new-uid")}, {RefKind::Secret, secretAt("7")}});
  const auto plan = baselinePlan(sts, otherContent);
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].describe() == "configmap/app-config: cm-uid/41 -> new-uid/50 (recreated)");

  SECTION("an optional one loses its annotation: new pods start without it") {
    const json optional =
        runningSts({{kCmTemplateKey, "cm-uid/41"}, {kSecretTemplateKey, "s-uid/7"}}, nullptr, true);
    const auto removed = baselinePlan(optional, baselineDesired(optional, {{RefKind::Secret, secretAt("7")}}));
    REQUIRE(removed.size() == 1);
    CHECK(removed[0].cause == ChangeCause::Deleted);
  }
  SECTION("a rollout for another reason drops the deleted object's annotation") {
    const DesiredAnnotations rolled = baselineDesired(sts, {{RefKind::Secret, secretAt("8")}});
    CHECK(rolled.annotations == AnnotationMap{{kSecretTemplateKey, "s-uid/8"}});
    CHECK(rolled.contentDigests.empty());
  }
  SECTION("a baseline entry of a deleted object is kept while nothing rolls") {
    const json baselined =
        runningSts({{kSecretTemplateKey, "s-uid/7"}}, {{kBaselineKey, "configmap/app-config=cm-uid/41"}});
    const DesiredAnnotations kept = baselineDesired(baselined, {{RefKind::Secret, secretAt("7")}});
    CHECK(baselinePlan(baselined, kept).empty());
    CHECK(kept.baseline == "configmap/app-config=cm-uid/41");
  }
}

TEST_CASE("the webhook's metadata patch sets and removes the baseline with the content record",
          "[core][baseline]") {
  const json sts = runningSts(nullptr, {{kBaselineKey, "configmap/a=u/1"}});
  auto removed = metadataAnnotationsPatch(sts, {{kBaselineKey, ""}, {kRecordKey, ""}});
  REQUIRE(removed.ok());
  CHECK(*removed ==
        json::parse(R"([{"op":"remove","path":"/metadata/annotations/restarter.stackable.tech~1baseline"}])"));
  auto created = metadataAnnotationsPatch(runningSts(), {{kBaselineKey, "configmap/a=u/1"}, {kRecordKey, ""}});
  REQUIRE(created.ok());
  CHECK(*created == json::parse(R"([{"op":"add","path":"/metadata/annotations",)"
                                R"("value":{"restarter.stackable.tech/baseline":"configmap/a=u/1"}}])"));
  auto unchanged = metadataAnnotationsPatch(sts, {{kBaselineKey, "configmap/a=u/1"}});
  REQUIRE(unchanged.ok());
  CHECK(unchanged->empty());
}
