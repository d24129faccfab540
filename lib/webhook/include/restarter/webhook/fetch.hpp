#pragma once
// Fresh lookup of referenced ConfigMaps and Secrets (docs/architecture.md, "Fresh lookups"): every
// admission reads the referenced objects from the API, metadata only, all at once, and waits at
// most until a deadline shorter than the webhook's timeout. A cache is never consulted: right
// after start, or when a watch lags, a cache would answer "absent" for an object that exists and
// the webhook would write a wrong annotation.
//
//   found     -> ObjectState::present(uid, resourceVersion, ignore label)
//   NotFound  -> ObjectState::absent()
//   any other error, or no answer by the deadline -> ObjectState::unknown(why): no patch.
//
// Threads: the first reference of a review is looked up on the calling thread (the HTTP worker),
// the others on a LookupPool of a fixed size, so a workload with hundreds of references, or a
// burst of reviews, queues lookups instead of starting a thread for each.
//
// Bounds for callers that are not authenticated (anyone who reaches the port can send a review
// naming any object): a name no object can have (core::isValidObjectName) is absent without a
// lookup, and an invalid namespace is looked up nowhere; a review with more references than
// LookupLimits::maxPerReview, or one the LookupBudget (a token bucket shared by all reviews, of
// which one namespace's reviews may take only a share) has no room for, is not looked up at all:
// its states are unknown at once, with a reason short enough for the warning to show whole
// (kLookupRefused*), so it is answered without a patch (the controller writes the annotations
// later) and counted.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "restarter/base/clock.hpp"
#include "restarter/base/token_bucket.hpp"
#include "restarter/core/annotations.hpp"
#include "restarter/core/content.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/digest_key.hpp"
#include "restarter/webhook/admission.hpp"
#include "restarter/webhook/metrics.hpp"

namespace restarter::webhook {

// Reads one object's state. Must be thread-safe and must not throw; it should itself give up
// around the deadline (the production one uses a client whose request timeout is the deadline).
using ObjectGetter = std::function<core::ObjectState(core::RefKind kind, const std::string& namespace_,
                                                     const std::string& name)>;

// A fixed set of threads running lookups from a bounded queue. Thread-safe.
class LookupPool {
 public:
  // A job is told whether its deadline passed while it waited in the queue: then it must not look
  // anything up (its requester has already answered), only record that it was skipped.
  using Job = std::function<void(bool expired)>;

  // Starts `threads` threads (fewer if the system refuses more; with none, every submit fails).
  // At most `maxQueued` jobs wait for a thread; more are refused.
  LookupPool(std::size_t threads, std::size_t maxQueued);
  // Stops the threads after their current job; jobs still queued are dropped unrun (their
  // requesters time out). Every fetch using the pool must have returned.
  ~LookupPool();
  LookupPool(const LookupPool&) = delete;
  LookupPool& operator=(const LookupPool&) = delete;

  // Queues `job` to run once a thread is free. False, and `job` is not kept, when the queue is
  // full or no thread runs.
  bool submit(Job job, std::chrono::steady_clock::time_point deadline);

  std::size_t threads() const;
  // Jobs refused because the queue was full, and jobs skipped because they expired in the queue.
  std::uint64_t refused() const;
  std::uint64_t expired() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// serve-webhook --max-lookups-per-review, --max-lookups-per-second, --lookup-burst, --lookup-share.
struct LookupLimits {
  // A real workload references tens of objects, a generated one may reference a thousand; more is
  // left to the controller.
  std::size_t maxPerReview = 1000;
  // Lookups per second for all reviews together, and how many may be taken at once. The burst
  // lets one review of maxPerReview through with the reserve (below) to spare.
  double perSecond = 100;
  double burst = 2000;
  // The share of perSecond and of burst (but at least maxPerReview and the share's reserve) that
  // the reviews of one namespace may take: a caller flooding the webhook with small reviews of one
  // namespace (a tenant's server-side dry runs; a forged review's namespace) drains that
  // namespace's share, and the other namespaces keep 1 - share of the rate. 1: no share, the
  // bucket alone.
  double share = 0.25;
  // Namespaces whose share is remembered; beyond, the least recently seen is forgotten (it comes
  // back with a full share, as a namespace never seen does).
  std::size_t maxShares = 4096;
};

// The warning's reasons for a review not looked up (the unknown states' problem): each fits the
// warning whole (kMaxWarningReason).
inline constexpr std::string_view kLookupRefusedTooMany = "references over --max-lookups-per-review";
inline constexpr std::string_view kLookupRefusedRate = "lookup rate limit of the webhook reached";
inline constexpr std::string_view kLookupRefusedShare = "the namespace's share of lookups is spent";
static_assert(kLookupRefusedTooMany.size() <= kMaxWarningReason &&
              kLookupRefusedRate.size() <= kMaxWarningReason &&
              kLookupRefusedShare.size() <= kMaxWarningReason);

// The token bucket of lookups shared by every review, and one smaller bucket per namespace (its
// share: LookupLimits::share of the rate, and of the burst but at least maxPerReview plus the
// share's reserve). A review takes the tokens of all its lookups at once from both, or none. A
// tenth of each bucket (of the share's share of the burst) is kept for small reviews: a review of
// more lookups than that may not take the bucket below it, so callers sending large reviews
// cannot starve the apiserver's ordinary ones (a few references each) of lookups, in the
// namespace they name as elsewhere. The namespace is the review's: with client authentication (only the apiserver
// connects) it is the one the request is made in, so a tenant's reviews drain only its
// namespaces' shares; without, whoever sends a review chooses it, and a sender naming many
// namespaces is held by the shared bucket alone (docs/architecture.md, "Fresh lookups").
// The buckets are base::TokenBucket on `clock`'s monotonic time (docs/architecture.md, "Injected
// time"). Thread-safe: one mutex guards the buckets and the shares; the clock is read under it.
// Memory: at most LookupLimits::maxShares shares.
class LookupBudget {
 public:
  // `clock` must outlive the budget.
  explicit LookupBudget(LookupLimits limits, base::Clock& clock = base::systemClock());

  enum class Decision { Admitted, TooMany, RateLimited, ShareSpent };
  // For `lookups` lookups of a review in namespace `namespace_`.
  Decision admit(std::string_view namespace_, std::size_t lookups);
  const LookupLimits& limits() const { return limits_; }
  // Namespaces whose share is remembered now (at most limits().maxShares).
  std::size_t shares() const;

 private:
  struct Share {
    base::TokenBucket bucket;
    std::list<std::string>::iterator recent;  // its entry in recent_
  };
  Share& shareOf(std::string_view namespace_, base::Clock::MonotonicTime now);

  const LookupLimits limits_;
  const double reserve_;
  const double shareRate_;
  const double shareReserve_;
  const double shareBurst_;
  base::Clock& clock_;
  mutable std::mutex mutex_;
  base::TokenBucket bucket_;                       // guarded by mutex_
  std::unordered_map<std::string, Share> shares_;  // guarded by mutex_; at most limits_.maxShares
  std::list<std::string> recent_;                  // guarded by mutex_; shares_'s keys, most recent first
};

// Looks every reference up, the first on the calling thread and the others on `pool`, and waits
// until `timeout` has passed at most. A lookup still running or queued then is unknown; a running
// one is left to finish on its own (it owns everything it touches). A lookup the pool refuses is
// unknown at once.
ReferenceStates fetchReferences(const ObjectGetter& get, LookupPool& pool, const std::string& namespace_,
                                const std::vector<core::Reference>& refs, std::chrono::milliseconds timeout);

// The production getter: a GET through `client` (which must outlive every call, including those
// still running after their deadline): metadata-only, except for the kinds `contentAware` reads,
// which are read whole, hashed with the key `digestKey` holds (core::objectStateFromObject) and
// dropped before the getter returns. While `digestKey` holds no key yet, such a lookup is unknown
// before any request: no patch, the record is left to the controller (docs/architecture.md, "Keyed
// digests"). `digestKey` must outlive every call too.
ObjectGetter apiGetter(kube::Client& client, core::ContentAwareness contentAware,
                       const kube::DigestKeyHolder& digestKey);

// A ReferenceFetcher for handleAdmissionReview over `get` with `timeout`; `pool` must outlive it.
// With `budget`, each review is first admitted by it; with `metrics`, every lookup made is counted
// (restarter_webhook_lookups_total) and every review refused (restarter_webhook_lookup_refusals_total).
// Both must outlive the fetcher.
ReferenceFetcher makeFetcher(ObjectGetter get, LookupPool& pool, std::chrono::milliseconds timeout,
                             LookupBudget* budget = nullptr, Metrics* metrics = nullptr);

}  // namespace restarter::webhook
