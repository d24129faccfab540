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

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "restarter/core/annotations.hpp"
#include "restarter/core/content.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/digest_key.hpp"
#include "restarter/webhook/admission.hpp"

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
ReferenceFetcher makeFetcher(ObjectGetter get, LookupPool& pool, std::chrono::milliseconds timeout);

}  // namespace restarter::webhook
