#pragma once
// The controller's reconcilers, one row each (docs/architecture.md, "Watches and dispatch"): its
// name, how it is made, the watches that queue its keys (watches.hpp) and its share of workers
// (reconciler_queues.hpp), in the manner of controller-runtime's builder (For/Owns/Watches and
// MaxConcurrentReconciles). A new reconciler is one class (reconcile.hpp) and one row in
// reconcilerTable; the controller makes every row's reconciler, gives it its queue and installs
// its watches on every namespace's caches, with no code of its own per reconciler.
//
// Threads: the table is built and its factories called once, by the controller's constructor;
// the watches then run on the reflectors' threads (watches.hpp).

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "restarter/controller/eviction.hpp"
#include "restarter/controller/namespace_caches.hpp"
#include "restarter/controller/reconcile.hpp"
#include "restarter/controller/watches.hpp"
#include "restarter/controller/workload_resources.hpp"

namespace restarter::controller {

// What the rows' factories and watches are made over; every reference outlives the reconcilers.
struct ReconcilerParts {
  ReconcileContext& context;
  // The caches of a namespace; nullptr: not watched.
  std::function<NamespaceCaches*(std::string_view namespace_)> cachesFor;
  // Reads an unloaded object a workload of `ns` came to reference (workload_resources.hpp).
  std::function<ReferenceLoader(NamespaceCaches& ns)> referenceLoader;
  Evictor& rollEvictor;  // the OnDelete rolls' evictions
  std::chrono::seconds onDeleteReadyTimeout;
  // How long a workload's key waits after a change of it or of what it references (the debounce).
  milliseconds debounce{0};
  // Each reconciler's workers (ControllerOptions::workersPerReconciler).
  int workers = 1;
};

// One watch of a reconciler over one namespace's caches: installs its row (watches.hpp) on a store
// of `ns`, queuing `reconciler`'s keys through `enqueue`.
using WatchOn = std::function<void(NamespaceCaches& ns, Reconciler& reconciler, const Enqueue& enqueue)>;

struct ReconcilerRow {
  std::string name;                                   // the reconciler's name() (metrics, logs)
  std::function<std::unique_ptr<Reconciler>()> make;  // called once
  std::vector<WatchOn> watches;                       // at least one: nothing else queues its keys
  int workers = 1;                                    // its queue's workers
};

// Every reconciler for `kinds` (enabledWorkloadResources): per kind its workload restarter and, for
// the kinds with the OnDelete strategy, its roll; then pod expiry.
std::vector<ReconcilerRow> reconcilerTable(const std::vector<WorkloadResource>& kinds,
                                           const ReconcilerParts& parts);

}  // namespace restarter::controller
