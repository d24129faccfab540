// Reading the API and building the explanation document (see explain.hpp).
#include "restarter/inspect/explain.hpp"

#include "restarter/base/clock.hpp"
#include "restarter/base/rfc3339.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <initializer_list>
#include <map>
#include <string_view>

#include "restarter/core/baseline.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/disruption_budget.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/roll.hpp"
#include "restarter/core/roll_input.hpp"
#include "restarter/core/rollout.hpp"
#include "restarter/core/rollout_mode.hpp"
#include "restarter/core/rollout_queue.hpp"
#include "restarter/core/rollout_source.hpp"
#include "restarter/core/rollout_window.hpp"
#include "restarter/core/write_plan.hpp"
#include "restarter/inspect/status.hpp"
#include "restarter/kube/digest_key.hpp"

namespace restarter::inspect {

using nlohmann::json;
using nlohmann::ordered_json;

kube::ResourceRef workloadResourceOf(core::WorkloadKind kind) {
  switch (kind) {
    case core::WorkloadKind::StatefulSet: return kube::resources::statefulSets();
    case core::WorkloadKind::Deployment: return kube::resources::deployments();
    case core::WorkloadKind::DaemonSet: return kube::resources::daemonSets();
    case core::WorkloadKind::Rollout: return kube::resources::rollouts();
  }
  return kube::resources::statefulSets();
}

namespace {

// The value at `path`, or null when there is none there (core::valueAt).
const json& valueOrNull(const json& object, std::initializer_list<std::string_view> path) {
  static const json kNull;
  const json* value = core::valueAt(object, path);
  return value != nullptr ? *value : kNull;
}

std::string label(const json& object, std::string_view key) {
  return core::stringAt(object, {"metadata", "labels", key});
}

bool ownedBy(const json& object, const std::string& uid) {
  const json& owners = valueOrNull(object, {"metadata", "ownerReferences"});
  if (!owners.is_array()) return false;
  return std::any_of(owners.begin(), owners.end(),
                     [&](const json& o) { return core::stringAt(o, {"uid"}) == uid; });
}

std::int64_t toInt(const std::string& s) {
  std::int64_t value = 0;
  std::from_chars(s.data(), s.data() + s.size(), value);
  return value;
}

// The pod template a revision object records, and the pod label value that marks its pods.
struct RevisionShape {
  core::Revision revision;
  std::string podHash;
};

RevisionShape fromControllerRevision(const json& cr, core::WorkloadKind kind) {
  RevisionShape out;
  out.revision.name = core::metadataString(cr, "name");
  out.revision.created = core::metadataString(cr, "creationTimestamp");
  const json& number = valueOrNull(cr, {"revision"});
  out.revision.number = number.is_number_integer() ? number.get<std::int64_t>() : 0;
  json podTemplate = valueOrNull(cr, {"data", "spec", "template"});
  if (podTemplate.is_object()) podTemplate.erase("$patch");
  out.revision.podTemplate = std::move(podTemplate);
  // StatefulSet pods carry the revision's name in their controller-revision-hash label; DaemonSet
  // pods carry the hash the DaemonSet controller also puts on the revision under the same label
  // (seen on kube-controller-manager 1.37; kuttl status-fleet counts a DaemonSet's pods by it).
  out.podHash =
      kind == core::WorkloadKind::StatefulSet ? out.revision.name : label(cr, "controller-revision-hash");
  return out;
}

// A Deployment's or an Argo Rollout's ReplicaSet. Argo Rollouts numbers them in
// rollout.argoproj.io/revision and marks their pods with rollouts-pod-template-hash.
RevisionShape fromReplicaSet(const json& rs, core::WorkloadKind kind) {
  const bool argo = kind == core::WorkloadKind::Rollout;
  const std::string_view hashLabel = argo ? "rollouts-pod-template-hash" : "pod-template-hash";
  RevisionShape out;
  out.revision.name = core::metadataString(rs, "name");
  out.revision.created = core::metadataString(rs, "creationTimestamp");
  out.revision.number =
      toInt(core::stringAt(rs, {"metadata", "annotations",
                                argo ? "rollout.argoproj.io/revision" : "deployment.kubernetes.io/revision"}));
  json podTemplate = valueOrNull(rs, {"spec", "template"});
  // The controller adds the hash label to every ReplicaSet's template; it is not a change.
  if (podTemplate.is_object() && podTemplate.contains("metadata") && podTemplate["metadata"].is_object() &&
      podTemplate["metadata"].contains("labels") && podTemplate["metadata"]["labels"].is_object()) {
    podTemplate["metadata"]["labels"].erase(std::string(hashLabel));
  }
  out.revision.podTemplate = std::move(podTemplate);
  out.podHash = label(rs, hashLabel);
  return out;
}

}  // namespace

std::optional<core::Revision> revisionFromObject(const json& object, core::WorkloadKind kind,
                                                 const std::string& workloadUid) {
  if (!ownedBy(object, workloadUid)) return std::nullopt;
  return core::revisionsInReplicaSets(kind) ? fromReplicaSet(object, kind).revision
                                            : fromControllerRevision(object, kind).revision;
}

std::optional<core::HeldRollout> heldRolloutFromEvent(const json& event) {
  if (core::stringAt(event, {"reason"}) != core::kRolloutHeldReason) return std::nullopt;
  const auto until = core::heldUntilFromNote(core::stringAt(event, {"message"}));
  if (!until) return std::nullopt;
  for (const std::string& candidate :
       {core::stringAt(event, {"eventTime"}), core::stringAt(event, {"lastTimestamp"}),
        core::stringAt(event, {"firstTimestamp"}), core::metadataString(event, "creationTimestamp")}) {
    if (candidate.empty()) continue;
    if (auto recorded = base::parseRfc3339(candidate)) return core::HeldRollout{*recorded, *until};
  }
  return std::nullopt;
}

namespace {

ordered_json annotationCause(const core::AnnotationChange& change) {
  ordered_json out;
  out["type"] = "annotation";
  out["object"] = {{"kind", std::string(core::refKindName(change.kind))}, {"name", change.name}};
  out["change"] = core::changeCauseName(change.cause);
  out["before"] = change.before ? ordered_json(*change.before) : ordered_json(nullptr);
  out["after"] = change.after ? ordered_json(*change.after) : ordered_json(nullptr);
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

namespace {

// The "roll" section: the same core::decideRoll the controller's OnDelete roll makes, over the
// pods read here. A workload or pod the API describes oddly gives state "unknown" and the reason.
ordered_json rollDocument(const ExplainInput& input) {
  ordered_json roll;
  auto workload = core::rollWorkloadFromJson(input.workload, input.kind, input.daemonSetRevision);
  std::vector<core::RollPod> pods;
  core::Status read = core::okStatus();
  if (workload) {
    for (const json& item : input.pods) {
      auto pod = core::rollPodFromJson(item, input.kind);
      if (!pod) {
        read = std::move(pod).error();
        break;
      }
      pods.push_back(std::move(*pod));
    }
  }
  roll["updateStrategy"] =
      workload && workload->strategy == core::UpdateStrategy::OnDelete ? "OnDelete" : "RollingUpdate";
  roll["readyTimeout"] = core::formatDuration(input.readyTimeout);
  if (!workload || !read) {
    roll["state"] = "unknown";
    roll["reason"] = !workload ? workload.error().describe() : read.error().describe();
    roll["outdatedPods"] = ordered_json::array();
    roll["keptPods"] = ordered_json::array();
    roll["blockingPod"] = "";
    return roll;
  }
  const core::RollDecision decision =
      core::decideRoll(*workload, std::move(pods), input.now, input.readyTimeout);
  roll["state"] = core::rollStateName(decision.state);
  std::string reason = decision.reason;
  std::optional<core::BlockingBudget> budget;
  if (decision.evict) {
    reason = "the next pod to evict is " + *decision.evict;
    // An eviction the Eviction API refuses is retried by the controller; name what it waits for.
    for (const json& pod : input.pods) {
      if (core::metadataString(pod, "name") != *decision.evict) continue;
      budget = core::budgetBlocking(pod, input.budgets);
      break;
    }
    if (budget) reason += ", whose eviction waits for " + budget->describe();
  }
  roll["reason"] = reason;
  if (budget) roll["blockedBy"] = "PodDisruptionBudget/" + budget->name;
  roll["outdatedPods"] = decision.outdated;
  roll["keptPods"] = decision.kept;
  roll["blockingPod"] = decision.blockingPod;
  return roll;
}

// The "rolloutMode" of pending (core/rollout_mode.hpp): manual or auto, the invalid value warned
// about, and for a manual workload with a change due the command that rolls it.
ordered_json rolloutModeDocument(const ExplainInput& input, bool restartDue) {
  const core::RolloutModeSetting setting = core::rolloutModeOf(input.workload);
  const bool manual = setting.mode == core::RolloutMode::Manual;
  ordered_json mode = {
      {"mode", std::string(manual ? core::kRolloutModeManualValue : core::kRolloutModeAutoValue)}};
  if (setting.invalid) mode["invalidValue"] = *setting.invalid;
  if (manual && restartDue) {
    mode["rollCommand"] = core::rollCommand(input.kind, core::metadataString(input.workload, "namespace"),
                                            core::metadataString(input.workload, "name"));
  }
  return mode;
}

const char* managedByName(core::ManagedBy by) {
  switch (by) {
    case core::ManagedBy::Label: return "label";
    case core::ManagedBy::Reloader: return "reloader-annotations";
    case core::ManagedBy::None: return "none";
  }
  return "none";
}

// The desired annotations of `workload` as serve-controller decides them for a running workload,
// its references read fresh (metadata only but for the kinds whose content is read: hashed, then
// dropped).
core::Result<core::DesiredAnnotations> desiredFromCluster(kube::Client& client, const json& workload,
                                                          const std::string& namespace_,
                                                          core::ContentAwareness contentAware,
                                                          const core::SelectionOptions& selection,
                                                          bool rollOnOptIn, const core::DigestKey* digestKey) {
  core::DesiredOptions desiredOptions;
  desiredOptions.podsRunning = true;
  desiredOptions.rollOnOptIn = rollOnOptIn;
  desiredOptions.selection = selection;
  return core::desiredAnnotations(
      workload,
      [&](core::RefKind refKind, const std::string& refName) {
        const bool readContent = core::readsContent(contentAware, refKind);
        kube::GetOptions options;
        options.metadataOnly = !readContent;
        const auto ref =
            refKind == core::RefKind::ConfigMap ? kube::resources::configMaps() : kube::resources::secrets();
        auto object = client.get(ref, namespace_, refName, options);
        if (!object) {
          return object.error().kind == core::ErrorKind::NotFound
                     ? core::ObjectState::absent()
                     : core::ObjectState::unknown(object.error().describe());
        }
        auto state = core::objectStateFromObject(*object, refKind, readContent, digestKey);
        return state ? *state : core::ObjectState::unknown(state.error().describe());
      },
      desiredOptions);
}

}  // namespace

core::Result<ExplainInput> readExplainInput(kube::Client& client, core::WorkloadKind kind,
                                            const std::string& namespace_, const std::string& name,
                                            core::ContentAwareness contentAware,
                                            const core::SelectionOptions& selection, bool rollOnOptIn,
                                            const core::DigestKey* digestKey) {
  ExplainInput input;
  input.kind = kind;
  auto workload = client.get(workloadResourceOf(kind), namespace_, name);
  if (!workload) return std::move(workload).error();
  input.workload = std::move(*workload);
  input.management = core::workloadManagement(input.workload, selection);
  const std::string uid = core::metadataString(input.workload, "uid");

  kube::ListOptions byLabels;
  byLabels.labelSelector = core::podSelector(input.workload);
  // Deployments and Argo Rollouts: ReplicaSets and pods they own (metadata only).
  const bool deployment = core::revisionsInReplicaSets(kind);
  auto owned = client.list(deployment ? kube::resources::replicaSets() : kube::resources::controllerRevisions(),
                           namespace_, byLabels);
  if (!owned) return std::move(owned).error();
  std::map<std::string, RevisionShape*> byHash;
  std::vector<RevisionShape> shapes;
  for (const json& item : owned->items) {
    if (!ownedBy(item, uid)) continue;
    shapes.push_back(deployment ? fromReplicaSet(item, kind) : fromControllerRevision(item, kind));
  }
  for (RevisionShape& shape : shapes) byHash[shape.podHash] = &shape;

  kube::ListOptions pods = byLabels;
  // Deployments: metadata only (docs/architecture.md, "Metadata only"); StatefulSets and
  // DaemonSets in full, for the roll's Ready conditions ("Rolls from the cluster").
  pods.metadataOnly = deployment;
  auto podList = client.list(kube::resources::pods(), namespace_, pods);
  if (!podList) return std::move(podList).error();
  const char* hashLabel = kind == core::WorkloadKind::Rollout ? "rollouts-pod-template-hash"
                          : deployment                        ? "pod-template-hash"
                                                              : "controller-revision-hash";
  for (const json& pod : podList->items) {
    if (!ownedBy(pod, uid) && !deployment) continue;  // Deployment pods are owned by ReplicaSets
    if (!deployment && core::controlledBy(pod, uid)) input.pods.push_back(pod);
    if (valueOrNull(pod, {"metadata", "deletionTimestamp"}).is_string()) continue;  // terminating
    const auto it = byHash.find(label(pod, hashLabel));
    if (it != byHash.end()) ++it->second->revision.pods;
  }

  if (kind == core::WorkloadKind::DaemonSet)
    input.daemonSetRevision = core::daemonSetRevisionHash(owned->items, uid);
  if (!deployment && core::stringAt(input.workload, {"spec", "updateStrategy", "type"}) == "OnDelete") {
    // Only to name a budget restarter's roll waits for (only OnDelete workloads are rolled by
    // evictions): a failed list (no permission) leaves it unnamed.
    if (auto budgets = client.list(kube::resources::podDisruptionBudgets(), namespace_, kube::ListOptions{}))
      input.budgets = std::move(budgets->items);
  }
  input.now = std::chrono::time_point_cast<std::chrono::microseconds>(base::systemClock().wallNow());
  for (RevisionShape& shape : shapes) input.revisions.push_back(std::move(shape.revision));
  std::sort(input.revisions.begin(), input.revisions.end(),
            [](const core::Revision& a, const core::Revision& b) { return a.number < b.number; });
  if (kind == core::WorkloadKind::StatefulSet) {
    input.currentRevision = core::stringAt(input.workload, {"status", "updateRevision"});
  } else if (!input.revisions.empty()) {
    input.currentRevision = input.revisions.back().name;
  }

  // Pending: the live template against the live objects (desiredFromCluster). An Argo Rollout
  // whose pod template is not its own has nothing pending here: say where to look instead.
  if (const core::PodTemplateSource source = core::podTemplateSourceOf(input.workload, kind);
      source.source != core::TemplateSource::Own) {
    input.desired =
        core::makeError(core::ErrorKind::InvalidInput,
                        source.source == core::TemplateSource::WorkloadRef
                            ? "the pod template is the workloadRef Deployment's (explain-restart deployment/" +
                                  source.name + ")"
                            : source.problem);
  } else {
    input.desired =
        desiredFromCluster(client, input.workload, namespace_, contentAware, selection, rollOnOptIn, digestKey);
  }

  // When the baseline was recorded and why: the newest BaselineRecorded Event, if any is kept
  // (Events expire; the baseline annotation itself stays). A failed list only leaves it out.
  kube::ListOptions recordedBaseline;
  recordedBaseline.fieldSelector =
      "involvedObject.uid=" + uid + ",reason=" + std::string(core::kBaselineRecordedReason);
  if (auto recorded = client.list(kube::resources::coreEvents(), namespace_, recordedBaseline)) {
    for (const json& event : recorded->items) {
      std::string time;
      for (const std::string& candidate :
           {core::stringAt(event, {"eventTime"}), core::stringAt(event, {"lastTimestamp"}),
            core::stringAt(event, {"firstTimestamp"}), core::metadataString(event, "creationTimestamp")}) {
        if (!candidate.empty()) {
          time = candidate;
          break;
        }
      }
      if (!input.baselineRecorded || time > input.baselineRecorded->first)
        input.baselineRecorded = std::pair{time, core::stringAt(event, {"message"})};
    }
  }

  // Held rollouts: the workload's RolloutHeld Events, selected on the server.
  kube::ListOptions held;
  held.fieldSelector = "involvedObject.uid=" + uid + ",reason=" + std::string(core::kRolloutHeldReason);
  auto events = client.list(kube::resources::coreEvents(), namespace_, held);
  if (events) {
    std::vector<core::HeldRollout> holds;
    for (const json& event : events->items) {
      if (auto hold = heldRolloutFromEvent(event)) holds.push_back(*hold);
    }
    input.heldRollouts = std::move(holds);
  } else {
    input.heldRollouts = std::move(events).error();
  }
  return input;
}

namespace {

// The rollout window as serve-controller judges it at `input.now` (core/rollout_window.hpp): the
// workload's annotation, else the controller's --rollout-window (as given to this command).
//   status: none (no window), invalid (the annotation does not parse: no hold, a Warning Event),
//   open, closed (nothing pending), held (a change pending waits for the opening).
ordered_json rolloutWindowDocument(const ExplainInput& input, bool pendingRollout) {
  const auto own = core::ownRolloutWindowOf(input.workload);
  const std::string spec = own ? own->spec : input.defaultRolloutWindow;
  ordered_json window = {
      {"status", "none"}, {"window", spec}, {"source", own ? "annotation" : "controller default"}};
  const auto schedule = own ? own->schedule : core::parseRolloutSchedule(spec);
  if (!schedule) {
    window["status"] = "invalid";
    window["reason"] = schedule.error().message;
    return window;
  }
  if (schedule->always()) return window;
  const core::TimePoint opening = schedule->nextOpening(input.now);
  if (schedule->isOpen(input.now)) {
    window["status"] = "open";
    return window;
  }
  window["status"] = pendingRollout ? "held" : "closed";
  window["nextOpening"] = base::formatRfc3339(opening);
  if (pendingRollout)
    window["description"] = "held by the rollout window until " + base::formatRfc3339(opening);
  return window;
}

}  // namespace
std::optional<core::QueuedRollout> queuedRolloutOf(const json& workload, core::WorkloadKind kind) {
  const auto since = core::queuedSinceOf(workload);
  if (!since) return std::nullopt;
  std::string id(core::workloadKindName(kind));
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  id += "/" + core::metadataString(workload, "namespace") + "/" + core::metadataString(workload, "name");
  return core::QueuedRollout{std::move(id), core::rolloutPriorityOf(workload).value, *since};
}

core::Result<std::vector<core::QueuedRollout>> readRolloutQueue(kube::Client& client,
                                                                const std::string& namespace_,
                                                                const std::string& labelSelector,
                                                                std::string& scope) {
  auto listIn = [&](const std::string& listed) -> core::Result<std::vector<core::QueuedRollout>> {
    std::vector<core::QueuedRollout> queue;
    for (const core::WorkloadKind kind : {core::WorkloadKind::StatefulSet, core::WorkloadKind::Deployment,
                                          core::WorkloadKind::DaemonSet, core::WorkloadKind::Rollout}) {
      kube::ListOptions list;
      list.labelSelector = labelSelector;
      auto workloads = client.list(workloadResourceOf(kind), listed, list);
      // Rollouts where their CRD is not installed (or not listable): none.
      if (!workloads && kind == core::WorkloadKind::Rollout) continue;
      if (!workloads) return std::move(workloads).error();
      for (const json& workload : workloads->items) {
        if (auto queued = queuedRolloutOf(workload, kind)) queue.push_back(std::move(*queued));
      }
    }
    return queue;
  };
  auto all = listIn("");
  if (all) {
    scope = "all namespaces";
    return all;
  }
  // Not allowed cluster-wide: the workload's own namespace, said in the scope.
  if (all.error().kind != core::ErrorKind::Forbidden || namespace_.empty())
    return std::move(all).error().withContext("listing the rollout queue");
  auto own = listIn(namespace_);
  if (!own) return std::move(own).error().withContext("listing the rollout queue");
  scope = "namespace " + namespace_;
  return own;
}

ordered_json explanationDocument(const ExplainInput& input) {
  const auto explained = core::explainRevisions(input.revisions);
  // The write the controller would make (stamping its last-rollout), and whether it fits.
  std::vector<core::AnnotationChange> pendingChanges;
  std::string refusal;
  if (input.desired) {
    auto plan = core::planWrite(input.workload, *input.desired, core::WriteOptions{true});
    if (plan) {
      pendingChanges = std::move(plan->changes);
      refusal = plan->refusal();
    }
  }
  const core::FirstRollout first =
      core::judgeFirstRollout(input.workload, input.kind, explained, pendingChanges);

  ordered_json doc;
  doc["apiVersion"] = "restarter.stackable.tech/v1alpha1";
  doc["kind"] = "RestartExplanation";
  doc["workload"] = {{"kind", core::workloadKindName(input.kind)},
                     {"namespace", core::metadataString(input.workload, "namespace")},
                     {"name", core::metadataString(input.workload, "name")},
                     {"uid", core::metadataString(input.workload, "uid")},
                     {"generation", first.generation}};
  doc["managedBy"] = {{"by", managedByName(input.management.by)}, {"reason", input.management.reason}};
  doc["firstRollout"] = {{"verdict", core::firstRolloutVerdictName(first.verdict)},
                         {"reason", first.reason},
                         {"generation", first.generation},
                         {"revisions", first.revisions},
                         {"annotationsWrittenBy", core::annotationWriterName(first.writer)},
                         {"fieldManager", first.fieldManager}};
  ordered_json revisions = ordered_json::array();
  for (const core::ExplainedRevision& r : explained) {
    revisions.push_back({{"revision", r.revision.number},
                         {"name", r.revision.name},
                         {"created", r.revision.created},
                         {"pods", r.revision.pods},
                         {"current", r.revision.name == input.currentRevision},
                         {"causes", causesDocument(r.cause)}});
  }
  doc["revisions"] = std::move(revisions);

  ordered_json pending;
  if (!input.desired) {
    pending["status"] = "unknown";
    pending["reason"] = input.desired.error().describe();
    pending["changes"] = ordered_json::array();
    pending["references"] = ordered_json::array();
  } else {
    ordered_json changes = ordered_json::array();
    for (const auto& change : pendingChanges) changes.push_back(annotationCause(change));
    // A write the apiserver would refuse is never made: not "restart due" forever, but refused
    // (the controller records an AnnotationsTooLarge Event once).
    pending["status"] = !refusal.empty() ? "refused-too-large" : changes.empty() ? "up-to-date" : "restart-due";
    if (!refusal.empty()) pending["reason"] = "annotations too large: " + refusal;
    pending["changes"] = std::move(changes);
    ordered_json references = ordered_json::array();
    for (const core::ReferenceStatus& ref : input.desired->references) {
      references.push_back(
          {{"kind", std::string(core::refKindName(ref.ref.kind))},
           {"name", ref.ref.name},
           {"optional", ref.ref.optional},
           {"disposition", core::dispositionName(ref.disposition)},
           // Under Reloader's annotations: the rule that selects it, or why none does.
           {"selection", ref.selection.empty() ? ordered_json(nullptr) : ordered_json(ref.selection)},
           {"value", ref.value ? ordered_json(*ref.value) : ordered_json(nullptr)},
           // The keys the template reads of the object (core/references.hpp); null: every key.
           {"keysRead", ref.ref.allKeys ? ordered_json(nullptr) : ordered_json(ref.ref.keys)},
           // The object has a newer version than `value` with the same content: its metadata alone
           // changed, or its content changed and changed back before the controller acted (A -> B
           // -> A within the debounce); the digests cannot tell which, so neither is claimed.
           {"metadataOnlyChange", ref.metadataOnly
                                      ? ordered_json(ref.state.uid + "/" + ref.state.resourceVersion)
                                      : ordered_json(nullptr)},
           // The version the pods run with where the template holds none.
           {"baseline", ref.baseline ? ordered_json(*ref.baseline) : ordered_json(nullptr)},
           {"noRestart", ref.noRestart == core::NoRestart::None
                             ? ordered_json(nullptr)
                             : ordered_json(core::noRestartText(ref.noRestart))}});
    }
    pending["references"] = std::move(references);
  }
  const std::optional<core::TimePoint> lastRollout = core::lastRolloutOf(input.workload);
  ordered_json hold;
  if (!input.heldRollouts) {
    hold["status"] = "unknown";
    hold["reason"] = input.heldRollouts.error().describe();
  } else if (auto current =
                 core::currentRolloutHold(*input.heldRollouts, lastRollout, !pendingChanges.empty())) {
    // The Event says when the hold ends at the latest; what it waits for now is judged again from
    // the workload's status, as the controller judges it (core::decideRollout), with the interval
    // the Event implies (its upper bound less the last rollout).
    std::optional<core::RolloutDecision> now;
    if (lastRollout && current->until > *lastRollout) {
      now = core::decideRollout(
          lastRollout, input.now,
          std::chrono::duration_cast<std::chrono::milliseconds>(current->until - *lastRollout),
          core::rolloutProgressOf(input.workload, input.kind));
    }
    if (now && now->rollNow) {
      hold["status"] = "not-held";
      hold["reason"] = now->reason;
    } else {
      hold["status"] = "held";
      const bool floorOnly = now && now->waitingFor.empty();
      hold["until"] = base::formatRfc3339(floorOnly ? now->notBefore : current->until);
      hold["waitingFor"] =
          now && !now->waitingFor.empty() ? ordered_json(now->waitingFor) : ordered_json(nullptr);
      hold["description"] =
          now ? core::describeHold(*now) : "held until " + base::formatRfc3339(current->until);
      hold["recorded"] = base::formatRfc3339(current->recorded);
    }
  } else {
    hold["status"] = "not-held";
  }
  hold["lastRollout"] = lastRollout ? ordered_json(base::formatRfc3339(*lastRollout)) : ordered_json(nullptr);
  pending["rolloutHold"] = std::move(hold);
  pending["rolloutWindow"] = rolloutWindowDocument(input, !pendingChanges.empty() && refusal.empty());
  // --max-concurrent-rollouts: the workload's place in the controller's queue.
  ordered_json queue;
  const auto self = queuedRolloutOf(input.workload, input.kind);
  if (!self) {
    queue["status"] = "not-queued";
  } else if (pendingChanges.empty()) {
    queue["status"] = "not-queued";
    queue["reason"] = "nothing pending: the controller removes the queued-since record";
  } else if (!input.rolloutQueue) {
    queue["status"] = "unknown";
    queue["reason"] = input.rolloutQueue.error().describe();
  } else {
    const core::SlotAdmission place = core::admitRollout(1, 1, *input.rolloutQueue, *self);
    queue["status"] = "queued";
    queue["since"] = base::formatRfc3339(self->since);
    queue["priority"] = self->priority;
    queue["ahead"] = place.ahead;
    queue["scope"] = input.rolloutQueueScope;
    queue["description"] = core::describeQueued(place.ahead);
  }
  pending["rolloutQueue"] = std::move(queue);
  if (input.baselineRecorded) {
    pending["baselineRecorded"] = {{"time", input.baselineRecorded->first},
                                   {"note", input.baselineRecorded->second}};
  }
  pending["rolloutMode"] = rolloutModeDocument(input, !pendingChanges.empty() && refusal.empty());
  doc["pending"] = std::move(pending);
  if (!core::revisionsInReplicaSets(input.kind)) doc["roll"] = rollDocument(input);
  return doc;
}

std::optional<core::DigestKey> readJudgementDigestKey(kube::Client& client, const JudgementOptions& judgement,
                                                      std::ostream& err) {
  if (judgement.contentAware == core::ContentAwareness::Off) return std::nullopt;
  auto key = kube::readDigestKey(client, judgement.digestKey.namespace_, judgement.digestKey.name);
  if (key) {
    // A rotation under way is judged as serve-controller judges it (under both keys), and said.
    if (key->previous() != nullptr) {
      err << "note: digest key rotation under way (key " << key->id() << ", previous key "
          << key->previous()->id()
          << "): once no record uses the previous key, run rotate-digest-key --finish\n";
    }
    return std::move(*key);
  }
  // The same advice as the controller's /readyz (an invalid key leaves it unready too).
  err << "warning: digest key: "
      << kube::digestKeyAdvice(key.error(), judgement.digestKey.namespace_, judgement.digestKey.name)
      << "; contents are compared unkeyed, so a metadata-only change may be judged a change\n";
  return std::nullopt;
}

core::Result<ExplainInput> readJudgedInput(kube::Client& client, core::WorkloadKind kind,
                                           const std::string& namespace_, const std::string& name,
                                           const JudgementOptions& judgement, const core::DigestKey* digestKey,
                                           bool withQueue) {
  auto input = readExplainInput(client, kind, namespace_, name, judgement.contentAware, judgement.selection,
                                judgement.rollOnOptIn, digestKey);
  if (!input) return input;
  input->readyTimeout = judgement.readyTimeout;
  input->defaultRolloutWindow = judgement.rolloutWindow;
  // Queued by --max-concurrent-rollouts: its place among the queued workloads.
  if (withQueue && queuedRolloutOf(input->workload, kind)) {
    input->rolloutQueue =
        readRolloutQueue(client, namespace_, statusSelector(judgement.selection, ""), input->rolloutQueueScope);
  }
  return input;
}

}  // namespace restarter::inspect
