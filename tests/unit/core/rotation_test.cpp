#include "restarter/core/rotation.hpp"

#include <catch2/catch.hpp>

#include "restarter/base/rfc3339.hpp"

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

namespace {

const RotationTimingNames kFlags{"--validity", "--ca-validity", "--ca-propagation", "--cert-check-interval"};

RotationTimings timings(std::chrono::seconds validity, std::chrono::seconds caValidity,
                        std::chrono::seconds caPropagation, std::chrono::seconds checkInterval) {
  return RotationTimings{.validity = validity,
                         .caValidity = caValidity,
                         .caPropagation = caPropagation,
                         .checkInterval = checkInterval};
}

// The managed certificates as checkManagedCertificates keeps them: each issued at the check that
// decided it, a serving certificate cut to its CA's end (lib/certs does that).
struct Managed {
  Validity ca;
  std::optional<Validity> nextCa;
  std::optional<TimePoint> stagedAt;
  Validity leaf;
};

enum class Adversary { Leaf, Ca };

// Runs the checks against certificates issued at 0 (by another replica), every checkInterval,
// except that after each check that acted the following checks are shifted so that one falls 1 us
// before the next due point of `target` (a restart, another replica or a failed check can give the
// checks any phase): then the step comes as late as the interval allows. Returns the first failure
// within `horizon`: a served certificate that expired before the next check, or a CA that expired
// before it was replaced.
std::optional<std::string> simulate(const RotationTimings& t, Adversary target, std::chrono::seconds horizon) {
  RotationPolicy rotation;
  rotation.caPropagation = t.caPropagation;
  const std::chrono::microseconds interval = t.checkInterval;
  const TimePoint start = at(0s);
  Managed m{{start, start + t.caValidity},
            std::nullopt,
            std::nullopt,
            {start, start + std::min(t.validity, t.caValidity)}};
  auto due = [&] {
    if (target == Adversary::Leaf) return renewalTime(m.leaf, rotation);
    return m.stagedAt ? *m.stagedAt + t.caPropagation : renewalTime(m.ca, rotation);
  };
  auto rephase = [&](TimePoint from) {
    const TimePoint before = due() - 1us;
    if (before <= from) return from + interval;
    const auto gap = (before - from) % interval;
    return from + (gap == 0us ? interval : gap);
  };
  auto issueLeaf = [&](TimePoint now) { m.leaf = {now, std::min(now + t.validity, m.ca.notAfter)}; };
  for (TimePoint now = rephase(start); now < start + horizon;) {
    if (m.leaf.notAfter < now) {
      return "the serving certificate expired at " + restarter::base::formatRfc3339(m.leaf.notAfter) +
             " before the check at " + restarter::base::formatRfc3339(now);
    }
    bool acted = false;
    for (int step = 0; step < 4; ++step) {
      RotationState state{m.ca, m.nextCa, m.leaf, m.stagedAt};
      const RotationDecision decision = decideRotation(state, now, rotation);
      if (decision.action == RotationAction::Keep) break;
      acted = true;
      switch (decision.action) {
        case RotationAction::Bootstrap:
          return "bootstrap at " + restarter::base::formatRfc3339(now) + ": " + decision.reason;
        case RotationAction::StageNextCa:
          m.nextCa = Validity{now, now + t.caValidity};
          m.stagedAt = now;
          break;
        case RotationAction::PromoteNextCa:
          m.ca = *m.nextCa;
          m.nextCa.reset();
          m.stagedAt.reset();
          issueLeaf(now);
          break;
        case RotationAction::IssueLeaf: issueLeaf(now); break;
        case RotationAction::Keep: break;
      }
    }
    now = acted ? rephase(now) : now + interval;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("rotation timings: the defaults and the rotation suite's short lifetimes are accepted",
          "[rotation]") {
  CHECK(checkRotationTimings(timings(24h, 8760h, 30s, 10s), kFlags).empty());
  CHECK(checkRotationTimings(timings(20s, 60s, 5s, 1s), kFlags).empty());
  CHECK_FALSE(simulate(timings(20s, 60s, 5s, 1s), Adversary::Ca, 600s));
  CHECK_FALSE(simulate(timings(20s, 60s, 5s, 1s), Adversary::Leaf, 600s));
}

TEST_CASE("rotation timings: --ca-validity 90s with the other defaults names every flag it conflicts with",
          "[rotation]") {
  const auto problems = checkRotationTimings(timings(24h, 90s, 30s, 10s), kFlags);
  REQUIRE(problems.size() == 2);
  CHECK_THAT(problems[0], Catch::StartsWith("--ca-validity 1m30s is less than twice --validity 24h"));
  CHECK_THAT(problems[1],
             Catch::StartsWith("--ca-propagation 30s + 2 x --cert-check-interval 10s is more than a "
                               "third of --ca-validity 1m30s") &&
                 Catch::Contains("(need --ca-propagation + 2 x --cert-check-interval <= --ca-validity / 3)"));
  // What the log said before the check existed: the CA expires before the next one is served.
  REQUIRE(simulate(timings(45s, 90s, 30s, 10s), Adversary::Ca, 900s));
  CHECK_THAT(*simulate(timings(45s, 90s, 30s, 10s), Adversary::Ca, 900s), Catch::Contains("expired"));
}

TEST_CASE("rotation timings: the check interval may be a third of the serving lifetime and no more",
          "[rotation]") {
  CHECK(checkRotationTimings(timings(30s, 8760h, 30s, 10s), kFlags).empty());
  const auto problems = checkRotationTimings(timings(30s, 8760h, 30s, 11s), kFlags);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0],
             Catch::StartsWith("--cert-check-interval 11s is more than a third of --validity 30s") &&
                 Catch::Contains("(need --cert-check-interval <= --validity / 3)"));
  // The limit is the real one: at it no served certificate expires, one second past it one does.
  CHECK_FALSE(simulate(timings(30s, 8760h, 30s, 10s), Adversary::Leaf, 600s));
  REQUIRE(simulate(timings(30s, 8760h, 30s, 11s), Adversary::Leaf, 600s));
  CHECK_THAT(*simulate(timings(30s, 8760h, 30s, 11s), Adversary::Leaf, 600s), Catch::Contains("expired"));
}

TEST_CASE(
    "rotation timings: propagation and two check intervals may fill the last third of the CA lifetime and no more",
    "[rotation]") {
  for (const auto& [propagation, interval] : {std::pair{10s, 10s}, std::pair{8s, 11s}, std::pair{28s, 1s}}) {
    INFO(propagation.count() << "s + 2 x " << interval.count() << "s");
    CHECK(checkRotationTimings(timings(45s, 90s, propagation, interval), kFlags).empty());
    CHECK_FALSE(simulate(timings(45s, 90s, propagation, interval), Adversary::Ca, 900s));
    CHECK_FALSE(simulate(timings(45s, 90s, propagation, interval), Adversary::Leaf, 900s));
  }
  for (const auto& [propagation, interval] : {std::pair{11s, 10s}, std::pair{9s, 11s}, std::pair{29s, 1s}}) {
    INFO(propagation.count() << "s + 2 x " << interval.count() << "s");
    const auto problems = checkRotationTimings(timings(45s, 90s, propagation, interval), kFlags);
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems[0], Catch::Contains("is more than a third of --ca-validity 1m30s"));
    CHECK(simulate(timings(45s, 90s, propagation, interval), Adversary::Ca, 900s));
  }
}

TEST_CASE("rotation timings: the CA must live at least twice the serving lifetime", "[rotation]") {
  CHECK(checkRotationTimings(timings(45s, 90s, 10s, 10s), kFlags).empty());
  const auto problems = checkRotationTimings(timings(46s, 90s, 10s, 10s), kFlags);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::StartsWith("--ca-validity 1m30s is less than twice --validity 46s"));
}

TEST_CASE("rotation timings: every duration is positive and at most a hundred years", "[rotation]") {
  CHECK(checkRotationTimings(timings(24h, kMaxCertificateValidity, 30s, 10s), kFlags).empty());
  CHECK(checkRotationTimings(timings(0s, 8760h, 30s, 10s), kFlags) ==
        std::vector<std::string>{"--validity must be positive"});
  CHECK(checkRotationTimings(timings(24h, 8760h, 30s, 0s), kFlags) ==
        std::vector<std::string>{"--cert-check-interval must be positive"});
  const auto tooLong = checkRotationTimings(timings(24h, kMaxCertificateValidity + 1s, 30s, 10s), kFlags);
  REQUIRE(tooLong.size() == 1);
  CHECK_THAT(tooLong[0], Catch::StartsWith("--ca-validity 876000h1s is more than 876000h (100 years)"));
  // Out-of-range durations are reported alone: no sum is formed from them.
  CHECK(checkRotationTimings(timings(24h, 8760h, std::chrono::seconds::max(), std::chrono::seconds::max()),
                             kFlags)
            .size() == 2);
  // Without names the messages still read.
  CHECK_THAT(checkRotationTimings(timings(0s, 8760h, 30s, 10s)).front(),
             Catch::Contains("validity must be positive"));
}

TEST_CASE("issue timings: a serving certificate may live as long as its CA and no longer", "[rotation]") {
  const RotationTimingNames names{.validity = "--validity", .caValidity = "--ca-validity"};
  CHECK(checkIssueTimings(1h, 1h, names).empty());
  CHECK(checkIssueTimings(8760h, 87600h, names).empty());
  const auto problems = checkIssueTimings(1h + 1s, 1h, names);
  REQUIRE(problems.size() == 1);
  CHECK_THAT(problems[0], Catch::StartsWith("--validity 1h1s is more than --ca-validity 1h") &&
                              Catch::Contains("cannot outlive the CA"));
  CHECK(checkIssueTimings(0s, 1h, names) == std::vector<std::string>{"--validity must be positive"});
  CHECK(checkIssueTimings(1h, kMaxCertificateValidity + 1s, names).size() == 1);
}
