// The text renderer over hand-made explanations: the Pending line of each state and gate.
#include <catch2/catch.hpp>

#include "fixtures.hpp"
#include "restarter/base/rfc3339.hpp"
#include "restarter/inspect/explanation.hpp"

namespace explain_text_test {

using namespace restarter;
using namespace restarter::inspect;

// The line starting "Pending: " of the plain text.
std::string pendingLine(const Explanation& explanation) {
  const std::string text = renderText(explanation, false);
  const auto start = text.find("Pending: ");
  REQUIRE(start != std::string::npos);
  return text.substr(start, text.find('\n', start) - start);
}

TEST_CASE("the text says each pending state in its words", "[inspect][explanation][text]") {
  struct Row {
    PendingState state;
    std::string reason;
    std::string line;
  };
  const Row rows[] = {
      {PendingState::UpToDate, "", "Pending: up to date"},
      {PendingState::RestartDue, "", "Pending: a restart is due (the controller will apply it)"},
      {PendingState::RefusedTooLarge, "annotations too large: 300000 bytes",
       "Pending: refused: annotations too large: 300000 bytes (the apiserver would refuse the write; the controller "
       "records one AnnotationsTooLarge Event and does not retry)"},
      {PendingState::Unknown, "forbidden", "Pending: unknown: forbidden"},
  };
  for (const Row& row : rows) {
    INFO(pendingStateName(row.state));
    Explanation explanation = inspect_fixtures::dueExplanation();
    explanation.pending.state = row.state;
    explanation.pending.reason = row.reason;
    CHECK(pendingLine(explanation) == row.line);
  }
}

TEST_CASE("the text names the first gate that holds a restart due", "[inspect][explanation][text]") {
  Explanation explanation = inspect_fixtures::dueExplanation();
  explanation.pending.queue =
      RolloutQueue{QueueState::Queued, std::nullopt, base::parseRfc3339("2027-01-15T08:00:05Z").value(), 2, 1,
                   "namespace shop"};
  CHECK(
      pendingLine(explanation) ==
      "Pending: a restart is due, queued: 1 rollout ahead (--max-concurrent-rollouts; priority 2, queued since "
      "2027-01-15T08:00:05Z, counted in namespace shop)");
  explanation.pending.hold.state = HoldState::Held;
  explanation.pending.hold.description = "held until 2027-01-15T08:05:00Z";
  explanation.pending.hold.recorded = base::parseRfc3339("2027-01-15T08:00:05Z").value();
  CHECK(
      pendingLine(explanation) ==
      "Pending: a restart is due, rollout held until 2027-01-15T08:05:00Z (the controller's rollout hold since the "
      "last rollout at none; RolloutHeld Event at 2027-01-15T08:00:05Z)");
  explanation.pending.window.state = WindowState::Held;
  explanation.pending.window.source = WindowSource::Annotation;
  explanation.pending.window.window = "09:00-10:00";
  explanation.pending.window.description = "held by the rollout window until 2027-01-15T09:00:00Z";
  CHECK(pendingLine(explanation) ==
        "Pending: a restart is due, rollout held by the rollout window until 2027-01-15T09:00:00Z (window "
        "\"09:00-10:00\" from the annotation)");
  explanation.pending.mode.rollCommand = "kubectl restarter roll statefulset/web -n shop";
  CHECK(pendingLine(explanation) ==
        "Pending: manual: pending; run `kubectl restarter roll statefulset/web -n shop` "
        "(restarter.stackable.tech/rollout: manual: the controller does not roll it)");
}

TEST_CASE("the causes of a revision are lines in the order created then annotations then paths",
          "[inspect][explanation][text]") {
  core::RevisionCause cause;
  cause.created = true;
  cause.annotations = inspect_fixtures::dueExplanation().pending.changes;
  cause.templatePaths = {"containers[app].image", ""};
  CHECK(causeLines(cause) == std::vector<std::string>{"created", "configmap/cfg: u/2 -> u/3 (updated)",
                                                      "containers[app].image changed",
                                                      "the pod template changed"});
  CHECK(causeLines(core::RevisionCause{}).empty());
}

}  // namespace explain_text_test
