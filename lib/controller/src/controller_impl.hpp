#pragma once
// Controller::Impl, shared by the controller's two halves (docs/architecture.md, "Watches and
// dispatch"): controller_wiring.cpp builds the caches, the reconcilers, the watch table and the
// reflectors (setUp, once, in the constructor, before any thread starts); controller.cpp runs them
// (run: the digest key, the reflectors, the workers, leader election) and dispatches each key
// (process).
//
// Ownership and threads: Impl owns the caches, the reconcilers and the reflectors for the
// controller's life; none is added or removed after setUp. The stores lock themselves
// (cache/store.hpp), the queue and the rate limiters lock themselves (work_queue.hpp,
// rate_limiter.hpp), as do the rollout slots (rollout_slots.hpp), each reconciler locks its own memory; Impl's one lock,
// keyProblemMutex, guards keyProblem (written by run(), read by /readyz's threads). digestKey is written by run() before any reflector or
// worker starts and read-only after.

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
#include "restarter/controller/ondelete.hpp"
#include "restarter/controller/pod_expiry.hpp"
#include "restarter/controller/rate_limiter.hpp"
#include "restarter/controller/rollout_slots.hpp"
#include "restarter/controller/watches.hpp"
#include "restarter/controller/workload.hpp"

namespace restarter::controller {

// The reads of unloaded objects (loadReferenced): a new reference costs one GET, at most this many
// a second with this many at once after a quiet spell (docs/architecture.md, "Memory that follows
// references"); a worker waits for its turn.
inline constexpr double kReferenceLoadsPerSecond = 50;
inline constexpr double kReferenceLoadBurst = 100;

// The caches of one namespace (or of all, with an empty name).
struct NamespaceCaches {
  std::string namespace_;
  std::map<std::string, std::unique_ptr<cache::PackedStore>> workloads;  // by WorkloadResource::name
  cache::MetaStore configMaps;  // identity and version only (docs/architecture.md, "Metadata only")
  cache::MetaStore secrets;
  cache::Store pods;
};

// The rows of the watch table for one namespace's caches, by store (watches.hpp).
struct WatchTable {
  std::map<std::string, std::vector<Watch<cache::PackedObject>>> workloads;  // by WorkloadResource::name
  std::vector<Watch<cache::ObjectMeta>> configMaps;
  std::vector<Watch<cache::ObjectMeta>> secrets;
  std::vector<Watch<nlohmann::json>> pods;
};

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
  WorkQueue queue;
  // The fleet's rollout slots (--max-concurrent-rollouts); wakes a queued key through `queue`.
  RolloutSlots rolloutSlots;
  ReconcileContext context;

  // The kinds managed (enabledWorkloadResources: Rollouts only with --argo-rollouts).
  std::vector<WorkloadResource> kinds;
  std::vector<std::unique_ptr<NamespaceCaches>> caches;
  // The reconcilers, by WorkloadResource::name (rollers: only the kinds with an OnDelete strategy).
  std::map<std::string, std::unique_ptr<WorkloadReconciler>> workloadReconcilers;
  std::map<std::string, std::unique_ptr<OnDeleteRoller>> rollers;
  std::unique_ptr<PodExpiryReconciler> podReconciler;
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
  void makeReconcilers();
  WatchTable watchTable(NamespaceCaches& ns);
  NamespaceCaches* cachesFor(std::string_view ns) const;
  std::vector<QueueKey> referencing(NamespaceCaches& ns, const char* index, const cache::MetaPtr& object);
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
                              cache::StoreBase& store);
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
  void process(const QueueKey& queued, std::stop_token stop);
  // A new leader's rollout slots and queue from the caches (RolloutSlots::rebuild), before any
  // worker starts: the rollouts of managed workloads in progress by their status, the workloads
  // whose queued-since annotation says they wait.
  void rebuildRolloutSlots();
  void updateGauges();
};

}  // namespace restarter::controller
