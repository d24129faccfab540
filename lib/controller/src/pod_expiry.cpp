#include "restarter/controller/pod_expiry.hpp"

#include <algorithm>

#include "restarter/core/expiry.hpp"

namespace restarter::controller {

using nlohmann::json;

PodExpiryReconciler::PodExpiryReconciler(PodsFor pods, ReconcileContext& context)
    : pods_(std::move(pods)), context_(context) {}

bool PodExpiryReconciler::firstTime(const std::string& what) {
  std::lock_guard lock(mutex_);
  // Bounded: a long-running controller that meets many broken pods must not grow forever.
  constexpr std::size_t kMaxRemembered = 10000;
  if (reported_.size() >= kMaxRemembered) reported_.clear();
  return reported_.insert(what).second;
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
  const std::string uid = metadata->value("uid", std::string());
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
  if (context_.dryRun) {
    if (firstTime("dry-run|" + uid)) {
      context_.logger.info("pod eviction planned (dry run, nothing written)",
                           {{"pod", key}, {"annotation", decision.key}, {"expiresAt", expiresAt}});
      context_.metrics.evictions.with({"dry_run"}).inc();
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
    return Action::requeue(retry);
  }
  core::Error failed = error;
  failed.context.push_back("evicting pod " + key);
  return failed;
}

}  // namespace restarter::controller
