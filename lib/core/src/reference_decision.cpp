#include "restarter/core/reference_decision.hpp"

#include <utility>

#include "restarter/core/annotation_keys.hpp"
#include "restarter/core/baseline.hpp"
#include "restarter/core/constants.hpp"

namespace restarter::core {

namespace {

bool isVersion(const std::optional<std::string>& entry) { return entry && *entry != kBaselineAbsent; }

// decideTrackedValue of the object `now` against `held` (the template's or the baseline's value)
// and its record entry.
TrackedValue trackedAgainst(const ObjectState& now, const std::optional<std::string>& held,
                            const std::optional<ContentRecord>& entry) {
  return decideTrackedValue(held, entry, now.uid, now.resourceVersion, now.contentDigest, now.digestKeyId,
                            now.digestScheme, now.otherDigests);
}

// The tracked value goes into the template.
void writeIntoTemplate(ReferenceDecision& decision, TrackedValue tracked) {
  decision.status.value = std::move(tracked.value);
  decision.status.metadataOnly = tracked.metadataOnly;
  decision.record = std::move(tracked.record);
}

// The tracked value is held out of the template: kept as the baseline entry unless the workload
// rolls.
void holdOutOfTemplate(ReferenceDecision& decision, NoRestart reason, TrackedValue tracked) {
  decision.status.noRestart = reason;
  decision.status.metadataOnly = tracked.metadataOnly;
  decision.baselineEntry = tracked.value;
  decision.record = tracked.record;
  decision.ifRolled = RolledValue{std::move(tracked.value), std::move(tracked.record)};
}

void decideAbsent(const ReferenceFacts& facts, const WorkloadSituation& situation,
                  ReferenceDecision& decision) {
  const std::optional<std::string>& templateValue = facts.templateValue;
  const std::optional<std::string>& held = templateValue ? templateValue : facts.baseline;
  const bool running = situation.podsRunning;
  const bool optional = facts.ref.optional;
  decision.status.disposition = Disposition::Absent;
  if (templateValue == kLegacyChangesIgnoredValue) {
    decision.status.value = templateValue;
  } else if (running && !optional && isVersion(held)) {
    // The running pods keep their copy; a rollout would leave new pods waiting for it.
    decision.status.noRestart = NoRestart::DeletedKept;
    decision.status.value = templateValue;
    if (!templateValue) decision.baselineEntry = facts.baseline;
    if (facts.recorded && facts.recorded->version == *held) decision.record = facts.recorded;
    decision.ifRolled = RolledValue{};
  } else if (running && optional && !templateValue && isVersion(facts.baseline)) {
    // An optional object the running pods had, deleted: as when its template annotation is
    // removed, the workload rolls (and, with nothing else to write, records it absent).
    decision.forcesRoll = true;
    decision.baselineEntry = std::string(kBaselineAbsent);
    decision.ifRolled = RolledValue{};
  } else if (optional && !templateValue && (facts.baseline || !situation.hasRecord)) {
    // Pods start without it: recorded, so that its creation rolls them even on a workload that
    // carries no other record (which would otherwise look opted in).
    decision.baselineEntry = std::string(kBaselineAbsent);
    if (running) decision.ifRolled = RolledValue{};
  }
}

void decidePresent(const ReferenceFacts& facts, const WorkloadSituation& situation,
                   ReferenceDecision& decision) {
  const ObjectState& now = facts.state;
  const std::optional<std::string>& baseline = facts.baseline;
  decision.status.disposition = Disposition::Tracked;
  if (facts.templateValue || !situation.podsRunning) {
    writeIntoTemplate(decision, trackedAgainst(now, facts.templateValue, facts.recorded));
  } else if (baseline == kBaselineAbsent && facts.ref.optional) {
    // An optional object the pods started without: they need a restart to see it.
    writeIntoTemplate(decision, trackedAgainst(now, std::nullopt, std::nullopt));
  } else if (isVersion(baseline)) {
    TrackedValue tracked = trackedAgainst(now, baseline, facts.recorded);
    if (tracked.value == *baseline) {
      holdOutOfTemplate(decision, NoRestart::Baseline, std::move(tracked));
    } else {
      writeIntoTemplate(decision, std::move(tracked));
    }
  } else if (situation.optingIn || (!facts.ref.optional && (situation.hasRecord || baseline))) {
    // Opted in while running, or an object the pods need that appeared after them: the pods run
    // (or start) with this version.
    holdOutOfTemplate(decision, situation.optingIn ? NoRestart::OptedIn : NoRestart::CreatedAfterWorkload,
                      trackedAgainst(now, std::nullopt, std::nullopt));
  } else {
    // An optional object that appeared: the pods started without it.
    writeIntoTemplate(decision, trackedAgainst(now, std::nullopt, std::nullopt));
  }
}

// Kept at the template's value, whatever the object is.
void keepTemplateValue(const ReferenceFacts& facts, Disposition disposition, ReferenceDecision& decision) {
  decision.status.disposition = disposition;
  decision.status.value = facts.templateValue;
}

}  // namespace

Result<ReferenceDecision> decideReference(ReferenceFacts facts, const WorkloadSituation& situation) {
  ReferenceDecision decision;
  ReferenceStatus& status = decision.status;
  status.key = templateAnnotationKey(facts.ref.kind, facts.ref.name);
  status.baseline = facts.baseline;
  status.selection = facts.selection.reason;
  const Presence presence = facts.state.presence;
  if (facts.screening == Screening::IgnoredByAnnotation) {
    keepTemplateValue(facts, Disposition::IgnoredByAnnotation, decision);
  } else if (facts.screening == Screening::NotSelected) {
    keepTemplateValue(facts, Disposition::NotSelected, decision);
  } else if (presence == Presence::Unknown) {
    return makeError(ErrorKind::Unavailable, std::string(refKindName(facts.ref.kind)) + "/" + facts.ref.name +
                                                 ": state unknown: " + facts.state.problem);
  } else if (presence == Presence::Present && facts.state.ignoreLabel) {
    keepTemplateValue(facts, Disposition::IgnoredByLabel, decision);
  } else if (!facts.selection.selected) {
    keepTemplateValue(facts, Disposition::NotSelected, decision);
  } else if (presence == Presence::Absent) {
    decideAbsent(facts, situation, decision);
  } else {
    decidePresent(facts, situation, decision);
  }
  status.state = std::move(facts.state);
  status.ref = std::move(facts.ref);
  return decision;
}

}  // namespace restarter::core
