#include "restarter/controller/eviction.hpp"

#include <algorithm>

#include "restarter/controller/events.hpp"

namespace restarter::controller {

using nlohmann::json;

Evictor::Evictor(ReconcileContext& context) : context_(context) {}

bool Evictor::blockedEventDue(const std::string& uid) {
  return blockedEvents_.every(uid, "eviction-blocked", context_.clock.monotonicNow(),
                              kEvictionBlockedEventInterval);
}

core::Result<Eviction> Evictor::evict(const json& pod, const std::string& cause, std::stop_token stop) {
  const kube::ObjectReference ref = referenceTo(pod, "v1", "Pod");
  const std::string key = ref.namespace_ + "/" + ref.name;
  if (!context_.writeLimiter.acquire(stop)) {
    return core::makeError(core::ErrorKind::Unavailable, "stopping before the eviction");
  }
  kube::DeleteOptions options;
  if (!ref.uid.empty()) options.uid = ref.uid;
  core::Status evicted = context_.client.evict(ref.namespace_, ref.name, options);
  context_.metrics.writes.with({"pods", "evict"}).inc();
  if (evicted) return Eviction{Eviction::Outcome::Evicted, milliseconds(0)};
  const core::Error& error = evicted.error();
  if (error.kind == core::ErrorKind::NotFound || error.kind == core::ErrorKind::Conflict) {
    // Gone already, or replaced by a new pod of the same name (uid precondition).
    return Eviction{Eviction::Outcome::Gone, milliseconds(0)};
  }
  if (error.kind == core::ErrorKind::TooManyRequests) {
    milliseconds retry = kEvictionRefusedRetry;
    if (auto after = kube::retryAfter(error))
      retry = std::max(retry, std::chrono::duration_cast<milliseconds>(*after));
    context_.logger.info(
        "pod eviction refused (PodDisruptionBudget); will retry",
        {{"pod", key}, {"retryIn", std::to_string(retry.count()) + "ms"}, {"reason", error.message}});
    if (blockedEventDue(ref.uid)) {
      (void)recordEvent(context_, ref, "Warning", "EvictionBlocked", "Evict",
                        "Cannot evict the pod yet (" + error.message + "): " + cause + "; retrying every " +
                            std::to_string(retry.count() / 1000) + "s");
    }
    return Eviction{Eviction::Outcome::Refused, retry};
  }
  return core::Error(error).withContext("evicting pod " + key);
}

}  // namespace restarter::controller
