// Every value of each closed set of an explanation has its spelling, and the spellings are exactly
// the published schema's enum (cli/schema/restart-explanation.schema.json). None of them is
// parsed back, so there is no round trip to check.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>

#include "restarter/inspect/explanation.hpp"

namespace explanation_names_test {

using namespace restarter;
using namespace restarter::inspect;
using nlohmann::json;

json schema() {
  std::ifstream in(std::string(RESTARTER_SOURCE_DIR) + "/cli/schema/restart-explanation.schema.json");
  return json::parse(in);
}

// The schema's enum at `pointer` as a set.
std::set<std::string> schemaEnum(const std::string& pointer) {
  const json values = schema().at(json::json_pointer(pointer + "/enum"));
  return {values.begin(), values.end()};
}

template <typename Enum, std::size_t N>
std::set<std::string> spellings(const Enum (&values)[N], const char* (*name)(Enum) noexcept) {
  std::set<std::string> out;
  for (const Enum value : values) out.insert(name(value));
  CHECK(out.size() == N);  // distinct
  return out;
}

TEST_CASE("each explanation enum is spelled once per value as the schema lists it", "[inspect][explanation]") {
  const std::string pending = "/properties/pending/properties";
  const PendingState pendingStates[] = {PendingState::UpToDate, PendingState::RestartDue,
                                        PendingState::RefusedTooLarge, PendingState::Unknown};
  CHECK(spellings(pendingStates, pendingStateName) == schemaEnum(pending + "/status"));
  const HoldState holdStates[] = {HoldState::NotHeld, HoldState::Held, HoldState::Unknown};
  CHECK(spellings(holdStates, holdStateName) == schemaEnum(pending + "/rolloutHold/properties/status"));
  const WindowState windowStates[] = {WindowState::None, WindowState::Invalid, WindowState::Open,
                                      WindowState::Closed, WindowState::Held};
  CHECK(spellings(windowStates, windowStateName) == schemaEnum(pending + "/rolloutWindow/properties/status"));
  const WindowSource windowSources[] = {WindowSource::Annotation, WindowSource::ControllerDefault};
  CHECK(spellings(windowSources, windowSourceName) == schemaEnum(pending + "/rolloutWindow/properties/source"));
  const QueueState queueStates[] = {QueueState::NotQueued, QueueState::Queued, QueueState::Unknown};
  CHECK(spellings(queueStates, queueStateName) == schemaEnum(pending + "/rolloutQueue/properties/status"));
  const core::RolloutMode modes[] = {core::RolloutMode::Auto, core::RolloutMode::Manual};
  CHECK(spellings(modes, rolloutModeName) == schemaEnum(pending + "/rolloutMode/properties/mode"));
  const RollState rollStates[] = {RollState::KubernetesRolls, RollState::Partitioned, RollState::Stale,
                                  RollState::Manual,          RollState::Done,        RollState::Rolling,
                                  RollState::Paused,          RollState::Unknown};
  CHECK(spellings(rollStates, rollStateName) == schemaEnum("/properties/roll/properties/state"));
  const core::UpdateStrategy strategies[] = {core::UpdateStrategy::OnDelete,
                                             core::UpdateStrategy::RollingUpdate};
  CHECK(spellings(strategies, updateStrategyName) == schemaEnum("/properties/roll/properties/updateStrategy"));
  const core::ManagedBy managedBy[] = {core::ManagedBy::None, core::ManagedBy::Label,
                                       core::ManagedBy::Reloader};
  CHECK(spellings(managedBy, managedByName) == schemaEnum("/properties/managedBy/properties/by"));
}

TEST_CASE("each roll state core decides keeps core's spelling", "[inspect][explanation]") {
  using Core = core::RollDecision::State;
  for (const Core state : {Core::KubernetesRolls, Core::Partitioned, Core::Stale, Core::Manual, Core::Done,
                           Core::Rolling, Core::Paused}) {
    CHECK(std::string(rollStateName(rollStateOf(state))) == core::rollStateName(state));
    CHECK(rollStateOf(state) != RollState::Unknown);
  }
}

}  // namespace explanation_names_test
