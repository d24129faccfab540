// The explanation document, explain-restart's `-o json` and `-o yaml` (see explanation.hpp):
// the schema cli/schema/restart-explanation.schema.json, key order included.
#include "restarter/base/rfc3339.hpp"
#include "restarter/core/rollout_queue.hpp"
#include "restarter/inspect/explanation.hpp"

namespace restarter::inspect {

using nlohmann::ordered_json;

namespace {

template <typename T>
ordered_json orNull(const std::optional<T>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

ordered_json annotationCause(const core::AnnotationChange& change) {
  ordered_json out;
  out["type"] = "annotation";
  out["object"] = {{"kind", std::string(core::refKindName(change.kind))}, {"name", change.name}};
  out["change"] = core::changeCauseName(change.cause);
  out["before"] = orNull(change.before);
  out["after"] = orNull(change.after);
  return out;
}

ordered_json referenceDocument(const core::ReferenceStatus& ref) {
  return {
      {"kind", std::string(core::refKindName(ref.ref.kind))},
      {"name", ref.ref.name},
      {"optional", ref.ref.optional},
      {"disposition", core::dispositionName(ref.disposition)},
      // Under Reloader's annotations: the rule that selects it, or why none does.
      {"selection", ref.selection.empty() ? ordered_json(nullptr) : ordered_json(ref.selection)},
      {"value", orNull(ref.value)},
      // The keys the template reads of the object (core/references.hpp); null: every key.
      {"keysRead", ref.ref.allKeys ? ordered_json(nullptr) : ordered_json(ref.ref.keys)},
      // The object has a newer version than `value` with the same content: its metadata alone
      // changed, or its content changed and changed back before the controller acted (A -> B
      // -> A within the debounce); the digests cannot tell which, so neither is claimed.
      {"metadataOnlyChange", ref.metadataOnly ? ordered_json(ref.state.uid + "/" + ref.state.resourceVersion)
                                              : ordered_json(nullptr)},
      // The version the pods run with where the template holds none.
      {"baseline", orNull(ref.baseline)},
      {"noRestart", ref.noRestart == core::NoRestart::None ? ordered_json(nullptr)
                                                           : ordered_json(core::noRestartText(ref.noRestart))}};
}

ordered_json holdDocument(const RolloutHold& hold) {
  ordered_json out = {{"status", holdStateName(hold.state)}};
  if (hold.reason) out["reason"] = *hold.reason;
  if (hold.state == HoldState::Held) {
    out["until"] = base::formatRfc3339(hold.until);
    out["waitingFor"] = orNull(hold.waitingFor);
    out["description"] = hold.description;
    out["recorded"] = base::formatRfc3339(hold.recorded);
  }
  out["lastRollout"] =
      hold.lastRollout ? ordered_json(base::formatRfc3339(*hold.lastRollout)) : ordered_json(nullptr);
  return out;
}

ordered_json windowDocument(const RolloutWindow& window) {
  ordered_json out = {{"status", windowStateName(window.state)},
                      {"window", window.window},
                      {"source", windowSourceName(window.source)}};
  if (window.state == WindowState::Invalid) out["reason"] = window.reason;
  if (window.nextOpening) out["nextOpening"] = base::formatRfc3339(*window.nextOpening);
  if (window.state == WindowState::Held) out["description"] = window.description;
  return out;
}

ordered_json queueDocument(const RolloutQueue& queue) {
  ordered_json out = {{"status", queueStateName(queue.state)}};
  if (queue.reason) out["reason"] = *queue.reason;
  if (queue.state == QueueState::Queued) {
    out["since"] = base::formatRfc3339(queue.since);
    out["priority"] = queue.priority;
    out["ahead"] = queue.ahead;
    out["scope"] = queue.scope;
    out["description"] = core::describeQueued(queue.ahead);
  }
  return out;
}

ordered_json modeDocument(const RolloutModeView& mode) {
  ordered_json out = {{"mode", rolloutModeName(mode.mode)}};
  if (mode.invalidValue) out["invalidValue"] = *mode.invalidValue;
  if (mode.rollCommand) out["rollCommand"] = *mode.rollCommand;
  return out;
}

ordered_json pendingDocument(const Pending& pending) {
  ordered_json out = {{"status", pendingStateName(pending.state)}};
  if (!pending.reason.empty()) out["reason"] = pending.reason;
  out["changes"] = ordered_json::array();
  for (const auto& change : pending.changes) out["changes"].push_back(annotationCause(change));
  out["references"] = ordered_json::array();
  for (const auto& ref : pending.references) out["references"].push_back(referenceDocument(ref));
  out["rolloutHold"] = holdDocument(pending.hold);
  out["rolloutWindow"] = windowDocument(pending.window);
  out["rolloutQueue"] = queueDocument(pending.queue);
  if (pending.baselineRecorded) {
    out["baselineRecorded"] = {{"time", pending.baselineRecorded->time},
                               {"note", pending.baselineRecorded->note}};
  }
  out["rolloutMode"] = modeDocument(pending.mode);
  return out;
}

ordered_json rollDocument(const Roll& roll) {
  ordered_json out = {{"updateStrategy", updateStrategyName(roll.strategy)},
                      {"readyTimeout", core::formatDuration(roll.readyTimeout)},
                      {"state", rollStateName(roll.state)},
                      {"reason", roll.reason}};
  if (roll.blockedBy) out["blockedBy"] = *roll.blockedBy;
  out["outdatedPods"] = roll.outdatedPods;
  out["keptPods"] = roll.keptPods;
  out["blockingPod"] = roll.blockingPod;
  return out;
}

}  // namespace

ordered_json causesDocument(const core::RevisionCause& cause) {
  ordered_json causes = ordered_json::array();
  if (cause.created) causes.push_back({{"type", "created"}});
  for (const auto& change : cause.annotations) causes.push_back(annotationCause(change));
  for (const auto& path : cause.templatePaths) causes.push_back({{"type", "template"}, {"path", path}});
  return causes;
}

ordered_json explanationDocument(const Explanation& explanation) {
  const core::FirstRollout& first = explanation.firstRollout;
  ordered_json doc;
  doc["apiVersion"] = "restarter.stackable.tech/v1alpha1";
  doc["kind"] = "RestartExplanation";
  doc["workload"] = {{"kind", core::workloadKindName(explanation.workload.kind)},
                     {"namespace", explanation.workload.namespace_},
                     {"name", explanation.workload.name},
                     {"uid", explanation.workload.uid},
                     {"generation", first.generation}};
  doc["managedBy"] = {{"by", managedByName(explanation.management.by)},
                      {"reason", explanation.management.reason}};
  doc["firstRollout"] = {{"verdict", core::firstRolloutVerdictName(first.verdict)},
                         {"reason", first.reason},
                         {"generation", first.generation},
                         {"revisions", first.revisions},
                         {"annotationsWrittenBy", core::annotationWriterName(first.writer)},
                         {"fieldManager", first.fieldManager}};
  ordered_json revisions = ordered_json::array();
  for (const core::ExplainedRevision& r : explanation.revisions) {
    revisions.push_back({{"revision", r.revision.number},
                         {"name", r.revision.name},
                         {"created", r.revision.created},
                         {"pods", r.revision.pods},
                         {"current", r.revision.name == explanation.currentRevision},
                         {"causes", causesDocument(r.cause)}});
  }
  doc["revisions"] = std::move(revisions);
  doc["pending"] = pendingDocument(explanation.pending);
  if (explanation.roll) doc["roll"] = rollDocument(*explanation.roll);
  return doc;
}

}  // namespace restarter::inspect
