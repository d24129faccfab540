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

core::Result<Action> OnDeleteRoller::reconcile(const ObjectName& object, std::stop_token stop) {
  const std::string& ns = object.namespace_;
  const std::string key = object.key();
  const cache::PackedStore* store = workloads_(ns);
  if (store == nullptr)
    return core::makeError(core::ErrorKind::Internal, "no cache for namespace \"" + ns + "\"");
  auto cached = store->get(key);
  if (!cached) return std::move(cached).error();
  if (*cached == nullptr) {
    setOutdated(key, 0);
    return Action::awaitChange();
  }
  const json workload = (*cached)->unpack();
  // 1. Only OnDelete workloads are restarter's to roll; the others cost no request.
  if (core::stringAt(workload, {"spec", "updateStrategy", "type"}) != "OnDelete") {
    setOutdated(key, 0);
    return Action::awaitChange();
  }
  const std::string uid = core::metadataString(workload, "uid");
  const std::string name = core::metadataString(workload, "name");

  // 2. Fresh from the API (see the header).
  std::string revision;
  if (kind_.coreKind == core::WorkloadKind::DaemonSet) {
    auto current = daemonSetRevision(ns, core::podSelector(workload), uid);
    if (!current) return std::move(current).error();
    revision = *current;
  }
  auto input = core::rollWorkloadFromJson(workload, kind_.coreKind, revision);
  if (!input) return std::move(input).error();
  kube::ListOptions options;
  options.labelSelector = core::podSelector(workload);
  auto listed = context_.client.list(kube::resources::pods(), ns, options);
  if (!listed) return std::move(listed).error();
  std::vector<core::RollPod> pods;
  std::map<std::string, const json*> byName;
  for (const json& item : listed->items) {
    if (!core::controlledBy(item, uid)) continue;
    auto pod = core::rollPodFromJson(item, kind_.coreKind);
    if (!pod) return std::move(pod).error().withContext("reading a pod of " + kind_.name + " " + key);
    byName[pod->name] = &item;
    pods.push_back(std::move(*pod));
  }
  std::map<std::string, std::string> revisionOf;
  for (const core::RollPod& pod : pods) revisionOf[pod.name] = pod.revision;

  // 3.
  const auto now = std::chrono::time_point_cast<std::chrono::microseconds>(context_.clock.wallNow());
  const core::RollDecision decision = core::decideRoll(*input, std::move(pods), now, readyTimeout_);
  setOutdated(key, decision.outdated.size());
  const obs::Fields where{{"kind", kind_.name}, {"workload", key}};

  // 4.
  using State = core::RollDecision::State;
  if (decision.state == State::Paused) {
    if (announced_.once(key, "paused|" + uid + "|" + input->updateRevision + "|" + decision.blockingPod)) {
      context_.logger.warn("roll paused", {{"kind", kind_.name},
                                           {"workload", key},
                                           {"pod", decision.blockingPod},
                                           {"reason", decision.reason}});
      (void)recordEvent(context_, referenceTo(workload, kind_.resource.apiVersion(), kind_.resource.kind),
                        "Warning", "RollPaused", "Roll", "Roll paused: " + decision.reason);
    }
    return Action::requeue(kRollPoll);
  }
  if (decision.state != State::Rolling) return Action::awaitChange();
  if (!decision.evict) {
    milliseconds wait = kRollPoll;
    if (decision.recheckAt) {
      wait = std::clamp(std::chrono::ceil<milliseconds>(*decision.recheckAt - now), milliseconds(1), kRollPoll);
    }
    context_.logger.debug("roll waiting",
                          {{"kind", kind_.name}, {"workload", key}, {"reason", decision.reason}});
    return Action::requeue(wait);
  }

  // What an eviction of `podName` is for: the revision change, as a log field and in the Event.
  auto changeOf = [&](const std::string& podName) {
    return revisionOf[podName] + " -> " + input->updateRevision;
  };
  auto causeOf = [&](const std::string& podName) {
    return "the roll of " + kind_.resource.kind + " " + name + " (revision " + changeOf(podName) + ")";
  };
  auto fieldsOf = [&](const std::string& podName) {
    obs::Fields fields = where;
    fields.push_back({"pod", podName});
    fields.push_back({"revision", changeOf(podName)});
    return fields;
  };
  if (context_.dryRun) {
    // Nothing is evicted, so the roll would never get past its first pod: announce every eviction
    // it would make, in roll order, once each per update revision.
    for (const std::string& planned : decision.outdated) {
      const json& pod = *byName.at(planned);
      if (!announced_.once(core::metadataString(pod, "uid"), "dry-run|" + input->updateRevision)) continue;
      context_.logger.info("pod eviction planned (dry run, nothing written)", fieldsOf(planned));
      context_.metrics.rollEvictions.with({kind_.name, "dry_run"}).inc();
      (void)recordEvent(context_, referenceTo(pod, "v1", "Pod"), "Normal", "WouldEvict", "Evict",
                        "Would evict the pod (dry run) for " + causeOf(planned));
    }
    return Action::awaitChange();
  }
  const std::string& podName = *decision.evict;
  const json& pod = *byName.at(podName);
  const std::string cause = causeOf(podName);
  const obs::Fields fields = fieldsOf(podName);
  auto eviction = evictor_.evict(pod, cause, stop);
  if (!eviction) return std::move(eviction).error();
  switch (eviction->outcome) {
    case Eviction::Outcome::Evicted:
      context_.metrics.rollEvictions.with({kind_.name, "evicted"}).inc();
      context_.logger.info("pod evicted for the roll", fields);
      (void)recordEvent(context_, referenceTo(pod, "v1", "Pod"), "Normal", "Evicted", "Evict",
                        "Evicted the pod for " + cause);
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
