// Reading a workload's explanation input from the API (see explain.hpp).
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
#include "restarter/core/json_access.hpp"
#include "restarter/core/roll.hpp"
#include "restarter/core/roll_input.hpp"
#include "restarter/core/rollout.hpp"
#include "restarter/core/rollout_queue.hpp"
#include "restarter/core/rollout_source.hpp"
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
