#include "restarter/core/decision_fold.hpp"

#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "restarter/core/annotation_keys.hpp"
#include "restarter/core/baseline.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace decision_fold_test {

using namespace restarter::core;

namespace {

constexpr ContentDigest kContent{1};
const std::string kAbsent(kBaselineAbsent);

std::string keyOf(const std::string& name) { return templateAnnotationKey(RefKind::ConfigMap, name); }

ContentRecord recordOf(const std::string& version, const std::string& keyId = "k1") {
  return ContentRecord{version, kContent, keyId, keyId.empty() ? DigestScheme::Unkeyed : DigestScheme::H2};
}

// The decision of ConfigMap `name`, its content known (keyed "k1") where `record` is given.
ReferenceDecision decisionOf(const std::string& name, std::optional<ContentRecord> record = std::nullopt) {
  ReferenceDecision decision;
  decision.status.ref = Reference{RefKind::ConfigMap, name, false, true, {}};
  decision.status.key = keyOf(name);
  if (record) {
    decision.status.state = ObjectState::present("u-" + name, "1", false, record->digest);
    decision.status.state.digestKeyId = record->keyId;
  }
  decision.record = std::move(record);
  return decision;
}

// Its value goes into the template.
ReferenceDecision written(const std::string& name, const std::string& value) {
  ReferenceDecision decision = decisionOf(name, recordOf(value));
  decision.status.value = value;
  return decision;
}

// Held at the baseline's `version` (NoRestart::Baseline): the same version if the workload rolls.
ReferenceDecision baselined(const std::string& name, const std::string& version) {
  ReferenceDecision decision = decisionOf(name, recordOf(version));
  decision.status.noRestart = NoRestart::Baseline;
  decision.baselineEntry = version;
  decision.ifRolled = RolledValue{version, recordOf(version)};
  return decision;
}

// A required object deleted under running pods: the template keeps `value`, nothing if rolled.
ReferenceDecision deletedKept(const std::string& name, const std::string& value) {
  ReferenceDecision decision = decisionOf(name, recordOf(value));
  decision.status.value = value;
  decision.status.noRestart = NoRestart::DeletedKept;
  decision.ifRolled = RolledValue{};
  return decision;
}

// An optional object the running pods had, deleted.
ReferenceDecision optionalDeleted(const std::string& name) {
  ReferenceDecision decision = decisionOf(name);
  decision.baselineEntry = kAbsent;
  decision.ifRolled = RolledValue{};
  decision.forcesRoll = true;
  return decision;
}

// An optional object absent at creation: recorded absent, not held.
ReferenceDecision absentAtCreation(const std::string& name) {
  ReferenceDecision decision = decisionOf(name);
  decision.baselineEntry = kAbsent;
  return decision;
}

struct Row {
  const char* what;
  std::vector<ReferenceDecision> decisions;
  AnnotationMap templateNow;
  AnnotationMap annotations;         // expected
  BaselineRecords baseline;          // expected
  std::vector<NoRestart> noRestart;  // expected, one per decision
};

}  // namespace

TEST_CASE("the decisions fold into one write that rolls everything or nothing", "[core][decision-fold]") {
  const std::vector<Row> rows = {
      {"no reference, no annotation: nothing", {}, {}, {}, {}, {}},
      {"values as the template holds them: no roll, the held one stays in the baseline",
       {written("a", "u/2"), baselined("b", "v/1")},
       {{keyOf("a"), "u/2"}},
       {{keyOf("a"), "u/2"}},
       {{"configmap/b", "v/1"}},
       {NoRestart::None, NoRestart::Baseline}},
      {"a value changes: the held one goes into the template, the baseline empties",
       {written("a", "u/3"), baselined("b", "v/1")},
       {{keyOf("a"), "u/2"}},
       {{keyOf("a"), "u/3"}, {keyOf("b"), "v/1"}},
       {},
       {NoRestart::None, NoRestart::None}},
      {"a deleted required object's kept value is dropped by a roll",
       {written("a", "u/3"), deletedKept("b", "v/1")},
       {{keyOf("a"), "u/2"}, {keyOf("b"), "v/1"}},
       {{keyOf("a"), "u/3"}},
       {},
       {NoRestart::None, NoRestart::None}},
      {"a deleted required object's kept value stays without a roll",
       {written("a", "u/2"), deletedKept("b", "v/1")},
       {{keyOf("a"), "u/2"}, {keyOf("b"), "v/1"}},
       {{keyOf("a"), "u/2"}, {keyOf("b"), "v/1"}},
       {},
       {NoRestart::None, NoRestart::DeletedKept}},
      {"a deleted optional object rolls though no value changes",
       {written("a", "u/2"), baselined("b", "v/1"), optionalDeleted("c")},
       {{keyOf("a"), "u/2"}},
       {{keyOf("a"), "u/2"}, {keyOf("b"), "v/1"}},
       {},
       {NoRestart::None, NoRestart::None, NoRestart::None}},
      {"a deleted optional object alone rolls: no value and no baseline entry",
       {optionalDeleted("c")},
       {},
       {},
       {},
       {NoRestart::None}},
      {"an owned key no reference has any more rolls",
       {written("a", "u/2"), baselined("b", "v/1")},
       {{keyOf("a"), "u/2"}, {keyOf("gone"), "g/1"}},
       {{keyOf("a"), "u/2"}, {keyOf("b"), "v/1"}},
       {},
       {NoRestart::None, NoRestart::None}},
      {"keys restarter does not own are never compared",
       {written("a", "u/2"), baselined("b", "v/1")},
       {{keyOf("a"), "u/2"}, {"example.com/other", "x"}},
       {{keyOf("a"), "u/2"}},
       {{"configmap/b", "v/1"}},
       {NoRestart::None, NoRestart::Baseline}},
      {"an object absent at creation stays recorded absent through a roll",
       {written("a", "u/2"), absentAtCreation("b")},
       {},
       {{keyOf("a"), "u/2"}},
       {{"configmap/b", kAbsent}},
       {NoRestart::None, NoRestart::None}},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    const DesiredAnnotations out = foldDecisions(row.decisions, row.templateNow, {});
    CHECK(out.annotations == row.annotations);
    CHECK(out.baseline == formatBaseline(row.baseline));
    REQUIRE(out.references.size() == row.noRestart.size());
    for (std::size_t i = 0; i < row.noRestart.size(); ++i) {
      CHECK(out.references[i].key == row.decisions[i].status.key);
      CHECK(out.references[i].value ==
            (out.annotations.count(out.references[i].key) != 0
                 ? std::optional<std::string>(out.annotations.at(out.references[i].key))
                 : std::nullopt));
      CHECK(out.references[i].noRestart == row.noRestart[i]);
    }
    CHECK_FALSE(out.optingIn);
  }
}

TEST_CASE("the content record holds the record entries of the outcome folded", "[core][decision-fold]") {
  SECTION("kept where the workload does not roll") {
    const DesiredAnnotations out = foldDecisions({written("a", "u/2"), deletedKept("b", "v/1")},
                                                 {{keyOf("a"), "u/2"}, {keyOf("b"), "v/1"}}, {});
    CHECK(out.contentDigests ==
          formatContentRecords({{"configmap/a", recordOf("u/2")}, {"configmap/b", recordOf("v/1")}}));
  }
  SECTION("the rolled ones where it rolls") {
    const DesiredAnnotations out = foldDecisions({written("a", "u/3"), deletedKept("b", "v/1")},
                                                 {{keyOf("a"), "u/2"}, {keyOf("b"), "v/1"}}, {});
    CHECK(out.contentDigests == formatContentRecords({{"configmap/a", recordOf("u/3")}}));
  }
}

TEST_CASE("the record is rewritten alone when it is stale or keyed otherwise", "[core][decision-fold]") {
  struct Case {
    const char* what;
    ContentRecords recorded;
    RecordRewrite expected;
  };
  const std::vector<Case> cases = {
      {"the same entries: no rewrite", {{"configmap/a", recordOf("u/2")}}, RecordRewrite::None},
      {"an entry missing: completed", {}, RecordRewrite::Complete},
      {"another version's entry: completed", {{"configmap/a", recordOf("u/1")}}, RecordRewrite::Complete},
      {"an unkeyed entry: rekeyed", {{"configmap/a", recordOf("u/2", "")}}, RecordRewrite::Rekey},
      {"an entry under a rotated key: rekeyed", {{"configmap/a", recordOf("u/2", "k0")}}, RecordRewrite::Rekey},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    const DesiredAnnotations out = foldDecisions({written("a", "u/2")}, {{keyOf("a"), "u/2"}}, c.recorded);
    CHECK(out.recordRewrite == c.expected);
  }
}

}  // namespace decision_fold_test
