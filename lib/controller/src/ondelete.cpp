#include "restarter/controller/ondelete.hpp"

#include <algorithm>

#include "restarter/controller/events.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/roll.hpp"
#include "restarter/core/roll_input.hpp"

namespace restarter::controller {

using nlohmann::json;

namespace {

kube::ResourceRef controllerRevisions() {
  return kube::ResourceRef{"apps", "v1", "controllerrevisions", "ControllerRevision", true};
}

}  // namespace

OnDeleteRoller::OnDeleteRoller(WorkloadResource kind, WorkloadStoreFor workloads, ReconcileContext& context,
                               Evictor& evictor, std::chrono::seconds readyTimeout)
    : kind_(std::move(kind)),
      name_("ondelete-" + kind_.name),
      workloads_(std::move(workloads)),
      context_(context),
      evictor_(evictor),
      readyTimeout_(readyTimeout) {}

void OnDeleteRoller::setOutdated(const std::string& key, std::size_t count) {
  std::lock_guard lock(mutex_);
  if (count == 0) {
    outdated_.erase(key);
  } else {
    outdated_[key] = count;
  }
  double sum = 0;
  for (const auto& [_, n] : outdated_) sum += static_cast<double>(n);
  context_.metrics.outdatedPods.with({kind_.name}).set(sum);
}

core::Result<std::string> OnDeleteRoller::daemonSetRevision(const std::string& ns, const std::string& selector,
                                                            const std::string& uid) {
  kube::ListOptions options;
  options.labelSelector = selector;
  auto revisions = context_.client.list(controllerRevisions(), ns, options);
  if (!revisions) return std::move(revisions).error();
  return core::daemonSetRevisionHash(revisions->items, uid);
}

// What the read step found of one workload restarter rolls.
struct OnDeleteRoller::Observed {
  std::string key;  // "<namespace>/<name>"
  json workload;
  std::string uid;
  std::string name;
  core::RollWorkload input;
  std::vector<core::RollPod> pods;                // the pods it controls
  std::map<std::string, json> podObjects;         // the same, by name: evicted, named in Events
  std::map<std::string, std::string> revisionOf;  // pod name -> its revision

  // What evicting `podName` is for: the revision change, as log fields and in the Event.
  struct Cause {
    std::string text;    // "the roll of StatefulSet web (revision web-old -> web-new)"
    obs::Fields fields;  // kind, workload, pod, revision
  };
  Cause causeOf(const WorkloadResource& kind, const std::string& podName) const {
    const auto it = revisionOf.find(podName);
    const std::string change =
        (it == revisionOf.end() ? std::string() : it->second) + " -> " + input.updateRevision;
    return Cause{"the roll of " + kind.resource.kind + " " + name + " (revision " + change + ")",
                 {{"kind", kind.name}, {"workload", key}, {"pod", podName}, {"revision", change}}};
  }
};

RollStep nextRollStep(core::RollDecision decision, core::TimePoint now, bool dryRun) {
  using State = core::RollDecision::State;
  RollStep step;
  if (decision.state == State::Paused) {
    step.kind = RollStep::Kind::Pause;
    step.after = kRollPoll;
  } else if (decision.state != State::Rolling) {
    step.kind = RollStep::Kind::AwaitChange;
  } else if (!decision.evict) {
    step.kind = RollStep::Kind::Wait;
    step.after = kRollPoll;
    if (decision.recheckAt) {
      step.after =
          std::clamp(std::chrono::ceil<milliseconds>(*decision.recheckAt - now), milliseconds(1), kRollPoll);
    }
  } else {
    step.kind = dryRun ? RollStep::Kind::AnnounceDryRun : RollStep::Kind::Evict;
  }
  step.decision = std::move(decision);
  return step;
}

core::Result<Action> OnDeleteRoller::reconcile(const ObjectName& object, std::stop_token stop) {
  auto observed = read(object);
  if (!observed) return std::move(observed).error();
  if (!*observed) {
    setOutdated(object.key(), 0);
    return Action::awaitChange();
  }
  const Observed& seen = **observed;
  const auto now = std::chrono::time_point_cast<std::chrono::microseconds>(context_.clock.wallNow());
  const RollStep step =
      nextRollStep(core::decideRoll(seen.input, seen.pods, now, readyTimeout_), now, context_.dryRun);
  setOutdated(seen.key, step.decision.outdated.size());
  return act(seen, step, stop);
}

core::Result<std::optional<OnDeleteRoller::Observed>> OnDeleteRoller::read(const ObjectName& object) {
  const std::string& ns = object.namespace_;
  Observed seen;
  seen.key = object.key();
  const cache::PackedStore* store = workloads_(ns);
  if (store == nullptr)
    return core::makeError(core::ErrorKind::Internal, "no cache for namespace \"" + ns + "\"");
  auto cached = store->get(seen.key);
  if (!cached) return std::move(cached).error();
  if (*cached == nullptr) return std::optional<Observed>();
  seen.workload = (*cached)->unpack();
  // 1. Only OnDelete workloads are restarter's to roll; the others cost no request.
  if (core::stringAt(seen.workload, {"spec", "updateStrategy", "type"}) != "OnDelete") {
    return std::optional<Observed>();
  }
  seen.uid = core::metadataString(seen.workload, "uid");
  seen.name = core::metadataString(seen.workload, "name");

  // 2. Fresh from the API (see the header).
  std::string revision;
  if (kind_.coreKind == core::WorkloadKind::DaemonSet) {
    auto current = daemonSetRevision(ns, core::podSelector(seen.workload), seen.uid);
    if (!current) return std::move(current).error();
    revision = *current;
  }
  auto input = core::rollWorkloadFromJson(seen.workload, kind_.coreKind, revision);
  if (!input) return std::move(input).error();
  seen.input = std::move(*input);
  kube::ListOptions options;
  options.labelSelector = core::podSelector(seen.workload);
  auto listed = context_.client.list(kube::resources::pods(), ns, options);
  if (!listed) return std::move(listed).error();
  for (json& item : listed->items) {
    if (!core::controlledBy(item, seen.uid)) continue;
    auto pod = core::rollPodFromJson(item, kind_.coreKind);
    if (!pod) return std::move(pod).error().withContext("reading a pod of " + kind_.name + " " + seen.key);
    seen.revisionOf[pod->name] = pod->revision;
    seen.podObjects[pod->name] = std::move(item);
    seen.pods.push_back(std::move(*pod));
  }
  return std::optional<Observed>(std::move(seen));
}

core::Result<Action> OnDeleteRoller::act(const Observed& observed, const RollStep& step, std::stop_token stop) {
  switch (step.kind) {
    case RollStep::Kind::AwaitChange: return Action::awaitChange();
    case RollStep::Kind::Pause: announcePause(observed, step.decision); return Action::requeue(step.after);
    case RollStep::Kind::Wait:
      context_.logger.debug(
          "roll waiting", {{"kind", kind_.name}, {"workload", observed.key}, {"reason", step.decision.reason}});
      return Action::requeue(step.after);
    case RollStep::Kind::AnnounceDryRun: announceDryRun(observed, step.decision); return Action::awaitChange();
    case RollStep::Kind::Evict: return evict(observed, *step.decision.evict, stop);
  }
  return Action::awaitChange();
}

void OnDeleteRoller::announcePause(const Observed& observed, const core::RollDecision& decision) {
  if (!announced_.once(observed.key, "paused|" + observed.uid + "|" + observed.input.updateRevision + "|" +
                                         decision.blockingPod)) {
    return;
  }
  context_.logger.warn("roll paused", {{"kind", kind_.name},
                                       {"workload", observed.key},
                                       {"pod", decision.blockingPod},
                                       {"reason", decision.reason}});
  (void)recordEvent(context_, referenceTo(observed.workload, kind_.resource.apiVersion(), kind_.resource.kind),
                    "Warning", "RollPaused", "Roll", "Roll paused: " + decision.reason);
}

void OnDeleteRoller::announceDryRun(const Observed& observed, const core::RollDecision& decision) {
  // Every eviction the roll would make, in roll order, once each per update revision.
  for (const std::string& planned : decision.outdated) {
    const json& pod = observed.podObjects.at(planned);
    if (!announced_.once(core::metadataString(pod, "uid"), "dry-run|" + observed.input.updateRevision))
      continue;
    const Observed::Cause cause = observed.causeOf(kind_, planned);
    context_.logger.info("pod eviction planned (dry run, nothing written)", cause.fields);
    context_.metrics.rollEvictions.with({kind_.name, "dry_run"}).inc();
    (void)recordEvent(context_, referenceTo(pod, "v1", "Pod"), "Normal", "WouldEvict", "Evict",
                      "Would evict the pod (dry run) for " + cause.text);
  }
}

core::Result<Action> OnDeleteRoller::evict(const Observed& observed, const std::string& podName,
                                           std::stop_token stop) {
  const json& pod = observed.podObjects.at(podName);
  const Observed::Cause cause = observed.causeOf(kind_, podName);
  auto eviction = evictor_.evict(pod, cause.text, stop);
  if (!eviction) return std::move(eviction).error();
  switch (eviction->outcome) {
    case Eviction::Outcome::Evicted:
      context_.metrics.rollEvictions.with({kind_.name, "evicted"}).inc();
      context_.logger.info("pod evicted for the roll", cause.fields);
      (void)recordEvent(context_, referenceTo(pod, "v1", "Pod"), "Normal", "Evicted", "Evict",
                        "Evicted the pod for " + cause.text);
      return Action::requeue(kRollPoll);
    case Eviction::Outcome::Gone:
      context_.metrics.rollEvictions.with({kind_.name, "gone"}).inc();
      return Action::requeue(milliseconds(1000));
    case Eviction::Outcome::Refused:
      context_.metrics.rollEvictions.with({kind_.name, "refused"}).inc();
      return Action::requeue(eviction->retryAfter);
  }
  return Action::requeue(kRollPoll);
}

}  // namespace restarter::controller
