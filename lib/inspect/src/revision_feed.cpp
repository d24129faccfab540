// The revisions explain-restart --watch reports (see explain.hpp, RevisionFeed).
#include "restarter/core/json_access.hpp"
#include "restarter/core/roll_input.hpp"
#include "restarter/inspect/explain.hpp"

namespace restarter::inspect {

RevisionFeed::RevisionFeed(const ExplainInput& start)
    : kind_(start.kind),
      uid_(core::metadataString(start.workload, "uid")),
      resource_(start.kind == core::WorkloadKind::Deployment ? kube::resources::replicaSets()
                                                             : kube::resources::controllerRevisions()),
      selector_(core::podSelector(start.workload)) {
  for (const core::Revision& revision : start.revisions) known_[revision.name] = revision;
}

std::optional<RevisionFeed::NewRevision> RevisionFeed::add(const nlohmann::json& object) {
  std::optional<core::Revision> revision = revisionFromObject(object, kind_, uid_);
  if (!revision) return std::nullopt;
  const auto seen = known_.find(revision->name);
  if (seen != known_.end() && seen->second.number == revision->number) return std::nullopt;
  const core::Revision* previous = nullptr;
  for (const auto& [name, other] : known_) {
    if (other.number < revision->number && (previous == nullptr || other.number > previous->number)) {
      previous = &other;
    }
  }
  core::RevisionCause cause;
  if (previous != nullptr) {
    cause = core::revisionCause(previous->podTemplate, revision->podTemplate);
  } else {
    cause.created = true;
  }
  NewRevision out{*revision, causesDocument(cause)};
  known_[revision->name] = std::move(*revision);
  return out;
}

}  // namespace restarter::inspect
