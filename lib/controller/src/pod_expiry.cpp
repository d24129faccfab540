#include "restarter/controller/pod_expiry.hpp"

#include <algorithm>

#include "restarter/core/expiry.hpp"

namespace restarter::controller {

using nlohmann::json;

namespace {

// metadata.<field> of a pod as a string, or "" (never throws: the pod comes from the API).
std::string metadataString(const json& pod, const char* field) {
  const json::const_iterator metadata = pod.find("metadata");
  if (metadata == pod.end() || !metadata->is_object()) return {};
  const json::const_iterator value = metadata->find(field);
  if (value == metadata->end() || !value->is_string()) return {};
  return value->get<std::string>();
}

}  // namespace

PodExpiryReconciler::PodExpiryReconciler(PodsFor pods, ReconcileContext& context)
    : pods_(std::move(pods)), context_(context) {}

bool PodExpiryReconciler::firstTime(const std::string& what) {
  std::lock_guard lock(mutex_);
  // Bounded: a long-running controller that meets many broken pods must not grow forever.
  constexpr std::size_t kMaxRemembered = 10000;
  if (reported_.size() >= kMaxRemembered) reported_.clear();
  return reported_.insert(what).second;
}

bool PodExpiryReconciler::blockedEventDue(const std::string& uid) {
  const TimePoint now = context_.clock.now();
  std::lock_guard lock(mutex_);
  // Bounded like reported_: forgetting only means one more Event.
  constexpr std::size_t kMaxRemembered = 10000;
  if (blockedEvents_.size() >= kMaxRemembered) blockedEvents_.clear();
  auto [it, inserted] = blockedEvents_.emplace(uid, now);
  if (inserted) return true;
  if (now - it->second < kEvictionBlockedEventInterval) return false;
  it->second = now;
  return true;
}

void PodExpiryReconciler::recordEvent(const json& pod, const std::string& type,
                                      const std::string& reason, const std::string& note) {
  kube::EventRecord event;
  event.namespace_ = metadataString(pod, "namespace");
  event.regarding = kube::ObjectReference{"v1", "Pod", event.namespace_, metadataString(pod, "name"),
                                          metadataString(pod, "uid")};
  event.type = type;
  event.reason = reason;
  event.action = "Evict";
  event.note = note;
  event.reportingController = context_.reportingController;
  event.reportingInstance = context_.reportingInstance;
  auto created = context_.client.createEvent(event);
  context_.metrics.writes.with({"events", "create"}).inc();
  if (!created) {
    context_.logger.warn("cannot record pod eviction event",
                         {{"pod", event.namespace_ + "/" + event.regarding.name}, {"reason", reason},
                          {"error", created.error().describe()}});
  }
}

core::Result<Action> PodExpiryReconciler::reconcile(const std::string& key, std::stop_token stop) {
  const auto slash = key.find('/');
  const std::string ns = slash == std::string::npos ? std::string() : key.substr(0, slash);
  const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  const cache::Store* store = pods_(ns);
  if (store == nullptr) return core::makeError(core::ErrorKind::Internal, "no pod cache for namespace \"" + ns + "\"");
  auto cached = store->get(key);
  if (!cached) return std::move(cached).error();
  if (*cached == nullptr) return Action::awaitChange();
  const json& pod = **cached;
  auto metadata = pod.find("metadata");
  if (metadata == pod.end() || !metadata->is_object()) return Action::awaitChange();
  if (metadata->contains("deletionTimestamp") && !(*metadata)["deletionTimestamp"].is_null()) {
    return Action::awaitChange();
  }
  const std::string uid = metadataString(pod, "uid");
  core::AnnotationMap annotations;
  if (auto it = metadata->find("annotations"); it != metadata->end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (v.is_string()) annotations.emplace(k, v.get<std::string>());
    }
  }
  const auto now = std::chrono::time_point_cast<std::chrono::microseconds>(context_.clock.now());
  core::ExpiryDecision decision = core::decideExpiry(annotations, now);
  for (const core::ExpiryProblem& problem : decision.problems) {
    if (firstTime("problem|" + uid + "|" + problem.key + "|" + problem.value)) {
      context_.logger.warn("ignoring unparseable pod expiry annotation",
                           {{"pod", key}, {"annotation", problem.key}, {"value", problem.value},
                            {"reason", problem.reason}});
    }
  }
  switch (decision.action) {
    case core::ExpiryDecision::Action::None:
      return Action::awaitChange();
    case core::ExpiryDecision::Action::CheckAt: {
      auto wait = std::chrono::ceil<milliseconds>(*decision.expiresAt - now);
      return Action::requeue(std::max(wait, milliseconds(1)));
    }
    case core::ExpiryDecision::Action::EvictNow:
      break;
  }
  const std::string expiresAt = core::formatRfc3339(*decision.expiresAt);
  const std::string cause = "its annotation " + decision.key + " says it expires at " + expiresAt;
  if (context_.dryRun) {
    if (firstTime("dry-run|" + uid)) {
      context_.logger.info("pod eviction planned (dry run, nothing written)",
                           {{"pod", key}, {"annotation", decision.key}, {"expiresAt", expiresAt}});
      context_.metrics.evictions.with({"dry_run"}).inc();
      recordEvent(pod, "Normal", "WouldEvict", "Would evict the pod (dry run): " + cause);
    }
    return Action::awaitChange();
  }
  if (!context_.writeLimiter.acquire(stop)) {
    return core::makeError(core::ErrorKind::Unavailable, "stopping before the eviction");
  }
  kube::DeleteOptions options;
  if (!uid.empty()) options.uid = uid;
  core::Status evicted = context_.client.evict(ns, name, options);
  context_.metrics.writes.with({"pods", "evict"}).inc();
  if (evicted) {
    context_.metrics.evictions.with({"evicted"}).inc();
    context_.logger.info("pod evicted: credentials expired",
                         {{"pod", key}, {"annotation", decision.key}, {"expiresAt", expiresAt}});
    recordEvent(pod, "Normal", "Expired", "Evicted the pod: " + cause);
    return Action::awaitChange();
  }
  const core::Error& error = evicted.error();
  if (error.kind == core::ErrorKind::NotFound || error.kind == core::ErrorKind::Conflict) {
    // Gone already, or replaced by a new pod of the same name (uid precondition): its own events
    // queue it again if needed.
    return Action::awaitChange();
  }
  if (error.kind == core::ErrorKind::TooManyRequests) {
    milliseconds retry = kEvictionRefusedRetry;
    if (auto after = kube::retryAfter(error)) retry = std::max(retry, std::chrono::duration_cast<milliseconds>(*after));
    context_.metrics.evictions.with({"refused"}).inc();
    context_.logger.info("pod eviction refused (PodDisruptionBudget); will retry",
                         {{"pod", key}, {"retryIn", std::to_string(retry.count()) + "ms"},
                          {"reason", error.message}});
    if (blockedEventDue(uid)) {
      recordEvent(pod, "Warning", "EvictionBlocked",
                  "Cannot evict the pod yet (" + error.message + "): " + cause +
                      "; retrying every " + std::to_string(retry.count() / 1000) + "s");
    }
    return Action::requeue(retry);
  }
  core::Error failed = error;
  failed.context.push_back("evicting pod " + key);
  return failed;
}

}  // namespace restarter::controller
