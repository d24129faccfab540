// Condensing explanations into status rows, sorting and rendering them (see status.hpp).
#include "restarter/inspect/status.hpp"

#include "restarter/kube/discovery.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <tuple>

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/rollout_queue.hpp"
#include "text_cells.hpp"

namespace restarter::inspect {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// Field access that tolerates any shape: a missing member or a non-object reads as null.
template <typename Json>
const Json& member(const Json& object, const char* key) {
  static const Json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

template <typename Json>
std::int64_t integer(const Json& value, std::int64_t fallback = 0) {
  return value.is_number_integer() ? value.template get<std::int64_t>() : fallback;
}

// The roll needs attention: paused, unknown, or its next eviction waits for a budget.
bool rollNeedsAttention(const WorkloadStatus& row) {
  return row.roll &&
         (row.roll->state == RollState::Paused || row.roll->state == RollState::Unknown || row.roll->blockedBy);
}

int attentionGroup(const WorkloadStatus& row) {
  switch (row.pending) {
    case PendingState::Unknown: return 0;
    case PendingState::RestartDue:
    case PendingState::RefusedTooLarge: return 1;
    case PendingState::UpToDate: break;
  }
  if (rollNeedsAttention(row)) return 1;
  if (row.firstRollout == core::FirstRolloutVerdict::ExtraRestart) return 2;
  if (row.ready < row.desired || row.current < row.desired) return 3;
  return 4;
}

std::string pendingText(const WorkloadStatus& row) {
  switch (row.pending) {
    case PendingState::RestartDue:
      if (row.rollCommand) return "manual: pending; run `" + *row.rollCommand + "`";
      if (row.heldByWindowUntil) return "held by the rollout window until " + *row.heldByWindowUntil;
      if (row.heldFor) return "held: waiting for the previous rollout (" + *row.heldFor + ")";
      if (row.queuedAhead) return core::describeQueued(static_cast<std::size_t>(*row.queuedAhead));
      return row.heldUntil ? "held until " + *row.heldUntil : "restart due";
    case PendingState::UpToDate: return row.noRestart.empty() ? "no" : "no (held back)";
    case PendingState::RefusedTooLarge: return "refused: annotations too large";
    case PendingState::Unknown: break;
  }
  return "unknown";
}

// The ROLL cell: the state, and the budget a rolling eviction waits for ("rolling (blocked by
// pdb/db-budget)", as kubectl abbreviates the kind).
std::string rollText(const WorkloadStatus& row) {
  if (!row.roll) return "-";
  const std::string state = rollStateName(row.roll->state);
  if (!row.roll->blockedBy) return state;
  const std::string_view prefix = "PodDisruptionBudget/";
  std::string budget = *row.roll->blockedBy;
  if (budget.rfind(prefix, 0) == 0) budget = "pdb/" + budget.substr(prefix.size());
  return state + " (blocked by " + budget + ")";
}

// The CHANGES cell of the wide table: the pending changes (or why pending is unknown or refused),
// what restarts nothing, and why a roll needs attention.
std::string changesText(const WorkloadStatus& row) {
  std::string changes;
  for (const std::string& change : row.pendingChanges) changes += (changes.empty() ? "" : "; ") + change;
  if ((row.pending == PendingState::Unknown || row.pending == PendingState::RefusedTooLarge) &&
      !row.pendingReason.empty())
    changes = row.pendingReason;
  for (const std::string& note : row.noRestart) changes += (changes.empty() ? "" : "; ") + note;
  if (rollNeedsAttention(row) && !row.roll->reason.empty()) {
    changes += (changes.empty() ? "" : "; ") +
               ("roll " + std::string(rollStateName(row.roll->state)) + ": " + row.roll->reason);
  }
  return changes.empty() ? "-" : changes;
}

}  // namespace

WorkloadStatus statusFromExplanation(const Explanation& explanation, const json& workload) {
  WorkloadStatus row;
  row.kind = explanation.workload.kind;
  row.namespace_ = explanation.workload.namespace_;
  row.name = explanation.workload.name;
  row.managedBy = explanation.management.reason;

  const json& spec = member(workload, "spec");
  const json& status = member(workload, "status");
  if (explanation.workload.kind == core::WorkloadKind::DaemonSet) {
    row.desired = integer(member(status, "desiredNumberScheduled"));
    row.ready = integer(member(status, "numberReady"));
  } else {
    row.desired = integer(member(spec, "replicas"), 1);  // the API's default when absent
    row.ready = integer(member(status, "readyReplicas"));
  }

  for (const core::ExplainedRevision& revision : explanation.revisions) {
    if (revision.revision.name == explanation.currentRevision) row.current = revision.revision.pods;
    if (!revision.cause.annotations.empty()) ++row.restarts;
  }

  const Pending& pending = explanation.pending;
  row.pending = pending.state;
  row.pendingReason = pending.reason;
  for (const auto& change : pending.changes) row.pendingChanges.push_back(changeLine(change));
  for (const auto& ref : pending.references) {
    if (ref.noRestart == core::NoRestart::None) continue;
    row.noRestart.push_back(std::string(core::refKindName(ref.ref.kind)) + "/" + ref.ref.name + ": " +
                            core::noRestartText(ref.noRestart));
  }
  row.rollCommand = pending.mode.rollCommand;
  if (pending.hold.state == HoldState::Held) {
    row.heldUntil = base::formatRfc3339(pending.hold.until);
    row.heldFor = pending.hold.waitingFor;
  }
  if (pending.window.state == WindowState::Held && pending.window.nextOpening)
    row.heldByWindowUntil = base::formatRfc3339(*pending.window.nextOpening);
  if (pending.hold.lastRollout) row.lastRollout = base::formatRfc3339(*pending.hold.lastRollout);
  if (pending.queue.state == QueueState::Queued)
    row.queuedAhead = static_cast<std::int64_t>(pending.queue.ahead);

  row.firstRollout = explanation.firstRollout.verdict;
  if (explanation.roll && explanation.roll->strategy == core::UpdateStrategy::OnDelete)
    row.roll = explanation.roll;
  return row;
}

WorkloadStatus unreadableStatus(core::WorkloadKind kind, const std::string& namespace_, const std::string& name,
                                const std::string& reason) {
  WorkloadStatus row;
  row.kind = kind;
  row.namespace_ = namespace_;
  row.name = name;
  row.pending = PendingState::Unknown;
  row.pendingReason = reason;
  return row;
}

void sortByAttention(std::vector<WorkloadStatus>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const WorkloadStatus& a, const WorkloadStatus& b) {
    // By the kind's name, as the table shows it.
    return std::make_tuple(attentionGroup(a), a.namespace_, std::string_view(core::workloadKindName(a.kind)),
                           a.name) < std::make_tuple(attentionGroup(b), b.namespace_,
                                                     std::string_view(core::workloadKindName(b.kind)), b.name);
  });
}

bool pendingOrUnknown(const WorkloadStatus& row) { return row.pending != PendingState::UpToDate; }

ordered_json statusDocument(const std::vector<WorkloadStatus>& rows) {
  ordered_json items = ordered_json::array();
  for (const WorkloadStatus& row : rows) {
    ordered_json pending = {{"status", pendingStateName(row.pending)}, {"changes", row.pendingChanges}};
    if (row.heldUntil) pending["heldUntil"] = *row.heldUntil;
    if (row.heldFor) pending["heldFor"] = *row.heldFor;
    if (row.rollCommand) {
      pending["manual"] = true;
      pending["rollCommand"] = *row.rollCommand;
    }
    if (row.heldByWindowUntil) pending["heldByWindowUntil"] = *row.heldByWindowUntil;
    if (row.queuedAhead) pending["queuedAhead"] = *row.queuedAhead;
    if (!row.pendingReason.empty()) pending["reason"] = row.pendingReason;
    if (!row.noRestart.empty()) pending["noRestart"] = row.noRestart;
    ordered_json roll = nullptr;
    if (row.roll) roll = {{"state", rollStateName(row.roll->state)}, {"reason", row.roll->reason}};
    if (row.roll && row.roll->blockedBy) roll["blockedBy"] = *row.roll->blockedBy;
    items.push_back(
        {{"workload",
          {{"kind", core::workloadKindName(row.kind)}, {"namespace", row.namespace_}, {"name", row.name}}},
         {"pods", {{"desired", row.desired}, {"ready", row.ready}, {"current", row.current}}},
         {"restarts", row.restarts},
         {"pending", std::move(pending)},
         {"firstRollout", core::firstRolloutVerdictName(row.firstRollout)},
         {"lastRollout", row.lastRollout ? ordered_json(*row.lastRollout) : ordered_json(nullptr)},
         {"roll", std::move(roll)}});
    if (!row.managedBy.empty()) items.back()["managedBy"] = row.managedBy;
  }
  return {
      {"apiVersion", "restarter.stackable.tech/v1alpha1"}, {"kind", "WorkloadStatusList"}, {"items", items}};
}

std::string renderStatusTable(const std::vector<WorkloadStatus>& rows, bool allNamespaces, bool wide,
                              const std::string& scope) {
  if (rows.empty()) return "No labeled workloads found " + scope + ".\n";
  std::vector<std::string> header = {"WORKLOAD", "READY",         "CURRENT", "RESTARTS",
                                     "PENDING",  "FIRST-ROLLOUT", "ROLL"};
  if (allNamespaces) header.insert(header.begin(), "NAMESPACE");
  if (wide) {
    header.push_back("LAST-ROLLOUT");
    header.push_back("CHANGES");
    header.push_back("MANAGED-BY");
  }
  std::vector<std::vector<std::string>> table;
  for (const WorkloadStatus& row : rows) {
    std::string kind = core::workloadKindName(row.kind);
    std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return std::tolower(c); });
    std::vector<std::string> cells = {kind + "/" + row.name,
                                      std::to_string(row.ready) + "/" + std::to_string(row.desired),
                                      std::to_string(row.current) + "/" + std::to_string(row.desired),
                                      std::to_string(row.restarts),
                                      pendingText(row),
                                      core::firstRolloutVerdictName(row.firstRollout),
                                      rollText(row)};
    if (allNamespaces) cells.insert(cells.begin(), row.namespace_);
    if (wide) {
      cells.push_back(row.lastRollout ? *row.lastRollout : "-");
      cells.push_back(changesText(row));
      cells.push_back(row.managedBy.empty() ? "-" : row.managedBy);
    }
    table.push_back(std::move(cells));
  }
  std::vector<std::size_t> widths(header.size());
  for (std::size_t i = 0; i < header.size(); ++i) widths[i] = header[i].size();
  for (const auto& cells : table) {
    for (std::size_t i = 0; i < cells.size(); ++i) widths[i] = std::max(widths[i], cells[i].size());
  }
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      text += i + 1 == cells.size() ? cells[i] : padCell(cells[i], widths[i]) + "   ";
    }
    out << text << "\n";
  };
  line(header);
  for (const auto& cells : table) line(cells);
  return out.str();
}

std::string statusSelector(const core::SelectionOptions& selection, const std::string& more) {
  std::string selector = selection.reloaderAnnotations ? "" : std::string(core::kEnabledSelector);
  if (!more.empty()) selector += (selector.empty() ? "" : ",") + more;
  return selector;
}

core::Result<std::vector<WorkloadStatus>> readStatusRows(kube::Client& client, const std::string& namespace_,
                                                         const std::string& labelSelector,
                                                         const JudgementOptions& judgement,
                                                         const core::DigestKey* digestKey) {
  const std::pair<core::WorkloadKind, kube::ResourceRef> kinds[] = {
      {core::WorkloadKind::StatefulSet, kube::resources::statefulSets()},
      {core::WorkloadKind::Deployment, kube::resources::deployments()},
      {core::WorkloadKind::DaemonSet, kube::resources::daemonSets()},
      {core::WorkloadKind::Rollout, kube::resources::rollouts()}};
  std::vector<WorkloadStatus> rows;
  // Every listed workload first: the queued ones among them are the rollout queue each row's
  // place is counted in (--max-concurrent-rollouts).
  std::vector<std::pair<core::WorkloadKind, json>> listed;
  for (const auto& [kind, resource] : kinds) {
    // Argo Rollouts' Rollouts where their CRD is installed; nothing, and nothing said, elsewhere.
    if (core::managedKind(kind).crd) {
      auto served = kube::resourceServed(client, resource);
      if (!served) return std::move(served).error();
      if (!*served) continue;
    }
    kube::ListOptions list;
    list.labelSelector = labelSelector;
    auto workloads = client.list(resource, namespace_, list);
    // A CRD deleted since discovery, or Rollouts the caller may not list: the fleet without them.
    if (!workloads && core::managedKind(kind).crd &&
        (workloads.error().kind == core::ErrorKind::NotFound ||
         workloads.error().kind == core::ErrorKind::Forbidden))
      continue;
    if (!workloads) {
      return core::makeError(workloads.error().kind,
                             "listing " + resource.plural + ": " + workloads.error().describe());
    }
    for (json& workload : workloads->items) {
      if (core::workloadManagement(workload, judgement.selection).by == core::ManagedBy::None) continue;
      listed.emplace_back(kind, std::move(workload));
    }
  }
  std::vector<core::QueuedRollout> queue;
  for (const auto& [kind, workload] : listed) {
    if (auto queued = queuedRolloutOf(workload, kind)) queue.push_back(std::move(*queued));
  }
  for (const auto& [kind, workload] : listed) {
    const std::string ns = core::metadataString(workload, "namespace");
    const std::string name = core::metadataString(workload, "name");
    auto input = readJudgedInput(client, kind, ns, name, judgement, digestKey, false);
    if (!input) {
      if (input.error().kind == core::ErrorKind::NotFound) continue;  // deleted since the list
      rows.push_back(unreadableStatus(kind, ns, name, input.error().describe()));
      continue;
    }
    input->rolloutQueue = queue;
    input->rolloutQueueScope = namespace_.empty() ? "all namespaces" : "namespace " + namespace_;
    rows.push_back(statusFromExplanation(explain(*input), input->workload));
  }
  return rows;
}

}  // namespace restarter::inspect
