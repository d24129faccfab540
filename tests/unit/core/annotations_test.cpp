#include "restarter/core/annotations.hpp"

#include <map>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "restarter/core/annotation_keys.hpp"

using namespace restarter::core;
using nlohmann::json;

namespace {

const std::string kCmKey = "configmap.restarter.stackable.tech/app-config";
const std::string kSecretKey = "secret.restarter.stackable.tech/app-secret";

// A StatefulSet using ConfigMap app-config (volume) and Secret app-secret (envFrom), with the
// given template and workload annotations.
json workload(const json& templateAnnotations = nullptr, const json& workloadAnnotations = nullptr) {
  json sts = {{"apiVersion", "apps/v1"},
              {"kind", "StatefulSet"},
              {"metadata", {{"name", "web"}, {"namespace", "default"}}},
              {"spec",
               {{"template",
                 {{"metadata", {{"labels", {{"app", "web"}}}}},
                  {"spec",
                   {{"volumes", {{{"name", "cfg"}, {"configMap", {{"name", "app-config"}}}}}},
                    {"containers",
                     {{{"name", "app"}, {"envFrom", {{{"secretRef", {{"name", "app-secret"}}}}}}}}}}}}}}}};
  if (!templateAnnotations.is_null()) {
    sts["spec"]["template"]["metadata"]["annotations"] = templateAnnotations;
  }
  if (!workloadAnnotations.is_null()) sts["metadata"]["annotations"] = workloadAnnotations;
  return sts;
}

// A lookup over a fixed table that counts its calls; unknown names are Absent.
struct TableLookup {
  std::map<std::pair<RefKind, std::string>, ObjectState> table;
  mutable int calls = 0;

  ObjectLookup fn() const {
    return [this](RefKind kind, const std::string& name) {
      ++calls;
      auto it = table.find({kind, name});
      return it == table.end() ? ObjectState::absent() : it->second;
    };
  }
};

TableLookup bothPresent() {
  TableLookup lookup;
  lookup.table[{RefKind::ConfigMap, "app-config"}] = ObjectState::present("cm-uid", "100", false);
  lookup.table[{RefKind::Secret, "app-secret"}] = ObjectState::present("s-uid", "200", false);
  return lookup;
}

DesiredAnnotations desiredOf(const json& sts, const TableLookup& lookup) {
  auto result = desiredAnnotations(sts, lookup.fn());
  if (!result.ok()) FAIL(result.error().describe());
  return result.value();
}

std::vector<AnnotationChange> planOf(const json& sts, const TableLookup& lookup) {
  auto plan = planAnnotationChanges(sts, desiredOf(sts, lookup));
  REQUIRE(plan.ok());
  return plan.value();
}

}  // namespace

TEST_CASE("present objects give <uid>/<resourceVersion> under commons-operator keys", "[annotations]") {
  const auto desired = desiredOf(workload(), bothPresent());
  CHECK(desired.annotations == AnnotationMap{{kCmKey, "cm-uid/100"}, {kSecretKey, "s-uid/200"}});
  REQUIRE(desired.references.size() == 2);
  CHECK(desired.references[0].disposition == Disposition::Tracked);
  CHECK(desired.references[0].key == kCmKey);
  CHECK(desired.references[1].ref.kind == RefKind::Secret);
}

TEST_CASE("an absent object yields no annotation so its creation restarts", "[annotations]") {
  TableLookup lookup = bothPresent();
  lookup.table.erase({RefKind::Secret, "app-secret"});
  const auto desired = desiredOf(workload(), lookup);
  CHECK(desired.annotations == AnnotationMap{{kCmKey, "cm-uid/100"}});
  CHECK(desired.references[1].disposition == Disposition::Absent);

  SECTION("an annotation of a deleted object is removed (cause: deleted)") {
    const auto plan = planOf(workload({{kCmKey, "cm-uid/100"}, {kSecretKey, "s-uid/200"}}), lookup);
    REQUIRE(plan.size() == 1);
    CHECK(plan[0].key == kSecretKey);
    CHECK_FALSE(plan[0].after);
    CHECK(plan[0].cause == ChangeCause::Deleted);
  }
  SECTION("commons-operator's legacy marker is kept: a migrated cluster sees no write") {
    const auto sts = workload({{kCmKey, "cm-uid/100"}, {kSecretKey, "changes-ignored"}});
    CHECK(desiredOf(sts, lookup).annotations.at(kSecretKey) == "changes-ignored");
    CHECK(planOf(sts, lookup).empty());
  }
}

TEST_CASE("identical annotations mean no change at all (zero-write migration)", "[annotations]") {
  const auto sts = workload({{kCmKey, "cm-uid/100"}, {kSecretKey, "s-uid/200"}, {"other", "x"}});
  CHECK(planOf(sts, bothPresent()).empty());
}

TEST_CASE("an object ignored by label keeps whatever the template holds", "[annotations]") {
  TableLookup lookup = bothPresent();
  lookup.table[{RefKind::ConfigMap, "app-config"}] = ObjectState::present("cm-uid", "999", true);

  SECTION("frozen at the current value") {
    const auto sts = workload({{kCmKey, "cm-uid/100"}, {kSecretKey, "s-uid/200"}});
    const auto desired = desiredOf(sts, lookup);
    CHECK(desired.annotations.at(kCmKey) == "cm-uid/100");
    CHECK(desired.references[0].disposition == Disposition::IgnoredByLabel);
    CHECK(planOf(sts, lookup).empty());
  }
  SECTION("nothing written when nothing is there") {
    CHECK(desiredOf(workload(), lookup).annotations.count(kCmKey) == 0);
  }
}

TEST_CASE("an object ignored by workload annotation is frozen and never looked up", "[annotations]") {
  const json ignore = {{"restarter.stackable.tech/ignore-secret.0", "app-secret"},
                       {"restarter.stackable.tech/ignore-configmap.hot", "unrelated"}};
  TableLookup lookup = bothPresent();
  const auto sts = workload({{kSecretKey, "old-uid/1"}}, ignore);
  const auto desired = desiredOf(sts, lookup);
  CHECK(lookup.calls == 1);  // only the ConfigMap was looked up
  CHECK(desired.annotations == AnnotationMap{{kCmKey, "cm-uid/100"}, {kSecretKey, "old-uid/1"}});
  CHECK(desired.references[1].disposition == Disposition::IgnoredByAnnotation);
}

TEST_CASE("an unknown object state fails the whole computation", "[annotations]") {
  TableLookup lookup = bothPresent();
  lookup.table[{RefKind::Secret, "app-secret"}] = ObjectState::unknown("deadline exceeded");
  auto result = desiredAnnotations(workload(), lookup.fn());
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().kind == ErrorKind::Unavailable);
  CHECK_THAT(result.error().message,
             Catch::Contains("secret/app-secret") && Catch::Contains("deadline exceeded"));
}

TEST_CASE("owned keys of references that disappeared are removed and foreign keys stay", "[annotations]") {
  const auto sts = workload({{kCmKey, "cm-uid/100"},
                             {kSecretKey, "s-uid/200"},
                             {"configmap.restarter.stackable.tech/old", "o/1"},
                             {"prometheus.io/scrape", "true"}});
  const auto plan = planOf(sts, bothPresent());
  REQUIRE(plan.size() == 1);
  CHECK(plan[0].key == "configmap.restarter.stackable.tech/old");
  CHECK(plan[0].cause == ChangeCause::Unreferenced);
  CHECK(plan[0].name == "old");
}

TEST_CASE("a long name uses the mapped key in every output", "[annotations]") {
  const std::string longName(80, 'c');
  json sts = workload();
  sts["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"] = longName;
  TableLookup lookup = bothPresent();
  lookup.table[{RefKind::ConfigMap, longName}] = ObjectState::present("u", "1", false);
  const auto desired = desiredOf(sts, lookup);
  const std::string key = templateAnnotationKey(RefKind::ConfigMap, longName);
  CHECK(desired.annotations.at(key) == "u/1");
  const auto plan = planOf(sts, lookup);
  REQUIRE(plan.size() == 2);
  CHECK(plan[0].key == key);
  CHECK(plan[0].name == longName);  // the real name, recovered through the references
}

TEST_CASE("the same inputs always give the same output", "[annotations]") {
  const auto first = desiredOf(workload(), bothPresent());
  for (int i = 0; i < 5; ++i) {
    CHECK(desiredOf(workload(), bothPresent()).annotations == first.annotations);
  }
}

TEST_CASE("malformed workloads are errors and never exceptions", "[annotations]") {
  struct Row {
    const char* what;
    json sts;
  };
  json templateAnnotationNotString = workload({{kCmKey, 5}});
  json noTemplate = workload();
  noTemplate["spec"].erase("template");
  json ignoreNotString = workload(nullptr, {{"restarter.stackable.tech/ignore-secret.x", true}});
  json metadataArray = workload();
  metadataArray["metadata"] = json::array();
  const std::vector<Row> rows = {
      {"not an object", json::array({1, 2})},
      {"template annotation value not a string", templateAnnotationNotString},
      {"no pod template", noTemplate},
      {"ignore annotation value not a string", ignoreNotString},
      {"metadata an array", metadataArray},
  };
  for (const Row& row : rows) {
    SECTION(row.what) {
      auto result = desiredAnnotations(row.sts, bothPresent().fn());
      REQUIRE_FALSE(result.ok());
      CHECK(result.error().kind == ErrorKind::InvalidInput);
    }
  }
}

TEST_CASE("diffs name the object and the cause of every change", "[annotations][diff]") {
  const std::vector<Reference> refs = {{RefKind::ConfigMap, "a", false},
                                       {RefKind::ConfigMap, "b", false},
                                       {RefKind::ConfigMap, "c", false},
                                       {RefKind::Secret, "d", false}};
  const AnnotationMap before = {{"configmap.restarter.stackable.tech/a", "u1/1"},
                                {"configmap.restarter.stackable.tech/b", "u2/1"},
                                {"secret.restarter.stackable.tech/d", "u4/1"},
                                {"configmap.restarter.stackable.tech/gone", "u5/1"},
                                {"foreign/key", "1"}};
  const AnnotationMap after = {{"configmap.restarter.stackable.tech/a", "u1/2"},
                               {"configmap.restarter.stackable.tech/b", "u9/3"},
                               {"configmap.restarter.stackable.tech/c", "u3/1"},
                               {"foreign/key", "2"}};
  const auto changes = diffAnnotations(before, after, refs);
  REQUIRE(changes.size() == 5);
  std::vector<std::string> described;
  for (const auto& change : changes) described.push_back(change.describe());
  CHECK(described == std::vector<std::string>{
                         "configmap/a: u1/1 -> u1/2 (updated)",
                         "configmap/b: u2/1 -> u9/3 (recreated)",
                         "configmap/c: none -> u3/1 (added)",
                         "configmap/gone: u5/1 -> none (unreferenced)",
                         "secret/d: u4/1 -> none (deleted)",
                     });
}

TEST_CASE("object state is read from metadata", "[annotations]") {
  auto state = objectStateFromMetadata({{"name", "x"},
                                        {"uid", "u"},
                                        {"resourceVersion", "7"},
                                        {"labels", {{"restarter.stackable.tech/ignore", "true"}}}});
  REQUIRE(state.ok());
  CHECK(state->presence == Presence::Present);
  CHECK(state->uid == "u");
  CHECK(state->resourceVersion == "7");
  CHECK(state->ignoreLabel);

  CHECK_FALSE(objectStateFromMetadata({{"uid", "u"}}).ok());
  CHECK_FALSE(objectStateFromMetadata({{"uid", 1}, {"resourceVersion", "1"}}).ok());
  CHECK_FALSE(objectStateFromMetadata("metadata").ok());
  CHECK_FALSE(objectStateFromMetadata({{"uid", "u"}, {"resourceVersion", "1"}, {"labels", "x"}}).ok());
  auto notIgnored = objectStateFromMetadata(
      {{"uid", "u"}, {"resourceVersion", "1"}, {"labels", {{"restarter.stackable.tech/ignore", "yes"}}}});
  REQUIRE(notIgnored.ok());
  CHECK_FALSE(notIgnored->ignoreLabel);
}
