#include "restarter/webhook/fetch.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "restarter/base/clock.hpp"

namespace restarter::webhook {

// ---- LookupPool -------------------------------------------------------------------------------

struct LookupPool::Impl {
  struct Queued {
    Job job;
    std::chrono::steady_clock::time_point deadline;
  };
  std::size_t maxQueued;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<Queued> queue;
  bool stopping = false;
  std::vector<std::thread> threads;
  std::atomic<std::uint64_t> refused{0};
  std::atomic<std::uint64_t> expired{0};

  void work() {
    for (;;) {
      Queued next;
      {
        std::unique_lock<std::mutex> lock(mutex);
        wake.wait(lock, [&] { return stopping || !queue.empty(); });
        if (stopping) return;
        next = std::move(queue.front());
        queue.pop_front();
      }
      const bool late = base::systemClock().monotonicNow() >= next.deadline;
      if (late) expired.fetch_add(1, std::memory_order_relaxed);
      next.job(late);
    }
  }
};

LookupPool::LookupPool(std::size_t threads, std::size_t maxQueued) : impl_(std::make_unique<Impl>()) {
  impl_->maxQueued = maxQueued;
  for (std::size_t i = 0; i < threads; ++i) {
    try {
      impl_->threads.emplace_back([impl = impl_.get()] { impl->work(); });
    } catch (const std::system_error&) {
      break;  // run with the threads we have (docs/architecture.md, "No exception across modules")
    }
  }
}

LookupPool::~LookupPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  for (auto& thread : impl_->threads) thread.join();
}

bool LookupPool::submit(Job job, std::chrono::steady_clock::time_point deadline) {
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    if (impl_->threads.empty() || impl_->stopping || impl_->queue.size() >= impl_->maxQueued) {
      impl_->refused.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    impl_->queue.push_back(Impl::Queued{std::move(job), deadline});
  }
  impl_->wake.notify_one();
  return true;
}

std::size_t LookupPool::threads() const { return impl_->threads.size(); }
std::uint64_t LookupPool::refused() const { return impl_->refused.load(); }
std::uint64_t LookupPool::expired() const { return impl_->expired.load(); }

// ---- fetchReferences --------------------------------------------------------------------------

namespace {

// Shared by the waiting request and the pool's jobs; the last owner frees it, so a job that
// outlives the deadline writes into memory that is still alive.
struct Pending {
  std::mutex mutex;
  std::condition_variable done;
  std::vector<std::optional<core::ObjectState>> states;
  std::size_t remaining = 0;

  void finish(std::size_t index, core::ObjectState state) {
    std::lock_guard<std::mutex> lock(mutex);
    states[index] = std::move(state);
    if (--remaining == 0) done.notify_all();
  }
};

core::ObjectState safeGet(const ObjectGetter& get, const core::Reference& ref, const std::string& ns) {
  try {
    return get(ref.kind, ns, ref.name);
  } catch (const std::exception& e) {
    return core::ObjectState::unknown(std::string("lookup failed: ") + e.what());
  } catch (...) {
    return core::ObjectState::unknown("lookup failed");
  }
}

ReferenceStates allUnknown(const std::vector<core::Reference>& refs, const std::string& problem) {
  ReferenceStates states;
  for (const core::Reference& ref : refs) {
    states.emplace(std::pair{ref.kind, ref.name}, core::ObjectState::unknown(problem));
  }
  return states;
}

}  // namespace

// ---- LookupBudget -----------------------------------------------------------------------------

LookupBudget::LookupBudget(LookupLimits limits, base::Clock& clock)
    : limits_(limits),
      reserve_(limits.burst / 10),
      shareRate_(limits.perSecond * limits.share),
      shareReserve_(limits.burst * limits.share / 10),
      shareBurst_(std::min(limits.burst, std::max(limits.burst * limits.share,
                                                  static_cast<double>(limits.maxPerReview) + shareReserve_))),
      clock_(clock),
      bucket_(limits.perSecond, limits.burst, clock.monotonicNow()) {}

std::size_t LookupBudget::shares() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return shares_.size();
}

LookupBudget::Share& LookupBudget::shareOf(std::string_view namespace_, base::Clock::MonotonicTime now) {
  const std::string key(namespace_);
  auto it = shares_.find(key);
  if (it != shares_.end()) {
    Share& share = it->second;
    recent_.splice(recent_.begin(), recent_, share.recent);
    share.bucket.refill(now);
    return share;
  }
  // A namespace not seen (or forgotten) starts full: forgetting the least recent one loses only
  // what it had spent.
  while (!recent_.empty() && shares_.size() >= std::max<std::size_t>(limits_.maxShares, 1)) {
    shares_.erase(recent_.back());
    recent_.pop_back();
  }
  // Either both hold the namespace or neither (an allocation that fails leaves them as they were).
  const auto [inserted, _] =
      shares_.try_emplace(key, Share{base::TokenBucket(shareRate_, shareBurst_, now), {}});
  try {
    recent_.push_front(key);
  } catch (...) {
    shares_.erase(inserted);
    throw;
  }
  Share& share = inserted->second;
  share.recent = recent_.begin();
  return share;
}

LookupBudget::Decision LookupBudget::admit(std::string_view namespace_, std::size_t lookups) {
  if (lookups > limits_.maxPerReview) return Decision::TooMany;
  const double wanted = static_cast<double>(lookups);
  std::lock_guard<std::mutex> lock(mutex_);
  const auto now = clock_.monotonicNow();
  bucket_.refill(now);
  Share* share = nullptr;
  if (limits_.share < 1.0) {
    try {
      share = &shareOf(namespace_, now);
    } catch (const std::bad_alloc&) {
      return Decision::ShareSpent;  // no memory to remember the namespace: nothing looked up
    }
  }
  if (share != nullptr && !share->bucket.covers(wanted, wanted > shareReserve_ ? shareReserve_ : 0.0))
    return Decision::ShareSpent;
  if (!bucket_.covers(wanted, wanted > reserve_ ? reserve_ : 0.0)) return Decision::RateLimited;
  bucket_.spend(wanted);
  if (share != nullptr) share->bucket.spend(wanted);
  return Decision::Admitted;
}

// ---- fetchReferences --------------------------------------------------------------------------

ReferenceStates fetchReferences(const ObjectGetter& get, LookupPool& pool, const std::string& namespace_,
                                const std::vector<core::Reference>& refs, std::chrono::milliseconds timeout) {
  // Never a lookup URL with a path segment the caller chose beyond a valid name (`.`, `..`, `/`).
  if (!core::isValidNamespaceName(namespace_)) {
    return allUnknown(refs, "the namespace " + core::shownName(namespace_) + " is not a valid namespace name");
  }
  const auto deadline = base::systemClock().monotonicNow() + timeout;
  const std::string late = "no answer within " + std::to_string(timeout.count()) + " ms";
  auto pending = std::make_shared<Pending>();
  pending->states.resize(refs.size());
  pending->remaining = refs.size();
  // No object can have an invalid name (core/references.hpp, which already leaves them out).
  for (std::size_t i = 0; i < refs.size(); ++i) {
    if (!core::isValidObjectName(refs[i].name)) pending->finish(i, core::ObjectState::absent());
  }
  for (std::size_t i = 1; i < refs.size(); ++i) {
    if (!core::isValidObjectName(refs[i].name)) continue;
    bool queued = false;
    try {
      queued = pool.submit(
          [pending, get, ref = refs[i], namespace_, i, late](bool expired) {
            pending->finish(i, expired ? core::ObjectState::unknown(late) : safeGet(get, ref, namespace_));
          },
          deadline);
    } catch (const std::bad_alloc&) {
      queued = false;
    }
    if (!queued) {
      pending->finish(i,
                      core::ObjectState::unknown("too many lookups at once (" + std::to_string(pool.threads()) +
                                                 " threads busy, queue full)"));
    }
  }
  if (!refs.empty() && core::isValidObjectName(refs[0].name))
    pending->finish(0, safeGet(get, refs[0], namespace_));

  ReferenceStates states;
  std::unique_lock<std::mutex> lock(pending->mutex);
  pending->done.wait_until(lock, deadline, [&] { return pending->remaining == 0; });
  for (std::size_t i = 0; i < refs.size(); ++i) {
    core::ObjectState state = pending->states[i] ? *pending->states[i] : core::ObjectState::unknown(late);
    states.emplace(std::pair{refs[i].kind, refs[i].name}, std::move(state));
  }
  return states;
}

ObjectGetter apiGetter(kube::Client& client, core::ContentAwareness contentAware,
                       const kube::DigestKeyHolder& digestKey) {
  return
      [&client, contentAware, &digestKey](core::RefKind kind, const std::string& ns, const std::string& name) {
        const kube::ResourceRef ref =
            kind == core::RefKind::ConfigMap ? kube::resources::configMaps() : kube::resources::secrets();
        const bool readContent = core::readsContent(contentAware, kind);
        // No digest without the key: an unkeyed one would leak, none would roll (fail open instead).
        const std::shared_ptr<const core::DigestKey> key = readContent ? digestKey.get() : nullptr;
        if (readContent && key == nullptr)
          return core::ObjectState::unknown("the digest key is not loaded yet");
        auto object = client.get(ref, ns, name, kube::GetOptions{/*metadataOnly=*/!readContent});
        if (!object) {
          if (object.error().kind == core::ErrorKind::NotFound) return core::ObjectState::absent();
          return core::ObjectState::unknown(object.error().describe());
        }
        auto state = core::objectStateFromObject(*object, kind, readContent, key.get());
        if (!state) return core::ObjectState::unknown(state.error().describe());
        return std::move(state).value();
      };
}

ReferenceFetcher makeFetcher(ObjectGetter get, LookupPool& pool, std::chrono::milliseconds timeout,
                             LookupBudget* budget, Metrics* metrics) {
  if (metrics != nullptr) {
    get = [inner = std::move(get), metrics](core::RefKind kind, const std::string& ns,
                                            const std::string& name) {
      metrics->lookups.with().inc();
      return inner(kind, ns, name);
    };
  }
  return [get = std::move(get), &pool, timeout, budget, metrics](const std::string& ns,
                                                                 const std::vector<core::Reference>& refs) {
    const auto decision = budget == nullptr ? LookupBudget::Decision::Admitted : budget->admit(ns, refs.size());
    // Each refusal's reason is short enough for the warning to show it whole (admission.cpp).
    switch (decision) {
      case LookupBudget::Decision::Admitted: break;
      case LookupBudget::Decision::TooMany:
        if (metrics != nullptr) metrics->lookupRefusals.with({"per-review-cap"}).inc();
        return allUnknown(refs, std::string(kLookupRefusedTooMany));
      case LookupBudget::Decision::RateLimited:
        if (metrics != nullptr) metrics->lookupRefusals.with({"rate-limit"}).inc();
        return allUnknown(refs, std::string(kLookupRefusedRate));
      case LookupBudget::Decision::ShareSpent:
        if (metrics != nullptr) metrics->lookupRefusals.with({"namespace-share"}).inc();
        return allUnknown(refs, std::string(kLookupRefusedShare));
    }
    return fetchReferences(get, pool, ns, refs, timeout);
  };
}

}  // namespace restarter::webhook
