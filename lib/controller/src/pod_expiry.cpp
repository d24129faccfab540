#include "restarter/controller/pod_expiry.hpp"

#include <algorithm>

#include "restarter/base/rfc3339.hpp"
#include "restarter/controller/events.hpp"
#include "restarter/core/expiry.hpp"
#include "restarter/core/json_access.hpp"

namespace restarter::controller {

using nlohmann::json;

PodExpiryReconciler::PodExpiryReconciler(PodsFor pods, ReconcileContext& context)
    : pods_(std::move(pods)), context_(context), evictor_(context) {}

void PodExpiryReconciler::recordPodEvent(const json& pod, const std::string& type, const std::string& reason,
                                         const std::string& note) {
  (void)recordEvent(context_, referenceTo(pod, "v1", "Pod"), type, reason, "Evict", note);
}

core::Result<Action> PodExpiryReconciler::reconcile(const ObjectName& object, std::stop_token stop) {
  const std::string& ns = object.namespace_;
  const std::string key = object.key();
  const cache::Store* store = pods_(ns);
  if (store == nullptr)
    return core::makeError(core::ErrorKind::Internal, "no pod cache for namespace \"" + ns + "\"");
  auto cached = store->get(key);
  if (!cached) return std::move(cached).error();
  if (*cached == nullptr) return Action::awaitChange();
  const json& pod = **cached;
  auto metadata = pod.find("metadata");
  if (metadata == pod.end() || !metadata->is_object()) return Action::awaitChange();
  if (metadata->contains("deletionTimestamp") && !(*metadata)["deletionTimestamp"].is_null()) {
    return Action::awaitChange();
  }
  const std::string uid = core::metadataString(pod, "uid");
  core::AnnotationMap annotations;
  if (auto it = metadata->find("annotations"); it != metadata->end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (v.is_string()) annotations.emplace(k, v.get<std::string>());
    }
  }
  const auto now = std::chrono::time_point_cast<std::chrono::microseconds>(context_.clock.wallNow());
  core::ExpiryDecision decision = core::decideExpiry(annotations, now);
  for (const core::ExpiryProblem& problem : decision.problems) {
    if (reported_.once(uid, "problem|" + problem.key + "|" + problem.value)) {
      context_.logger.warn(
          "ignoring unparseable pod expiry annotation",
          {{"pod", key}, {"annotation", problem.key}, {"value", problem.value}, {"reason", problem.reason}});
    }
  }
  switch (decision.action) {
    case core::ExpiryDecision::Action::None: return Action::awaitChange();
    case core::ExpiryDecision::Action::CheckAt: {
      auto wait = std::chrono::ceil<milliseconds>(*decision.expiresAt - now);
      return Action::requeue(std::max(wait, milliseconds(1)));
    }
    case core::ExpiryDecision::Action::EvictNow: break;
  }
  const std::string expiresAt = base::formatRfc3339(*decision.expiresAt);
  const std::string cause = "its annotation " + decision.key + " says it expires at " + expiresAt;
  if (context_.dryRun) {
    if (reported_.once(uid, "dry-run")) {
      context_.logger.info("pod eviction planned (dry run, nothing written)",
                           {{"pod", key}, {"annotation", decision.key}, {"expiresAt", expiresAt}});
      context_.metrics.evictions.with({"dry_run"}).inc();
      recordPodEvent(pod, "Normal", "WouldEvict", "Would evict the pod (dry run): " + cause);
    }
    return Action::awaitChange();
  }
  auto eviction = evictor_.evict(pod, cause, stop);
  if (!eviction) return std::move(eviction).error();
  switch (eviction->outcome) {
    case Eviction::Outcome::Evicted:
      context_.metrics.evictions.with({"evicted"}).inc();
      context_.logger.info("pod evicted: credentials expired",
                           {{"pod", key}, {"annotation", decision.key}, {"expiresAt", expiresAt}});
      recordPodEvent(pod, "Normal", "Expired", "Evicted the pod: " + cause);
      return Action::awaitChange();
    case Eviction::Outcome::Gone:
      // Gone already, or replaced by a new pod of the same name: its own events queue it again.
      return Action::awaitChange();
    case Eviction::Outcome::Refused:
      context_.metrics.evictions.with({"refused"}).inc();
      return Action::requeue(eviction->retryAfter);
  }
  return Action::awaitChange();
}

}  // namespace restarter::controller
