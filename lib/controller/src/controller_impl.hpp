#pragma once
// Controller::Impl, shared by the controller's two halves (docs/architecture.md, "Watches and
// dispatch"): controller_wiring.cpp builds the caches, the reconcilers with their queues and
// watches (each a row of reconciler_table.hpp) and the reflectors (setUp, once, in the
// constructor, before any thread starts); controller.cpp runs them (run: the digest key, the
// reflectors, the workers, leader election) and dispatches each key (process).
//
// Ownership and threads: Impl owns the caches, the reconcilers and the reflectors for the
// controller's life; none is added or removed after setUp. The stores lock themselves
// (cache/store.hpp), the queues and the rate limiters lock themselves (reconciler_queues.hpp,
// rate_limiter.hpp), as do the rollout slots (rollout_slots.hpp), each reconciler locks its own
// memory; Impl's one lock, keyProblemMutex, guards keyProblem (written by run(), read by
// /readyz's threads). digestKey is written by run() before any reflector or worker starts and
// read-only after.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "restarter/cache/reflector.hpp"
#include "restarter/cache/store.hpp"
#include "restarter/controller/controller.hpp"
#include "restarter/controller/namespace_caches.hpp"
#include "restarter/controller/rate_limiter.hpp"
#include "restarter/controller/reconciler_queues.hpp"
#include "restarter/controller/reconciler_table.hpp"
#include "restarter/controller/rollout_slots.hpp"
#include "restarter/controller/workload_resources.hpp"

namespace restarter::controller {

// The reads of unloaded objects (loadReferenced): a new reference costs one GET, at most this many
// a second with this many at once after a quiet spell (docs/architecture.md, "Memory that follows
// references"); a worker waits for its turn.
inline constexpr double kReferenceLoadsPerSecond = 50;
inline constexpr double kReferenceLoadBurst = 100;

struct Controller::Impl {
  Impl(kube::Client& clientIn, ControllerOptions optionsIn, obs::Logger& loggerIn, obs::Registry& registry,
       base::Clock& clockIn);

  kube::Client& client;
  ControllerOptions options;
  obs::Logger& logger;
  Metrics metrics;
  base::Clock& clock;
  RateLimiter limiter;
  // Paces the reads of unloaded objects a workload came to reference (loadReferenced).
  RateLimiter referenceLoads;
  // Each reconciler's queue and workers (reconciler_queues.hpp), filled by setUp.
  ReconcilerQueues queues;
  // The fleet's rollout slots (--max-concurrent-rollouts); wakes a queued key through `queues`.
  RolloutSlots rolloutSlots;
  ReconcileContext context;

  // The kinds managed (enabledWorkloadResources: Rollouts only with --argo-rollouts).
  std::vector<WorkloadResource> kinds;
  std::vector<std::unique_ptr<NamespaceCaches>> caches;
  // Every row's reconciler (reconciler_table.hpp), by name; the workload restarters' names are
  // their WorkloadResource::name.
  std::map<std::string, std::unique_ptr<Reconciler>> reconcilers;
  std::unique_ptr<Evictor> rollEvictor;
  struct ReflectorEntry {
    std::unique_ptr<cache::Reflector> reflector;
    const cache::StoreBase* store;
    std::string resource;
    // A custom resource's reflector (WorkloadResource::crd): started only once discovery finds
    // the resource served (runCrdReflectors).
    std::optional<kube::ResourceRef> crd;
    // ConfigMaps and Secrets: started once the workload caches have synced, so that their
    // retention (referenced) knows every workload from the first object listed.
    bool afterWorkloads = false;
  };
  std::vector<ReflectorEntry> reflectors;
  std::atomic<bool> synced{false};
  std::atomic<std::uint64_t> reconciled{0};
  // The key of content digests (docs/architecture.md, "Keyed digests"): got or created by run()
  // before any reflector or worker thread starts, read-only after.
  std::optional<core::DigestKey> digestKey;
  // Why run() has no digest key yet (kube::digestKeyAdvice), "" once it has one.
  mutable std::mutex keyProblemMutex;
  std::string keyProblem;
  void setKeyProblem(std::string problem);
  // run()'s wait for the key: gets or creates it, retrying after 2 s doubling up to 60 s, a warning
  // at most once a minute, a Warning Event on an invalid key's Secret; false on stop.
  bool acquireDigestKey(std::stop_token stop);

  // controller_wiring.cpp
  void setUp();
  // What the reconciler table's rows are made over (reconciler_table.hpp).
  ReconcilerParts reconcilerParts();
  NamespaceCaches* cachesFor(std::string_view ns) const;
  // Whether a workload of a synced cache of `ns` references `key` ("<namespace>/<name>") under
  // `index`: the retention of its ConfigMap and Secret stores (docs/architecture.md, "Memory
  // that follows references"). Reflector threads.
  bool referenced(const NamespaceCaches& ns, const std::string& index, std::string_view key) const;
  // ReferenceLoader (workload_resources.hpp) over `ns`'s stores: one GET, at most
  // kReferenceLoadsPerSecond of them (referenceLoads), then promoted into the store.
  core::Result<cache::MetaPtr> loadReferenced(NamespaceCaches& ns, core::RefKind kind,
                                              std::string_view namespace_, std::string_view name,
                                              std::stop_token stop);
  void noteContentUnchanged(const char* index, const cache::ObjectMeta& before, const cache::ObjectMeta& after);
  void addReferencedReflector(const kube::ResourceRef& resource, core::RefKind kind, const std::string& ns,
                              cache::MetaStore& store);
  void addReflector(const kube::ResourceRef& resource, const std::string& ns, const std::string& selector,
                    bool metadataOnly, cache::StoreBase& store, std::function<void(nlohmann::json&)> slim,
                    std::int64_t pageSize);

  // controller.cpp
  // Starts each custom resource reflector whose resource is served now on a thread of `threads`
  // and returns the indexes in `reflectors` of those not served; logs nothing while a resource is
  // simply not served (a discovery error is warned once per distinct message).
  std::vector<std::size_t> startServedCrdReflectors(const std::vector<std::size_t>& candidates,
                                                    std::vector<std::jthread>& threads);
  // Until `stop`: every crdCheckInterval, starts those of `pending` (indexes in `reflectors`)
  // that discovery now finds served; returns when none is left. One discovery request per
  // resource per interval, none once all are found.
  void watchForCrds(std::vector<std::size_t> pending, std::vector<std::jthread>& threads, std::stop_token stop);
  bool crdServed(const kube::ResourceRef& resource);
  std::string lastDiscoveryError;  // watchForCrds' thread only (and run() before it starts)
  // One key a worker took from `queue` (its reconciler's): the reconcile, its metrics and logs, and
  // what the result asks of the queue.
  void process(WorkQueue& queue, const WorkQueue::Taken& taken, std::stop_token stop);
  // A new leader's rollout slots and queue from the caches (RolloutSlots::rebuild), before any
  // worker starts: the rollouts of managed workloads in progress by their status, the workloads
  // whose queued-since annotation says they wait.
  void rebuildRolloutSlots();
  void updateGauges();
};

}  // namespace restarter::controller
