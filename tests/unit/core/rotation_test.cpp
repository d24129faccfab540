#include "restarter/core/rotation.hpp"

#include <catch2/catch.hpp>

using namespace restarter::core;
using namespace std::chrono_literals;

namespace {

TimePoint at(std::chrono::seconds s) { return TimePoint{} + s; }

Validity window(std::chrono::seconds from, std::chrono::seconds to) { return {at(from), at(to)}; }

RotationPolicy policy() {
  RotationPolicy p;
  p.caPropagation = 30s;
  return p;
}

}  // namespace

TEST_CASE("rotation: without a usable CA everything is created", "[rotation]") {
  CHECK(decideRotation({}, at(0s), policy()).action == RotationAction::Bootstrap);
  RotationState expired;
  expired.ca = window(0s, 100s);
  expired.leaf = window(0s, 50s);
  CHECK(decideRotation(expired, at(100s), policy()).action == RotationAction::Bootstrap);
}

TEST_CASE("rotation: the leaf is renewed at two thirds of its lifetime", "[rotation]") {
  RotationState state;
  state.ca = window(0s, 3000s);
  state.leaf = window(0s, 300s);
  CHECK(decideRotation(state, at(199s), policy()).action == RotationAction::Keep);
  CHECK(decideRotation(state, at(200s), policy()).action == RotationAction::IssueLeaf);
  CHECK(decideRotation(state, at(400s), policy()).action == RotationAction::IssueLeaf);
  state.leaf.reset();
  CHECK(decideRotation(state, at(1s), policy()).action == RotationAction::IssueLeaf);
}

TEST_CASE("rotation: wall-clock jumps are caught at the next check", "[rotation]") {
  // A suspended machine wakes long after the leaf expired: the first check renews it.
  RotationState state;
  state.ca = window(0s, 30000s);
  state.leaf = window(0s, 300s);
  const auto decision = decideRotation(state, at(5000s), policy());
  CHECK(decision.action == RotationAction::IssueLeaf);
  CHECK(decision.reason == "the serving certificate has expired");
}

TEST_CASE("rotation: the CA rolls with an overlap", "[rotation]") {
  RotationState state;
  state.ca = window(0s, 900s);
  state.leaf = window(500s, 800s);
  // Before two thirds of the CA lifetime: nothing.
  CHECK(decideRotation(state, at(599s), policy()).action == RotationAction::Keep);
  // Due: a next CA is staged (and published next to the current one); the leaf stays.
  CHECK(decideRotation(state, at(600s), policy()).action == RotationAction::StageNextCa);
  state.nextCa = window(600s, 1500s);
  state.nextCaStagedAt = at(600s);
  // Not yet propagated: the leaf keeps the current CA.
  CHECK(decideRotation(state, at(629s), policy()).action == RotationAction::Keep);
  // Propagated: promote, which re-issues the leaf from the new CA.
  CHECK(decideRotation(state, at(630s), policy()).action == RotationAction::PromoteNextCa);
}

TEST_CASE("rotation: a leaf due while the next CA propagates comes from the current CA", "[rotation]") {
  RotationState state;
  state.ca = window(0s, 900s);
  state.nextCa = window(600s, 1500s);
  state.nextCaStagedAt = at(600s);
  state.leaf = window(400s, 610s);
  CHECK(decideRotation(state, at(611s), policy()).action == RotationAction::IssueLeaf);
}

TEST_CASE("rotation: an expired staged CA is staged again", "[rotation]") {
  RotationState state;
  state.ca = window(0s, 9000s);
  state.nextCa = window(0s, 100s);
  state.nextCaStagedAt = at(0s);
  state.leaf = window(0s, 9000s);
  CHECK(decideRotation(state, at(200s), policy()).action == RotationAction::StageNextCa);
}

TEST_CASE("rotation: renewal time is the fraction of the lifetime", "[rotation]") {
  RotationPolicy p;
  p.renewAtFraction = 0.5;
  CHECK(renewalTime(window(100s, 300s), p) == at(200s));
  CHECK(std::string(rotationActionName(RotationAction::PromoteNextCa)) == "promote-next-ca");
}
