#pragma once
// Evicting a pod through the Eviction API (policy/v1), shared by the pod expiry restarter
// (pod_expiry.hpp) and the OnDelete roll (ondelete.hpp), so both honour PodDisruptionBudgets the
// same way:
//   - the pod's uid is the precondition: a new pod of the same name (a StatefulSet's replacement)
//     is never evicted by mistake; a pod gone or replaced answers Gone;
//   - a refusal (429, a PodDisruptionBudget) is logged at info level and answered Refused with
//     the delay before asking again, max(kEvictionRefusedRetry, Retry-After); the first refusal of
//     a pod also records a Warning Event (reason EvictionBlocked, the note naming `cause`), then
//     at most one per kEvictionBlockedEventInterval while it keeps being refused: a budget that
//     blocks for an hour is worth a few Events, not 720;
//   - any other failure is returned as an error for the reconcile's retry policy.
// The write takes a token from the global write limiter first.
//
// Thread-safety: evict() may run on several workers at once (one lock guards the Event times).

#include <map>
#include <mutex>
#include <stop_token>
#include <string>

#include <nlohmann/json.hpp>

#include "restarter/controller/reconcile.hpp"

namespace restarter::controller {

// The delay before asking again after a PodDisruptionBudget refused an eviction.
inline constexpr milliseconds kEvictionRefusedRetry{5000};
// The least time between two EvictionBlocked Events for one pod.
inline constexpr milliseconds kEvictionBlockedEventInterval{10 * 60 * 1000};

struct Eviction {
  enum class Outcome { Evicted, Gone, Refused };
  Outcome outcome = Outcome::Evicted;
  milliseconds retryAfter{0};  // Refused: when to ask again
};

class Evictor {
 public:
  explicit Evictor(ReconcileContext& context);

  // `pod` as cached or listed (namespace, name and uid are read from it); `cause` completes the
  // EvictionBlocked note: "Cannot evict the pod yet (<refusal>): <cause>; retrying every 5s".
  core::Result<Eviction> evict(const nlohmann::json& pod, const std::string& cause, std::stop_token stop);

 private:
  bool blockedEventDue(const std::string& uid);

  ReconcileContext& context_;
  std::mutex mutex_;
  std::map<std::string, base::Clock::MonotonicTime> blockedEvents_;  // pod uid -> last EvictionBlocked Event
};

}  // namespace restarter::controller
