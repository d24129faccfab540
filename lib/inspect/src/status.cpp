// Condensing explanation documents into status rows, sorting and rendering them (see status.hpp).
#include "restarter/inspect/status.hpp"

#include "restarter/kube/discovery.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <tuple>

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
std::string text(const Json& value) {
  return value.is_string() ? value.template get<std::string>() : "";
}

template <typename Json>
std::int64_t integer(const Json& value, std::int64_t fallback = 0) {
  return value.is_number_integer() ? value.template get<std::int64_t>() : fallback;
}

// "configmap/app: u/1 -> u/2 (updated)": the same words explain-restart prints for a change.
std::string changeLine(const ordered_json& change) {
  const auto& object = member(change, "object");
  auto version = [](const ordered_json& value) {
    return value.is_string() ? value.get<std::string>() : "none";
  };
  return text(member(object, "kind")) + "/" + text(member(object, "name")) + ": " +
         version(member(change, "before")) + " -> " + version(member(change, "after")) + " (" +
         text(member(change, "change")) + ")";
}

int attentionGroup(const WorkloadStatus& row) {
  if (row.pending == "unknown") return 0;
  if (row.pending == "restart-due" || row.pending == "refused-too-large" || row.roll == "paused" ||
      row.roll == "unknown" || !row.rollBlockedBy.empty())
    return 1;
  if (row.firstRollout == "extra-restart") return 2;
  if (row.ready < row.desired || row.current < row.desired) return 3;
  return 4;
}

std::string pendingText(const WorkloadStatus& row) {
  if (row.pending == "restart-due") {
    if (row.rollCommand) return "manual: pending; run `" + *row.rollCommand + "`";
    if (row.heldByWindowUntil) return "held by the rollout window until " + *row.heldByWindowUntil;
    if (row.heldFor) return "held: waiting for the previous rollout (" + *row.heldFor + ")";
    if (row.queuedAhead) return core::describeQueued(static_cast<std::size_t>(*row.queuedAhead));
    return row.heldUntil ? "held until " + *row.heldUntil : "restart due";
  }
  if (row.pending == "up-to-date") return row.noRestart.empty() ? "no" : "no (held back)";
  if (row.pending == "refused-too-large") return "refused: annotations too large";
  return "unknown";
}

// The ROLL cell: the state, and the budget a rolling eviction waits for ("rolling (blocked by
// pdb/db-budget)", as kubectl abbreviates the kind).
std::string rollText(const WorkloadStatus& row) {
  if (row.roll.empty()) return "-";
  if (row.rollBlockedBy.empty()) return row.roll;
  const std::string_view prefix = "PodDisruptionBudget/";
  std::string budget = row.rollBlockedBy;
  if (budget.rfind(prefix, 0) == 0) budget = "pdb/" + budget.substr(prefix.size());
  return row.roll + " (blocked by " + budget + ")";
}

}  // namespace

WorkloadStatus statusFromExplanation(const ordered_json& explanation, const json& workload) {
  WorkloadStatus row;
  const auto& identity = member(explanation, "workload");
  row.kind = text(member(identity, "kind"));
  row.namespace_ = text(member(identity, "namespace"));
  row.name = text(member(identity, "name"));
  row.managedBy = text(member(member(explanation, "managedBy"), "reason"));

  const json& spec = member(workload, "spec");
  const json& status = member(workload, "status");
  if (row.kind == "DaemonSet") {
    row.desired = integer(member(status, "desiredNumberScheduled"));
    row.ready = integer(member(status, "numberReady"));
  } else {
    row.desired = integer(member(spec, "replicas"), 1);  // the API's default when absent
    row.ready = integer(member(status, "readyReplicas"));
  }

  for (const auto& revision : member(explanation, "revisions")) {
    if (member(revision, "current").is_boolean() && member(revision, "current").template get<bool>()) {
      row.current = integer(member(revision, "pods"));
    }
    const auto& causes = member(revision, "causes");
    if (causes.is_array() && std::any_of(causes.begin(), causes.end(), [](const ordered_json& cause) {
          return text(member(cause, "type")) == "annotation";
        })) {
      ++row.restarts;
    }
  }

  const auto& pending = member(explanation, "pending");
  row.pending = text(member(pending, "status"));
  if (row.pending.empty()) row.pending = "unknown";
  row.pendingReason = text(member(pending, "reason"));
  for (const auto& change : member(pending, "changes")) row.pendingChanges.push_back(changeLine(change));
  for (const auto& ref : member(pending, "references")) {
    if (!member(ref, "noRestart").is_string()) continue;
    row.noRestart.push_back(text(member(ref, "kind")) + "/" + text(member(ref, "name")) + ": " +
                            text(member(ref, "noRestart")));
  }
  if (const auto& command = member(member(pending, "rolloutMode"), "rollCommand"); command.is_string())
    row.rollCommand = text(command);
  const auto& hold = member(pending, "rolloutHold");
  if (text(member(hold, "status")) == "held") {
    row.heldUntil = text(member(hold, "until"));
    if (member(hold, "waitingFor").is_string()) row.heldFor = text(member(hold, "waitingFor"));
  }
  const auto& window = member(pending, "rolloutWindow");
  if (text(member(window, "status")) == "held") row.heldByWindowUntil = text(member(window, "nextOpening"));
  if (member(hold, "lastRollout").is_string()) row.lastRollout = text(member(hold, "lastRollout"));
  const auto& queue = member(pending, "rolloutQueue");
  if (text(member(queue, "status")) == "queued" && member(queue, "ahead").is_number_integer())
    row.queuedAhead = member(queue, "ahead").get<std::int64_t>();

  row.firstRollout = text(member(member(explanation, "firstRollout"), "verdict"));
  if (row.firstRollout.empty()) row.firstRollout = "unknown";

  const auto& roll = member(explanation, "roll");
  if (text(member(roll, "updateStrategy")) == "OnDelete") {
    row.roll = text(member(roll, "state"));
    if (row.roll.empty()) row.roll = "unknown";
    row.rollReason = text(member(roll, "reason"));
    row.rollBlockedBy = text(member(roll, "blockedBy"));
  }
  return row;
}

WorkloadStatus unreadableStatus(const std::string& kind, const std::string& namespace_, const std::string& name,
                                const std::string& reason) {
  WorkloadStatus row;
  row.kind = kind;
  row.namespace_ = namespace_;
  row.name = name;
  row.pending = "unknown";
  row.pendingReason = reason;
  row.firstRollout = "unknown";
  return row;
}

void sortByAttention(std::vector<WorkloadStatus>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const WorkloadStatus& a, const WorkloadStatus& b) {
    return std::make_tuple(attentionGroup(a), a.namespace_, a.kind, a.name) <
           std::make_tuple(attentionGroup(b), b.namespace_, b.kind, b.name);
  });
}

bool pendingOrUnknown(const WorkloadStatus& row) { return row.pending != "up-to-date"; }

ordered_json statusDocument(const std::vector<WorkloadStatus>& rows) {
  ordered_json items = ordered_json::array();
  for (const WorkloadStatus& row : rows) {
    ordered_json pending = {{"status", row.pending}, {"changes", row.pendingChanges}};
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
    if (!row.roll.empty()) roll = {{"state", row.roll}, {"reason", row.rollReason}};
    if (!row.rollBlockedBy.empty()) roll["blockedBy"] = row.rollBlockedBy;
    items.push_back({{"workload", {{"kind", row.kind}, {"namespace", row.namespace_}, {"name", row.name}}},
                     {"pods", {{"desired", row.desired}, {"ready", row.ready}, {"current", row.current}}},
                     {"restarts", row.restarts},
                     {"pending", std::move(pending)},
                     {"firstRollout", row.firstRollout},
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
    std::string kind = row.kind;
    std::transform(kind.begin(), kind.end(), kind.begin(), [](unsigned char c) { return std::tolower(c); });
    std::vector<std::string> cells = {kind + "/" + row.name,
                                      std::to_string(row.ready) + "/" + std::to_string(row.desired),
                                      std::to_string(row.current) + "/" + std::to_string(row.desired),
                                      std::to_string(row.restarts),
                                      pendingText(row),
                                      row.firstRollout,
                                      rollText(row)};
    if (allNamespaces) cells.insert(cells.begin(), row.namespace_);
    if (wide) {
      cells.push_back(row.lastRollout ? *row.lastRollout : "-");
      std::string changes;
      for (const std::string& change : row.pendingChanges) changes += (changes.empty() ? "" : "; ") + change;
      if ((row.pending == "unknown" || row.pending == "refused-too-large") && !row.pendingReason.empty())
        changes = row.pendingReason;
      for (const std::string& note : row.noRestart) changes += (changes.empty() ? "" : "; ") + note;
      if ((row.roll == "paused" || row.roll == "unknown" || !row.rollBlockedBy.empty()) &&
          !row.rollReason.empty()) {
        changes += (changes.empty() ? "" : "; ") + ("roll " + row.roll + ": " + row.rollReason);
      }
      cells.push_back(changes.empty() ? "-" : changes);
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
      rows.push_back(unreadableStatus(core::workloadKindName(kind), ns, name, input.error().describe()));
      continue;
    }
    input->rolloutQueue = queue;
    input->rolloutQueueScope = namespace_.empty() ? "all namespaces" : "namespace " + namespace_;
    rows.push_back(statusFromExplanation(explanationDocument(*input), input->workload));
  }
  return rows;
}

}  // namespace restarter::inspect
