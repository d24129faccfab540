#include "restarter/controller/workload.hpp"

#include "restarter/base/rfc3339.hpp"
#include "restarter/controller/events.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

#include "restarter/core/annotation_keys.hpp"
#include "restarter/core/baseline.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/reloader.hpp"
#include "restarter/core/rollout.hpp"
#include "restarter/core/rollout_source.hpp"

namespace restarter::controller {

using nlohmann::json;

json applyBody(const WorkloadResource& kind, const json& workload, const AppliedAnnotations& sent) {
  return core::applyBody(kind.resource.apiVersion(), kind.resource.kind, workload, sent);
}

namespace {

using core::baselineToSend;
using core::metadataAnnotation;

// The topics of WorkloadReconciler's announcement memory (workload.hpp).
constexpr const char* kDryRunTopic = "dry-run";
constexpr const char* kHeldTopic = "held";
constexpr const char* kTooLargeTopic = "too-large";
constexpr const char* kMetadataOnlyTopic = "metadata-only";
constexpr const char* kTemplateSourceTopic = "template-source";
constexpr const char* kQueuedTopic = "queued";
constexpr const char* kPriorityTopic = "priority";

}  // namespace

std::string describeChanges(const std::vector<core::AnnotationChange>& changes) {
  std::string text;
  for (const core::AnnotationChange& change : changes) {
    if (!text.empty()) text += "; ";
    text += change.describe();
  }
  return text;
}

WorkloadReconciler::WorkloadReconciler(WorkloadResource kind, CachesFor caches, ReconcileContext& context)
    : kind_(std::move(kind)), caches_(std::move(caches)), context_(context) {}

void WorkloadReconciler::forget(const std::string& key) {
  {
    std::lock_guard lock(mutex_);
    lastWrites_.erase(key);
    queuedSinceWritten_.erase(key);
  }
  setManualPending(key, false);
  releaseWindowHold(key);
  announced_.forget(key);
}

core::Result<Action> WorkloadReconciler::reconcile(const ObjectName& object, std::stop_token stop) {
  const std::string& ns = object.namespace_;
  const std::string key = object.key();
  auto caches = caches_(ns);
  if (!caches || caches->workloads == nullptr || caches->configMaps == nullptr || caches->secrets == nullptr) {
    return core::makeError(core::ErrorKind::Internal, "no cache for namespace \"" + ns + "\"");
  }
  auto cached = managedWorkload(*caches->workloads, key);
  if (!cached) return std::move(cached).error();
  if (!*cached) {
    forget(key);
    if (context_.rolloutSlots != nullptr)
      context_.rolloutSlots->forget(QueueKey{this, object},
                                    std::chrono::floor<std::chrono::microseconds>(context_.clock.wallNow()));
    return Action::awaitChange();
  }
  json& workload = (*cached)->object;
  // An Argo Rollout whose pod template is its workloadRef's, or that has none: nothing of it is
  // written (its template must stay empty), said once per generation.
  if (const core::PodTemplateSource source = core::podTemplateSourceOf(workload, kind_.coreKind);
      source.source != core::TemplateSource::Own) {
    return noteTemplateSource(workload, key, source, caches->deployments);
  }
  overlayLastWrite(key, workload);
  noteRolloutMode(workload, key);
  observeSlot(workload, key, object);
  // A queued workload that returns before the queue gate (nothing left to roll, dry-run, any gate
  // before it that holds it) leaves the queue, or it would stay ahead of the others without ever
  // taking a slot; it comes back with its queued-since when it asks again.
  bool queueGateReached = false;
  struct LeaveUnlessReached {
    RolloutSlots* slots;
    QueueKey key;
    const bool& reached;
    base::Clock& clock;
    ~LeaveUnlessReached() {
      if (slots != nullptr && !reached)
        slots->leave(key, std::chrono::floor<std::chrono::microseconds>(clock.wallNow()));
    }
  } leaveUnlessReached{context_.rolloutSlots, QueueKey{this, object}, queueGateReached, context_.clock};

  // After the overlay: which version a reference keeps depends on the template and content record
  // as we wrote them (core::decideTrackedValue).
  core::DesiredOptions desiredOptions;
  desiredOptions.podsRunning = true;
  desiredOptions.rollOnOptIn = context_.rollOnOptIn;
  desiredOptions.selection = context_.selection;
  auto desired =
      core::desiredAnnotations(workload,
                               cacheLookup(*caches->configMaps, *caches->secrets, ns, context_.digestKeyId,
                                           context_.otherDigest, caches->load, stop),
                               desiredOptions);
  if (!desired) return std::move(desired).error().withContext(kind_.name + " " + key);

  auto plan =
      core::planWrite(workload, *desired, core::WriteOptions{true, (*cached)->trim.omittedAnnotationsBytes});
  if (!plan) return std::move(plan).error().withContext(kind_.name + " " + key);
  if (plan->kind != core::WriteKind::Template) logMetadataOnly(key, *desired);
  if (plan->kind != core::WriteKind::Template) {
    std::lock_guard lock(mutex_);
    queuedSinceWritten_.erase(key);  // removed by the records' apply, or by the one below
  }
  if (plan->kind == core::WriteKind::None) {
    for (const char* topic : {kDryRunTopic, kHeldTopic, kTooLargeTopic, kQueuedTopic})
      announced_.forget(key, topic);
    setManualPending(key, false);
    releaseWindowHold(key);
    // Queued, then the change undone: the workload waits for nothing any more.
    if (!context_.dryRun && metadataAnnotation(workload, core::kQueuedSinceAnnotation))
      return writeQueuedSince(workload, key, std::nullopt, stop);
    return Action::awaitChange();
  }
  if (!plan->fits()) return refuseTooLarge(workload, key, *plan);
  announced_.forget(key, kTooLargeTopic);
  if (plan->kind == core::WriteKind::RecordOnly || plan->kind == core::WriteKind::ContentRecord)
    return applyRecords(workload, key, *desired, plan->kind, stop);

  if (context_.dryRun) {
    if (!announced_.once(key, kDryRunTopic, describeChanges(plan->changes))) return Action::awaitChange();
    if (core::Status s = announce(workload, key, plan->changes); !s) return std::move(s).error();
    return Action::awaitChange();
  }
  // The gates, in order (docs/behaviour.md): manual mode, the rollout window, the hold, then a
  // fleet-wide slot (--max-concurrent-rollouts).
  if (auto pending = manualGate(workload, key, *desired, plan->changes)) {
    releaseWindowHold(key);  // a manual workload is pending, not held by its window
    return *pending;
  }
  const core::TimePoint now = std::chrono::floor<std::chrono::microseconds>(context_.clock.wallNow());
  if (std::optional<Action> held = windowGate(workload, key, plan->changes, now)) return *held;
  const core::RolloutDecision gate = rolloutGate(workload, key, now);
  if (!gate.rollNow) return hold(workload, key, plan->changes, *core::lastRolloutOf(workload), gate, now);
  announced_.forget(key, kHeldTopic);
  queueGateReached = true;
  auto queued = queueGate(workload, key, object, plan->changes, now, stop);
  if (!queued) return std::move(queued).error();
  if (*queued) return **queued;
  return rollOut(workload, key, *desired, plan->changes, stop);
}

core::Result<std::optional<WorkloadReconciler::CachedWorkload>> WorkloadReconciler::managedWorkload(
    const cache::PackedStore& workloads, const std::string& key) const {
  auto cached = workloads.get(key);
  if (!cached) return std::move(cached).error();
  // With Reloader's annotations the cache holds every workload of the kind; one that is not opted
  // in is kept as a stub (slimWorkload) and never written.
  if (*cached == nullptr || (*cached)->trim.stub) return std::optional<CachedWorkload>();
  json workload = (*cached)->unpack();
  if (!workload.is_object()) {
    return core::makeError(core::ErrorKind::Internal,
                           "cached " + kind_.name + " " + key + " cannot be decoded");
  }
  if (context_.selection.reloaderAnnotations &&
      core::workloadManagement(workload, context_.selection).by == core::ManagedBy::None) {
    return std::optional<CachedWorkload>();
  }
  return std::optional<CachedWorkload>(CachedWorkload{std::move(workload), (*cached)->trim});
}

void WorkloadReconciler::overlayLastWrite(const std::string& key, json& workload) {
  const std::string uid = core::metadataString(workload, "uid");
  const std::string resourceVersion = core::metadataString(workload, "resourceVersion");
  std::lock_guard lock(mutex_);
  auto last = lastWrites_.find(key);
  if (last == lastWrites_.end()) return;
  if (last->second.uid != uid || last->second.resourceVersionBefore != resourceVersion) {
    lastWrites_.erase(last);  // the cache has moved past our write (or the workload was replaced)
    return;
  }
  // Our keys as written, the others as cached (the size check counts them all).
  json& annotations = workload["spec"]["template"]["metadata"]["annotations"];
  if (!annotations.is_object()) annotations = json::object();
  for (auto it = annotations.begin(); it != annotations.end();) {
    it = core::parseTemplateAnnotationKey(it.key()) ? annotations.erase(it) : std::next(it);
  }
  for (const auto& [k, v] : last->second.annotations) annotations[k] = v;
  // The interval counts from that write too, and the content record is the one written.
  json& stamped = workload["metadata"]["annotations"];
  if (!stamped.is_object()) stamped = json::object();
  if (!last->second.rolledAt.empty())
    stamped[std::string(core::kLastRolloutAnnotation)] = last->second.rolledAt;
  if (last->second.contentDigests.empty()) {
    stamped.erase(std::string(core::kContentDigestsAnnotation));
  } else {
    stamped[std::string(core::kContentDigestsAnnotation)] = last->second.contentDigests;
  }
  if (last->second.baseline) stamped[std::string(core::kBaselineAnnotation)] = *last->second.baseline;
  // No write of the rollout or the records sends it: each removed it.
  stamped.erase(std::string(core::kQueuedSinceAnnotation));
}

core::RolloutProgress WorkloadReconciler::progressOf(const json& workload, const std::string& key) {
  // While the cache does not show our last rollout (overlayLastWrite kept its record), the cached
  // status describes the rollout before it: ours has not even been observed.
  bool rolloutUnseen = false;
  {
    std::lock_guard lock(mutex_);
    const auto last = lastWrites_.find(key);
    rolloutUnseen = last != lastWrites_.end() && !last->second.rolledAt.empty();
  }
  return rolloutUnseen ? core::RolloutProgress{false, "the last rollout not yet in the cache"}
                       : core::rolloutProgressOf(workload, kind_.coreKind);
}

core::RolloutDecision WorkloadReconciler::rolloutGate(const json& workload, const std::string& key,
                                                      core::TimePoint now) {
  return core::decideRollout(core::lastRolloutOf(workload), now, context_.minRolloutInterval,
                             progressOf(workload, key));
}

void WorkloadReconciler::observeSlot(const json& workload, const std::string& key, const ObjectName& object) {
  RolloutSlots* slots = context_.rolloutSlots;
  if (slots == nullptr || !slots->limited()) return;
  const core::TimePoint now = std::chrono::floor<std::chrono::microseconds>(context_.clock.wallNow());
  slots->observe(QueueKey{this, object},
                 core::rolloutSlotUntil(core::lastRolloutOf(workload), now, context_.minRolloutInterval,
                                        progressOf(workload, key)),
                 now);
}

core::Result<std::optional<Action>> WorkloadReconciler::queueGate(
    const json& workload, const std::string& key, const ObjectName& object,
    const std::vector<core::AnnotationChange>& changes, core::TimePoint now, std::stop_token stop) {
  RolloutSlots* slots = context_.rolloutSlots;
  if (slots == nullptr || !slots->limited()) return std::optional<Action>();
  const core::RolloutPriority priority = core::rolloutPriorityOf(workload);
  if (priority.problem.empty()) {
    announced_.forget(key, kPriorityTopic);
  } else if (announced_.once(key, kPriorityTopic, priority.problem)) {
    const std::string note = "Invalid annotation " + std::string(core::kRolloutPriorityAnnotation) + ": " +
                             priority.problem + "; queued with priority 0";
    context_.logger.warn("invalid rollout priority", {{"kind", kind_.name}, {"workload", key}, {"why", note}});
    if (core::Status s =
            recordEvent(workload, "Warning", std::string(core::kInvalidRolloutPriorityReason), "Queue", note);
        !s) {
      context_.logger.warn("cannot record invalid-priority event",
                           {{"kind", kind_.name}, {"workload", key}, {"error", s.error().describe()}});
    }
  }
  std::optional<core::TimePoint> since = core::queuedSinceOf(workload);
  {
    std::lock_guard lock(mutex_);
    if (const auto written = queuedSinceWritten_.find(key); !since && written != queuedSinceWritten_.end())
      since = written->second;
  }
  const RolloutSlots::Admission admission = slots->request(
      QueueKey{this, object}, priority.value, since.value_or(now), now + context_.minRolloutInterval, now);
  if (admission.admitted) {
    announced_.forget(key, kQueuedTopic);
    return std::optional<Action>();
  }
  // Rechecked at the latest after kRolloutProgressRecheck: the wake-up when a slot frees is the
  // usual path (RolloutSlots), this only bounds a missed one and a slot freed by its upper bound.
  const Action lookAgain =
      Action::requeue(std::chrono::duration_cast<milliseconds>(core::kRolloutProgressRecheck));
  if (!since) {
    // First queued: recorded on the workload, so that a new leader keeps its place.
    {
      std::lock_guard lock(mutex_);
      queuedSinceWritten_[key] = now;
    }
    auto written = writeQueuedSince(workload, key, base::formatRfc3339(now), stop);
    if (!written) {
      std::lock_guard lock(mutex_);
      queuedSinceWritten_.erase(key);
      return std::move(written).error();
    }
    since = now;
  }
  if (!announced_.once(key, kQueuedTopic, base::formatRfc3339(*since))) return std::optional<Action>(lookAgain);
  const std::string described = describeChanges(changes);
  const std::string ahead = core::describeQueued(admission.ahead);
  context_.metrics.rolloutsQueued.with({kind_.name}).inc();
  context_.logger.info("rollout queued", {{"kind", kind_.name},
                                          {"workload", key},
                                          {"queue", ahead},
                                          {"inProgress", std::to_string(admission.inProgress)},
                                          {"maxConcurrentRollouts", std::to_string(slots->maxConcurrent())},
                                          {"priority", std::to_string(priority.value)},
                                          {"changes", described}});
  auto created = recordEvent(workload, "Normal", std::string(core::kRolloutQueuedReason), "Queue",
                             core::rolloutQueuedNote(admission.ahead, slots->maxConcurrent(), priority.value,
                                                     core::metadataString(workload, "namespace"), described));
  if (!created) {
    context_.logger.warn("cannot record rollout-queued event",
                         {{"kind", kind_.name}, {"workload", key}, {"error", created.error().describe()}});
  }
  return std::optional<Action>(lookAgain);
}

core::Result<Action> WorkloadReconciler::writeQueuedSince(const json& workload, const std::string& key,
                                                          std::optional<std::string> queuedSince,
                                                          std::stop_token stop) {
  if (!context_.writeLimiter.acquire(stop)) {
    return core::makeError(core::ErrorKind::Unavailable, "stopping before the write");
  }
  // Everything this manager owns is sent again as it is (the restarter keys of the template, the
  // records), or the apply would remove it: nothing but queued-since changes, so nothing restarts.
  auto current = core::templateAnnotations(workload);
  if (!current) return std::move(current).error().withContext(kind_.name + " " + key);
  core::AnnotationMap owned;
  for (const auto& [k, v] : *current) {
    if (core::parseTemplateAnnotationKey(k)) owned[k] = v;
  }
  AppliedAnnotations sent{std::move(owned), metadataAnnotation(workload, core::kLastRolloutAnnotation),
                          metadataAnnotation(workload, core::kContentDigestsAnnotation).value_or(""),
                          metadataAnnotation(workload, core::kBaselineAnnotation), std::move(queuedSince)};
  auto applied = context_.client.apply(kind_.resource, core::metadataString(workload, "namespace"),
                                       core::metadataString(workload, "name"), applyBody(kind_, workload, sent),
                                       kube::ApplyOptions{kind_.fieldManager, true, false});
  context_.metrics.writes.with({kind_.resource.plural, "apply"}).inc();
  if (!applied) {
    return std::move(applied).error().withContext(
        (sent.queuedSince ? "recording the queued rollout of " : "removing the queued-rollout record of ") +
        kind_.name + " " + key);
  }
  return Action::awaitChange();
}

core::Result<Action> WorkloadReconciler::rollOut(const json& workload, const std::string& key,
                                                 const core::DesiredAnnotations& desired,
                                                 const std::vector<core::AnnotationChange>& changes,
                                                 std::stop_token stop) {
  if (!context_.writeLimiter.acquire(stop)) {
    return core::makeError(core::ErrorKind::Unavailable, "stopping before the write");
  }
  // Stamped when the write limiter let the write through, not when it was decided: the limiter
  // may have made it wait, and the next interval must count from the rollout itself.
  const core::TimePoint rolledAt = std::chrono::floor<std::chrono::microseconds>(context_.clock.wallNow());
  const AppliedAnnotations sent = core::rolloutAnnotations(workload, desired, rolledAt);
  auto applied = context_.client.apply(kind_.resource, core::metadataString(workload, "namespace"),
                                       core::metadataString(workload, "name"), applyBody(kind_, workload, sent),
                                       kube::ApplyOptions{kind_.fieldManager, true, false});
  context_.metrics.writes.with({kind_.resource.plural, "apply"}).inc();
  if (!applied)
    return std::move(applied).error().withContext("applying annotations to " + kind_.name + " " + key);
  {
    std::lock_guard lock(mutex_);
    lastWrites_[key] = LastWrite{core::metadataString(workload, "uid"),
                                 core::metadataString(workload, "resourceVersion"),
                                 desired.annotations,
                                 *sent.lastRollout,
                                 desired.contentDigests,
                                 sent.baseline};
    queuedSinceWritten_.erase(key);  // the apply removed it
  }
  if (core::Status s = removeForeignLeftovers(*applied, desired); !s) {
    return std::move(s).error().withContext("removing annotations of " + kind_.name + " " + key);
  }
  context_.metrics.restarts.with({kind_.name}).inc();
  // The restart happened; an Event that cannot be written is logged, not retried (a retry would
  // find nothing left to do and so could never write it anyway).
  if (core::Status s = announce(workload, key, changes); !s) {
    context_.logger.warn("cannot record restart event",
                         {{"kind", kind_.name}, {"workload", key}, {"error", s.error().describe()}});
  }
  return Action::awaitChange();
}

core::Status WorkloadReconciler::recordEvent(const json& workload, const std::string& type,
                                             const std::string& reason, const std::string& action,
                                             const std::string& note) {
  return controller::recordEvent(context_,
                                 referenceTo(workload, kind_.resource.apiVersion(), kind_.resource.kind), type,
                                 reason, action, note);
}

core::Result<Action> WorkloadReconciler::applyRecords(const json& workload, const std::string& key,
                                                      const core::DesiredAnnotations& desired,
                                                      core::WriteKind write, std::stop_token stop) {
  const bool rekey = write == core::WriteKind::ContentRecord;
  // "rewritten keyed" (a key rotation, h1 entries) or "completed" (entries missing).
  const char* rewritten =
      desired.recordRewrite == core::RecordRewrite::Complete ? "completed" : "rewritten keyed";
  const std::string ns = core::metadataString(workload, "namespace");
  std::string why;
  for (const core::ReferenceStatus& status : desired.references) {
    if (status.noRestart == core::NoRestart::None || status.noRestart == core::NoRestart::Baseline) continue;
    if (!why.empty()) why += "; ";
    why += std::string(core::refKindName(status.ref.kind)) + "/" + status.ref.name + ": " +
           core::noRestartText(status.noRestart);
  }
  const std::string recorded = desired.baseline.empty() ? "none" : desired.baseline;
  if (context_.dryRun) {
    if (!announced_.once(key, kDryRunTopic, rekey ? "rekey " + desired.contentDigests : "baseline " + recorded))
      return Action::awaitChange();
    if (rekey) {
      context_.logger.info(std::string("content record would be ") + rewritten + " (dry run, nothing written)",
                           {{"kind", kind_.name}, {"workload", key}});
    } else {
      context_.logger.info("baseline would be recorded (dry run, nothing written)",
                           {{"kind", kind_.name}, {"workload", key}, {"baseline", recorded}, {"why", why}});
    }
    return Action::awaitChange();
  }
  if (!context_.writeLimiter.acquire(stop)) {
    return core::makeError(core::ErrorKind::Unavailable, "stopping before the write");
  }
  // Everything this manager owns is sent again as it is, or the apply would remove it. A baseline
  // write sends the desired record ("" empties it); a rekey sends the one there is.
  AppliedAnnotations sent{
      desired.annotations, metadataAnnotation(workload, core::kLastRolloutAnnotation), desired.contentDigests,
      rekey ? baselineToSend(workload, desired) : std::optional<std::string>(desired.baseline),
      std::nullopt};  // queued-since removed: a records write means no rollout is pending
  auto applied = context_.client.apply(kind_.resource, ns, core::metadataString(workload, "name"),
                                       applyBody(kind_, workload, sent),
                                       kube::ApplyOptions{kind_.fieldManager, true, false});
  context_.metrics.writes.with({kind_.resource.plural, "apply"}).inc();
  if (!applied) {
    return std::move(applied).error().withContext(
        (rekey ? "rewriting the content record of " : "recording the baseline of ") + kind_.name + " " + key);
  }
  {
    std::lock_guard lock(mutex_);
    lastWrites_[key] = LastWrite{core::metadataString(workload, "uid"),
                                 core::metadataString(workload, "resourceVersion"),
                                 desired.annotations,
                                 "",  // not a rollout: the cached last-rollout stays as it is
                                 desired.contentDigests,
                                 sent.baseline};
  }
  if (rekey) {
    context_.logger.info(
        std::string("content record ") + rewritten + ", no restart",
        {{"kind", kind_.name}, {"workload", key}, {"namespace", ns}, {"keyId", context_.digestKeyId}});
    return Action::awaitChange();
  }
  context_.logger.info(
      "baseline recorded, no restart",
      {{"kind", kind_.name}, {"workload", key}, {"namespace", ns}, {"baseline", recorded}, {"why", why}});
  auto created = recordEvent(workload, "Normal", std::string(core::kBaselineRecordedReason), "Record",
                             "No restart: the versions the pods run with are recorded (" + recorded + ")" +
                                 (why.empty() ? std::string() : ": " + why));
  if (!created) {
    context_.logger.warn("cannot record baseline event",
                         {{"kind", kind_.name}, {"workload", key}, {"error", created.error().describe()}});
  }
  return Action::awaitChange();
}

Action WorkloadReconciler::noteTemplateSource(const json& workload, const std::string& key,
                                              const core::PodTemplateSource& source,
                                              const cache::PackedStore* deployments) {
  const std::string ns = core::metadataString(workload, "namespace");
  const json* generation = core::valueAt(workload, {"metadata", "generation"});
  const std::string version = generation != nullptr ? generation->dump() : "";
  if (source.source != core::TemplateSource::WorkloadRef) {
    if (announced_.once(key, kTemplateSourceTopic, version + " " + source.problem)) {
      context_.logger.warn(
          "nothing to manage",
          {{"kind", kind_.name}, {"workload", key}, {"generation", version}, {"why", source.problem}});
    }
    return Action::awaitChange();
  }
  // The Deployment is managed by its own label (docs/behaviour.md, "Argo Rollouts"): restarter
  // writes its template, which Argo Rollouts copies into a new ReplicaSet of the Rollout.
  const std::string deploymentKey = ns + "/" + source.name;
  bool managed = false;
  if (deployments != nullptr) {
    auto cached = deployments->get(deploymentKey);
    if (cached && *cached != nullptr) managed = !(*cached)->trim.stub;
  }
  // A Deployment created with its Rollout may reach its cache later: looked for again.
  const Action recheck = managed ? Action::awaitChange() : Action::requeue(kWorkloadRefRecheck);
  if (!announced_.once(key, kTemplateSourceTopic, version + " " + deploymentKey + (managed ? " managed" : "")))
    return recheck;
  if (managed) {
    context_.logger.info("pod template is the workloadRef Deployment's, which restarter manages",
                         {{"kind", kind_.name}, {"workload", key}, {"deployment", deploymentKey}});
    return recheck;
  }
  context_.logger.warn("the workloadRef Deployment is missing or not labeled: its references restart nothing",
                       {{"kind", kind_.name},
                        {"workload", key},
                        {"deployment", deploymentKey},
                        {"generation", version},
                        {"fix", "label the Deployment " + std::string(core::kEnabledSelector)}});
  return recheck;
}

void WorkloadReconciler::logMetadataOnly(const std::string& key, const core::DesiredAnnotations& desired) {
  std::string kept;
  std::string deleted;
  for (const core::ReferenceStatus& status : desired.references) {
    const std::string name = std::string(core::refKindName(status.ref.kind)) + "/" + status.ref.name;
    if (status.noRestart == core::NoRestart::DeletedKept) {
      if (!deleted.empty()) deleted += "; ";
      deleted += name + ": " + status.value.value_or(status.baseline.value_or("none")) + " kept";
    }
    if (!status.metadataOnly) continue;
    if (!kept.empty()) kept += "; ";
    kept += name + ": " + status.value.value_or(status.baseline.value_or("none")) + " kept, now " +
            status.state.uid + "/" + status.state.resourceVersion;
  }
  if (kept.empty() && deleted.empty()) {
    announced_.forget(key, kMetadataOnlyTopic);
    return;
  }
  if (!announced_.once(key, kMetadataOnlyTopic, kept + "\n" + deleted)) return;  // logged already
  // "Same content", not "metadata-only": a change undone before the controller acted (A -> B -> A
  // within the debounce) leaves the same digest as a label would.
  if (!kept.empty()) {
    context_.logger.debug("same content as recorded, no restart",
                          {{"kind", kind_.name}, {"workload", key}, {"references", kept}});
  }
  if (!deleted.empty()) {
    context_.logger.debug("referenced object deleted, running pods keep their copy, no restart",
                          {{"kind", kind_.name}, {"workload", key}, {"references", deleted}});
  }
}

Action WorkloadReconciler::refuseTooLarge(const json& workload, const std::string& key,
                                          const core::WritePlan& plan) {
  const std::string ns = core::metadataString(workload, "namespace");
  const bool rollout = plan.kind == core::WriteKind::Template;
  const std::string described =
      rollout ? describeChanges(plan.changes)
      : plan.kind == core::WriteKind::ContentRecord
          ? "the content record rewritten alone"
          : "baseline " + (plan.records.front().value.empty() ? "none" : plan.records.front().value);
  const std::string note =
      std::string(rollout                                       ? "Not restarting pods: "
                  : plan.kind == core::WriteKind::ContentRecord ? "Not rewriting the content record: "
                                                                : "Not recording the baseline: ") +
      plan.refusal() + "; not applied: " + described;
  // The state warned about: the same note for the same workload is the same refusal.
  const std::string state = core::metadataString(workload, "uid") + "\n" + note;
  if (!announced_.once(key, kTooLargeTopic, state)) return Action::awaitChange();
  context_.logger.warn(rollout ? "annotations too large; not restarting" : "annotations too large; no baseline",
                       {{"kind", kind_.name},
                        {"workload", key},
                        {"namespace", ns},
                        {"templateBytesBefore", std::to_string(plan.templateSize.before)},
                        {"templateBytesAfter", std::to_string(plan.templateSize.after)},
                        {"metadataBytesBefore", std::to_string(plan.metadataSize.before)},
                        {"metadataBytesAfter", std::to_string(plan.metadataSize.after)},
                        {"limit", std::to_string(core::kMaxAnnotationsBytes)},
                        {"changes", described}});
  auto created = recordEvent(workload, "Warning", std::string(core::kAnnotationsTooLargeReason),
                             rollout ? "Restart" : "Record", note);
  if (!created) {
    // Logged, not retried: retrying would repeat a refusal nobody can act on sooner. A later
    // reconcile of the same state tries the Event again.
    context_.logger.warn("cannot record annotations-too-large event",
                         {{"kind", kind_.name}, {"workload", key}, {"error", created.error().describe()}});
    announced_.forget(key, kTooLargeTopic);
  }
  return Action::awaitChange();
}

core::Status WorkloadReconciler::removeForeignLeftovers(const json& applied,
                                                        const core::DesiredAnnotations& desired) {
  std::vector<core::AnnotationChange> leftovers;
  auto guarded = core::foreignLeftoverPatch(applied, desired, &leftovers);
  if (!guarded) return std::move(guarded).error();
  if (!*guarded) return core::okStatus();
  context_.logger.info(
      "removing restarter annotations owned by another field manager",
      {{"kind", kind_.name},
       {"workload", core::metadataString(applied, "namespace") + "/" + core::metadataString(applied, "name")},
       {"changes", describeChanges(leftovers)}});
  auto patched = context_.client.jsonPatch(kind_.resource, core::metadataString(applied, "namespace"),
                                           core::metadataString(applied, "name"), **guarded,
                                           kube::WriteOptions{false, kind_.fieldManager});
  context_.metrics.writes.with({kind_.resource.plural, "patch"}).inc();
  if (!patched) return std::move(patched).error();
  return core::okStatus();
}

Action WorkloadReconciler::hold(const json& workload, const std::string& key,
                                const std::vector<core::AnnotationChange>& changes, core::TimePoint lastRollout,
                                const core::RolloutDecision& decision, core::TimePoint now) {
  // Rounded up: woken a fraction early, the key would only be held again for the rest. While the
  // previous rollout is in progress, the status change that finishes it queues the key (the
  // controller's workload handlers, core::rolloutProgressOf); the recheck only bounds a missed one.
  auto wait = std::chrono::ceil<milliseconds>(decision.notBefore - now);
  if (decision.wait == core::RolloutWait::Progress) {
    wait = std::min<milliseconds>(wait, core::kRolloutProgressRecheck);
  }
  const Action lookAgain = Action::requeue(wait);
  // One hold per previous rollout, however its reason moves (the floor, then the progress).
  if (!announced_.once(key, kHeldTopic, std::to_string(lastRollout.time_since_epoch().count())))
    return lookAgain;
  const std::string ns = core::metadataString(workload, "namespace");
  const std::string described = describeChanges(changes);
  context_.metrics.rolloutsHeld.with({kind_.name}).inc();
  context_.logger.info("rollout held",
                       {{"kind", kind_.name},
                        {"workload", key},
                        {"namespace", ns},
                        {"until", base::formatRfc3339(decision.upperBound)},
                        {"waitingFor", core::describeHold(decision)},
                        {"lastRollout", base::formatRfc3339(lastRollout)},
                        {"minRolloutInterval", core::formatDuration(context_.minRolloutInterval)},
                        {"changes", described}});
  auto created =
      recordEvent(workload, "Normal", std::string(core::kRolloutHeldReason), "Hold",
                  core::rolloutHeldNote(decision, lastRollout, context_.minRolloutInterval, ns, described));
  // Logged, not retried: the hold itself needs no Event, and the rollout must not wait for one.
  if (!created) {
    context_.logger.warn("cannot record rollout-held event",
                         {{"kind", kind_.name}, {"workload", key}, {"error", created.error().describe()}});
  }
  return lookAgain;
}

core::Status WorkloadReconciler::announce(const json& workload, const std::string& key,
                                          const std::vector<core::AnnotationChange>& changes) {
  const std::string ns = core::metadataString(workload, "namespace");
  const std::string described = describeChanges(changes);
  const bool dry = context_.dryRun;
  context_.logger.info(dry ? "restart planned (dry run, nothing written)" : "restart triggered",
                       {{"kind", kind_.name}, {"workload", key}, {"namespace", ns}, {"changes", described}});
  if (dry) context_.metrics.dryRunRestarts.with({kind_.name}).inc();

  auto created = recordEvent(workload, "Normal", dry ? "WouldRestart" : "Restarted", "Restart",
                             std::string(dry ? "Would restart pods (dry run)" : "Restarting pods") +
                                 ": referenced objects in namespace " + ns + " changed: " + described);
  if (!created) return std::move(created).error();
  return core::okStatus();
}

}  // namespace restarter::controller
