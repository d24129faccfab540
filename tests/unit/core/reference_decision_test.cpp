#include "restarter/core/reference_decision.hpp"

#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "restarter/core/annotation_keys.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace reference_decision_test {

using namespace restarter::core;

namespace {

const std::string kNow = "u/2";  // the object's version now
const std::string kOld = "u/1";  // an older version of it
const std::string kAbsent(kBaselineAbsent);
const std::string kLegacy(kLegacyChangesIgnoredValue);
constexpr ContentDigest kContent{1};
constexpr ContentDigest kOtherContent{2};

ContentRecord recordOf(const std::string& version, ContentDigest digest = kContent) {
  return ContentRecord{version, digest, "k1", DigestScheme::H2};
}

// One reference's facts, in few words: ConfigMap `app`, its object Present at kNow with content
// kContent (keyed "k1") unless `presence` says otherwise.
struct Facts {
  Screening screening = Screening::LookedUp;
  Presence presence = Presence::Present;
  bool ignoreLabel = false;
  bool selected = true;
  bool optional = false;
  std::optional<std::string> templateValue{};
  std::optional<std::string> baseline{};
  std::optional<ContentRecord> recorded{};
};

ReferenceFacts factsOf(const Facts& in) {
  ReferenceFacts facts;
  facts.ref = Reference{RefKind::ConfigMap, "app", in.optional, true, {}};
  facts.templateValue = in.templateValue;
  facts.baseline = in.baseline;
  facts.recorded = in.recorded;
  facts.screening = in.screening;
  facts.selection = Selection{in.selected, in.selected ? "" : "not named"};
  if (in.screening != Screening::LookedUp) return facts;
  if (in.presence == Presence::Present) {
    facts.state = ObjectState::present("u", "2", in.ignoreLabel, kContent);
    facts.state.digestKeyId = "k1";
  } else {
    facts.state = in.presence == Presence::Absent ? ObjectState::absent() : ObjectState::unknown("timed out");
  }
  return facts;
}

// The decision expected, in few words; a held decision's rolled record is its record where it is
// tracked, none where it is not.
struct Decision {
  Disposition disposition = Disposition::Tracked;
  std::optional<std::string> value{};
  NoRestart noRestart = NoRestart::None;
  bool metadataOnly = false;
  std::optional<std::string> record{};  // the record entry's version
  std::optional<std::string> baselineEntry{};
  bool held = false;
  std::optional<std::string> valueIfRolled{};
  bool forcesRoll = false;
};

constexpr WorkloadSituation kCreating{.podsRunning = false, .optingIn = false, .hasRecord = false};
constexpr WorkloadSituation kRunning{.podsRunning = true, .optingIn = false, .hasRecord = true};
constexpr WorkloadSituation kRunningNoRecord{.podsRunning = true, .optingIn = false, .hasRecord = false};
constexpr WorkloadSituation kOptingIn{.podsRunning = true, .optingIn = true, .hasRecord = false};

struct Row {
  const char* what;
  Facts facts;
  WorkloadSituation situation;
  Decision expected;
};

std::optional<std::string> versionOf(const std::optional<ContentRecord>& record) {
  return record ? std::optional<std::string>(record->version) : std::nullopt;
}

}  // namespace

TEST_CASE("each row of the reference table decides as its contract says", "[core][reference-decision]") {
  const std::vector<Row> rows = {
      {"screened out by the ignore annotation: the template's value",
       {.screening = Screening::IgnoredByAnnotation, .templateValue = kOld},
       kRunning,
       {.disposition = Disposition::IgnoredByAnnotation, .value = kOld}},
      {"screened out by Reloader's rules: the template's value, nothing",
       {.screening = Screening::NotSelected, .selected = false},
       kRunning,
       {.disposition = Disposition::NotSelected}},
      {"the ignore label: frozen at the template's value",
       {.ignoreLabel = true, .templateValue = kOld},
       kRunning,
       {.disposition = Disposition::IgnoredByLabel, .value = kOld}},
      {"present but not selected: frozen",
       {.selected = false, .templateValue = kOld},
       kRunning,
       {.disposition = Disposition::NotSelected, .value = kOld}},
      {"absent and not selected: frozen",
       {.presence = Presence::Absent, .selected = false, .templateValue = kOld},
       kRunning,
       {.disposition = Disposition::NotSelected, .value = kOld}},
      {"absent with commons-operator's legacy value: kept",
       {.presence = Presence::Absent, .templateValue = kLegacy},
       kRunning,
       {.disposition = Disposition::Absent, .value = kLegacy}},
      {"a required object deleted under running pods: kept, held, its record kept",
       {.presence = Presence::Absent, .templateValue = kOld, .recorded = recordOf(kOld)},
       kRunning,
       {.disposition = Disposition::Absent,
        .value = kOld,
        .noRestart = NoRestart::DeletedKept,
        .record = kOld,
        .held = true}},
      {"a required object deleted: a record of another version is dropped",
       {.presence = Presence::Absent, .templateValue = kNow, .recorded = recordOf(kOld)},
       kRunning,
       {.disposition = Disposition::Absent, .value = kNow, .noRestart = NoRestart::DeletedKept, .held = true}},
      {"a required object deleted while only the baseline had it: its baseline entry stays",
       {.presence = Presence::Absent, .baseline = kOld},
       kRunning,
       {.disposition = Disposition::Absent,
        .noRestart = NoRestart::DeletedKept,
        .baselineEntry = kOld,
        .held = true}},
      {"a required object the pods started without, still absent: nothing",
       {.presence = Presence::Absent, .baseline = kAbsent},
       kRunning,
       {.disposition = Disposition::Absent}},
      {"an optional object the running pods had, deleted: forces a roll",
       {.presence = Presence::Absent, .optional = true, .baseline = kOld},
       kRunning,
       {.disposition = Disposition::Absent, .baselineEntry = kAbsent, .held = true, .forcesRoll = true}},
      {"an optional object absent on a workload without record: recorded absent, held",
       {.presence = Presence::Absent, .optional = true},
       kRunningNoRecord,
       {.disposition = Disposition::Absent, .baselineEntry = kAbsent, .held = true}},
      {"an optional object absent at creation: recorded absent, not held",
       {.presence = Presence::Absent, .optional = true},
       kCreating,
       {.disposition = Disposition::Absent, .baselineEntry = kAbsent}},
      {"an optional object still absent on a recorded workload: nothing",
       {.presence = Presence::Absent, .optional = true},
       kRunning,
       {.disposition = Disposition::Absent}},
      {"a required object absent at creation: the template's value goes",
       {.presence = Presence::Absent, .templateValue = kOld},
       kCreating,
       {.disposition = Disposition::Absent}},
      {"present at the template's version: kept",
       {.templateValue = kNow},
       kRunning,
       {.value = kNow, .record = kNow}},
      {"present, metadata changed only: the template's version kept",
       {.templateValue = kOld, .recorded = recordOf(kOld)},
       kRunning,
       {.value = kOld, .metadataOnly = true, .record = kOld}},
      {"present, content changed: now",
       {.templateValue = kOld, .recorded = recordOf(kOld, kOtherContent)},
       kRunning,
       {.value = kNow, .record = kNow}},
      {"present at creation: now", {}, kCreating, {.value = kNow, .record = kNow}},
      {"an optional object the pods started without, created: now (a restart)",
       {.optional = true, .baseline = kAbsent},
       kRunning,
       {.value = kNow, .record = kNow}},
      {"the baseline's version, content unchanged: held at the baseline",
       {.baseline = kOld, .recorded = recordOf(kOld)},
       kRunning,
       {.noRestart = NoRestart::Baseline,
        .metadataOnly = true,
        .record = kOld,
        .baselineEntry = kOld,
        .held = true,
        .valueIfRolled = kOld}},
      {"the baseline's version, content changed: now",
       {.baseline = kOld, .recorded = recordOf(kOld, kOtherContent)},
       kRunning,
       {.value = kNow, .record = kNow}},
      {"first seen while opting in: the baseline, held",
       {},
       kOptingIn,
       {.noRestart = NoRestart::OptedIn,
        .record = kNow,
        .baselineEntry = kNow,
        .held = true,
        .valueIfRolled = kNow}},
      {"a required object created after its recorded workload: the baseline, held",
       {},
       kRunning,
       {.noRestart = NoRestart::CreatedAfterWorkload,
        .record = kNow,
        .baselineEntry = kNow,
        .held = true,
        .valueIfRolled = kNow}},
      {"a required object recorded absent, created: the baseline, held",
       {.baseline = kAbsent},
       kRunningNoRecord,
       {.noRestart = NoRestart::CreatedAfterWorkload,
        .record = kNow,
        .baselineEntry = kNow,
        .held = true,
        .valueIfRolled = kNow}},
      {"an optional object that appeared: now (a restart)",
       {.optional = true},
       kRunning,
       {.value = kNow, .record = kNow}},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    auto decided = decideReference(factsOf(row.facts), row.situation);
    REQUIRE(decided.ok());
    const ReferenceDecision& decision = *decided;
    const Decision& expected = row.expected;
    CHECK(decision.status.disposition == expected.disposition);
    CHECK(decision.status.value == expected.value);
    CHECK(decision.status.noRestart == expected.noRestart);
    CHECK(decision.status.metadataOnly == expected.metadataOnly);
    CHECK(versionOf(decision.record) == expected.record);
    CHECK(decision.baselineEntry == expected.baselineEntry);
    CHECK(decision.ifRolled.has_value() == expected.held);
    if (decision.ifRolled) {
      CHECK(decision.ifRolled->value == expected.valueIfRolled);
      CHECK(versionOf(decision.ifRolled->record) == (expected.valueIfRolled ? expected.record : std::nullopt));
    }
    CHECK(decision.forcesRoll == expected.forcesRoll);
    // Always: the reference, its key, its baseline entry and its facts as explain-restart shows them.
    CHECK(decision.status.ref.name == "app");
    CHECK(decision.status.key == templateAnnotationKey(RefKind::ConfigMap, "app"));
    CHECK(decision.status.baseline == row.facts.baseline);
    CHECK(decision.status.state.presence == factsOf(row.facts).state.presence);
    CHECK(decision.status.selection == (row.facts.selected ? "" : "not named"));
  }
}

TEST_CASE("an object whose state is unknown fails the decision", "[core][reference-decision]") {
  for (const WorkloadSituation& situation : {kCreating, kRunning}) {
    auto decided = decideReference(factsOf({.presence = Presence::Unknown, .templateValue = kOld}), situation);
    REQUIRE_FALSE(decided.ok());
    CHECK(decided.error().kind == ErrorKind::Unavailable);
    CHECK(decided.error().message == "configmap/app: state unknown: timed out");
  }
}

TEST_CASE("a reference screened out is never judged by its state", "[core][reference-decision]") {
  // Not looked up: its state stays Unknown, which must not fail the decision.
  ReferenceFacts facts = factsOf({.screening = Screening::IgnoredByAnnotation, .templateValue = kOld});
  REQUIRE(facts.state.presence == Presence::Unknown);
  auto decided = decideReference(std::move(facts), kRunning);
  REQUIRE(decided.ok());
  CHECK(decided->status.value == kOld);
}

}  // namespace reference_decision_test
