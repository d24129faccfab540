#include "restarter/controller/reconciler_table.hpp"

#include <optional>
#include <utility>

#include "restarter/controller/ondelete.hpp"
#include "restarter/controller/pod_expiry.hpp"
#include "restarter/controller/predicates.hpp"
#include "restarter/controller/workload.hpp"

namespace restarter::controller {

namespace {

constexpr milliseconds kAtOnce{0};

// `row` over the workloads of `kind` (ns.workloads), queuing the reconciler's keys.
WatchOn onWorkloads(std::string kind, Watch<cache::PackedObject> row) {
  return [kind = std::move(kind), row = std::move(row)](NamespaceCaches& ns, Reconciler& reconciler,
                                                        const Enqueue& enqueue) {
    Watch<cache::PackedObject> mine = row;
    mine.reconciler = &reconciler;
    installWatch(*ns.workloads.at(kind), std::move(mine), enqueue);
  };
}

// A ConfigMap or Secret (`store`, its workloads indexed under `index`) queues, after `delay`, the
// workloads of `kind` whose templates reference it.
WatchOn onReferences(std::string kind, cache::MetaStore NamespaceCaches::*store, const char* index,
                     milliseconds delay) {
  return [kind = std::move(kind), store, index, delay](NamespaceCaches& ns, Reconciler& reconciler,
                                                       const Enqueue& enqueue) {
    const cache::PackedStore& workloads = *ns.workloads.at(kind);
    auto referencing = [&workloads, &reconciler, index](const cache::MetaPtr& object) {
      std::vector<QueueKey> keys;
      auto found = workloads.byIndex(index, cache::objectKey(*object));
      if (!found) return keys;  // not synced yet: its initial list queues every workload
      for (const cache::PackedPtr& workload : *found)
        keys.push_back(QueueKey{&reconciler, objectNameOf(*workload)});
      return keys;
    };
    installWatch(ns.*store, Watch<cache::ObjectMeta>{.delay = delay, .deleteDelay = delay, .map = referencing},
                 enqueue);
  };
}

// `row` over the pods (ns.pods), queuing the reconciler's keys.
WatchOn onPods(Watch<nlohmann::json> row) {
  return [row = std::move(row)](NamespaceCaches& ns, Reconciler& reconciler, const Enqueue& enqueue) {
    Watch<nlohmann::json> mine = row;
    mine.reconciler = &reconciler;
    installWatch(ns.pods, std::move(mine), enqueue);
  };
}

// A workload update worth a look by its restarter: its template, ignore annotations or identity
// (workloadChanged), or the end of a rollout that held a change (rolloutFinished).
std::function<bool(const cache::PackedPtr&, const cache::PackedPtr&)> restarterInputChanged(
    core::WorkloadKind kind) {
  return [kind](const cache::PackedPtr& before, const cache::PackedPtr& after) {
    return workloadChanged(before, after) || rolloutFinished(kind, before, after);
  };
}

std::unique_ptr<Reconciler> makeWorkloadReconciler(const WorkloadResource& kind, const ReconcilerParts& parts) {
  return std::make_unique<WorkloadReconciler>(
      kind,
      [parts, name = kind.name](std::string_view ns) -> std::optional<WorkloadCaches> {
        NamespaceCaches* c = parts.cachesFor(ns);
        if (c == nullptr) return std::nullopt;
        const auto deployments = c->workloads.find("deployment");
        return WorkloadCaches{c->workloads.at(name).get(), &c->configMaps, &c->secrets,
                              deployments == c->workloads.end() ? nullptr : deployments->second.get(),
                              parts.referenceLoader(*c)};
      },
      parts.context);
}

std::unique_ptr<Reconciler> makeOnDeleteRoller(const WorkloadResource& kind, const ReconcilerParts& parts) {
  return std::make_unique<OnDeleteRoller>(
      kind,
      [parts, name = kind.name](std::string_view ns) -> const cache::PackedStore* {
        NamespaceCaches* c = parts.cachesFor(ns);
        return c == nullptr ? nullptr : c->workloads.at(name).get();
      },
      parts.context, parts.rollEvictor, parts.onDeleteReadyTimeout);
}

std::unique_ptr<Reconciler> makePodExpiryReconciler(const ReconcilerParts& parts) {
  return std::make_unique<PodExpiryReconciler>(
      [parts](std::string_view ns) -> const cache::Store* {
        NamespaceCaches* c = parts.cachesFor(ns);
        return c == nullptr ? nullptr : &c->pods;
      },
      parts.context);
}

}  // namespace

// Workload keys wait out the debounce after an add or update; a delete, the OnDelete roll and pod
// expiry are queued at once.
std::vector<ReconcilerRow> reconcilerTable(const std::vector<WorkloadResource>& kinds,
                                           const ReconcilerParts& parts) {
  std::vector<ReconcilerRow> table;
  for (const WorkloadResource& kind : kinds) {
    // The workload restarter: its workload, and each ConfigMap or Secret its template references.
    table.push_back(
        {.name = kind.name,
         .make = [parts, kind] { return makeWorkloadReconciler(kind, parts); },
         .watches = {onWorkloads(kind.name, {.delay = parts.debounce,
                                             .deleteDelay = kAtOnce,
                                             .updated = restarterInputChanged(kind.coreKind)}),
                     onReferences(kind.name, &NamespaceCaches::configMaps, kConfigMapIndex, parts.debounce),
                     onReferences(kind.name, &NamespaceCaches::secrets, kSecretIndex, parts.debounce)},
         .workers = parts.workers});
    // The OnDelete roll of the kinds that have the strategy: any change but the resourceVersion.
    if (kind.hasOnDelete)
      table.push_back(
          {.name = "ondelete-" + kind.name,
           .make = [parts, kind] { return makeOnDeleteRoller(kind, parts); },
           .watches = {onWorkloads(kind.name, {.deleteDelay = kAtOnce, .updated = rollInputChanged})},
           .workers = parts.workers});
  }
  // Pod expiry: a pod's expires-at annotations or identity; a deleted pod needs nothing.
  table.push_back({.name = "pod-expiry",
                   .make = [parts] { return makePodExpiryReconciler(parts); },
                   .watches = {onPods({.deleteDelay = std::nullopt, .updated = podChanged})},
                   .workers = parts.workers});
  return table;
}

}  // namespace restarter::controller
