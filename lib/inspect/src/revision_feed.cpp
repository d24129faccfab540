// The revisions explain-restart --watch reports (see explain.hpp, RevisionFeed).
#include <stop_token>

#include "restarter/cache/list_watch.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/roll_input.hpp"
#include "restarter/inspect/explain.hpp"

namespace restarter::inspect {

RevisionFeed::RevisionFeed(const ExplainInput& start)
    : kind_(start.kind),
      uid_(core::metadataString(start.workload, "uid")),
      resource_(core::revisionsInReplicaSets(start.kind) ? kube::resources::replicaSets()
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
  NewRevision out{*revision, std::move(cause)};
  known_[revision->name] = std::move(*revision);
  return out;
}

namespace {

// Hands every listed or added/modified revision object to the feed; stops the step on a failed list.
class RevisionSink : public cache::ListWatchSink {
 public:
  RevisionSink(RevisionFeed& feed, const std::function<void(const RevisionFeed::NewRevision&)>& onRevision,
               const std::function<void(const core::Error&)>& onWatchError, std::stop_source& stop)
      : feed_(feed), onRevision_(onRevision), onWatchError_(onWatchError), stop_(stop) {}

  std::size_t stage(std::vector<nlohmann::json>&& page) override {
    for (const nlohmann::json& item : page) tell(item);
    return 0;
  }
  void commitList(const std::string&, std::size_t) override {}
  void discardStaged() override {}
  void apply(kube::WatchEvent&& event) override {
    if (event.type == kube::WatchEvent::Type::Added || event.type == kube::WatchEvent::Type::Modified)
      tell(event.object);
  }
  void report(const core::Error& error, bool listing) override {
    last = WatchStopped{error, listing};
    if (listing) {
      stop_.request_stop();
    } else if (error.kind != core::ErrorKind::Gone) {
      onWatchError_(error);
    }
  }

  WatchStopped last;

 private:
  void tell(const nlohmann::json& object) {
    if (auto added = feed_.add(object)) onRevision_(*added);
  }

  RevisionFeed& feed_;
  const std::function<void(const RevisionFeed::NewRevision&)>& onRevision_;
  const std::function<void(const core::Error&)>& onWatchError_;
  std::stop_source& stop_;
};

}  // namespace

WatchStopped watchRevisions(kube::Client& client, const ExplainInput& start, const std::string& namespace_,
                            base::Clock& clock,
                            const std::function<void(const RevisionFeed::NewRevision&)>& onRevision,
                            const std::function<void(const core::Error&)>& onWatchError) {
  RevisionFeed feed(start);
  std::stop_source stop;
  RevisionSink sink(feed, onRevision, onWatchError, stop);
  cache::ListWatchOptions options;
  options.resource = feed.resource();
  options.namespace_ = namespace_;
  options.labelSelector = feed.labelSelector();
  options.pageSize = 0;  // one list: revisions are few
  options.maxFailures = kMaxWatchFailures;
  cache::ListWatch step(client, std::move(options), sink, clock);
  while (step.step(stop.get_token())) {
  }
  return sink.last;
}

}  // namespace restarter::inspect
