#include "controller_impl.hpp"

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "restarter/core/constants.hpp"

// The wiring half of the controller (controller_impl.hpp): caches, the reconciler table's rows
// (reconciler_table.hpp: each reconciler, its queue, its watches), reflectors. Everything here runs
// once, in the constructor, before any thread starts, except the handlers and transforms it
// installs (reflector threads) and the watches' mappers.

namespace restarter::controller {

using nlohmann::json;

namespace {

// Objects per list page, or per batch a streaming list stages (cache/reflector.hpp). Each page is
// parsed whole before its objects become compact cache
// entries, and the entries made meanwhile sit between the page's freed nodes: a smaller page
// leaves smaller holes behind the initial sync (client-go's 500 is tuned for fewer requests).
constexpr std::int64_t kListPageSize = 100;
// Objects per page where ConfigMaps or Secrets are listed whole (--content-aware): a page is held
// whole before its objects are hashed and slimmed, and one object may be ~1 MiB (etcd's limit),
// so a page costs at most ~25 MiB, not ~100.
constexpr std::int64_t kContentListPageSize = 25;

}  // namespace

NamespaceCaches* Controller::Impl::cachesFor(std::string_view ns) const {
  for (const auto& entry : caches) {
    if (entry->namespace_.empty() || entry->namespace_ == ns) return entry.get();
  }
  return nullptr;
}

bool Controller::Impl::referenced(const NamespaceCaches& ns, const std::string& index,
                                  std::string_view key) const {
  const std::string value(key);
  for (const auto& [kind, store] : ns.workloads) {
    if (store->hasIndexed(index, value)) return true;
  }
  return false;
}

core::Result<cache::MetaPtr> Controller::Impl::loadReferenced(NamespaceCaches& ns, core::RefKind kind,
                                                              std::string_view namespace_,
                                                              std::string_view name, std::stop_token stop) {
  const bool configMap = kind == core::RefKind::ConfigMap;
  cache::MetaStore& store = configMap ? ns.configMaps : ns.secrets;
  const kube::ResourceRef resource = configMap ? kube::resources::configMaps() : kube::resources::secrets();
  const std::string object = std::string(namespace_) + "/" + std::string(name);
  if (!referenceLoads.acquire(stop))
    return core::makeError(core::ErrorKind::Unavailable,
                           "stopping before reading " + resource.plural + " " + object);
  // The same form as the reflector's (addReferencedReflector): metadata only unless the content
  // is read; the store's entry maker slims it (and hashes the content it reads).
  const bool content = core::readsContent(options.contentAware, kind);
  auto read = client.get(resource, namespace_, name, kube::GetOptions{!content});
  if (!read) {
    if (read.error().kind == core::ErrorKind::NotFound) {
      metrics.referenceLoads.with({resource.plural, "absent"}).inc();
      return cache::MetaPtr();
    }
    metrics.referenceLoads.with({resource.plural, "error"}).inc();
    return std::move(read).error().withContext("reading " + resource.plural + " " + object);
  }
  auto entry = store.promote(std::move(*read));
  metrics.referenceLoads.with({resource.plural, entry ? (*entry ? "loaded" : "absent") : "error"}).inc();
  if (entry && *entry)
    logger.debug("read a newly referenced object", {{"resource", resource.plural}, {"object", object}});
  return entry;
}

// Counts and logs (debug) an update that changed no content: same uid, new resourceVersion, the
// same digest. Nothing is written for it; whether a workload still rolls (no digest recorded
// yet: migration) is the reconcile's decision, which it logs itself.
void Controller::Impl::noteContentUnchanged(const char* index, const cache::ObjectMeta& before,
                                            const cache::ObjectMeta& after) {
  if (!before.contentDigest || !after.contentDigest || *before.contentDigest != *after.contentDigest ||
      before.uid != after.uid || before.resourceVersion == after.resourceVersion) {
    return;
  }
  const std::string resource = std::string(index) + "s";  // "configmaps", "secrets"
  metrics.contentUnchanged.with({resource}).inc();
  logger.debug("metadata-only change", {{"resource", resource},
                                        {"object", cache::objectKey(after)},
                                        {"uid", after.uid.str()},
                                        {"resourceVersionBefore", before.resourceVersion},
                                        {"resourceVersion", after.resourceVersion}});
}

ReconcilerParts Controller::Impl::reconcilerParts() {
  return ReconcilerParts{.context = context,
                         .cachesFor = [this](std::string_view ns) { return cachesFor(ns); },
                         .referenceLoader = [this](NamespaceCaches& ns) -> ReferenceLoader {
                           return [this, &ns](core::RefKind kind, std::string_view namespace_,
                                              std::string_view name, std::stop_token stop) {
                             return loadReferenced(ns, kind, namespace_, name, stop);
                           };
                         },
                         .rollEvictor = *rollEvictor,
                         .onDeleteReadyTimeout = options.onDeleteReadyTimeout,
                         .debounce = options.debounce,
                         .workers = options.workersPerReconciler};
}

void Controller::Impl::setUp() {
  kinds = enabledWorkloadResources(options.argoRollouts);
  std::vector<std::string> namespaces = options.namespaces;
  if (namespaces.empty()) namespaces.push_back("");
  for (const std::string& ns : namespaces) {
    auto entry = std::make_unique<NamespaceCaches>();
    entry->namespace_ = ns;
    for (const WorkloadResource& kind : kinds) {
      auto store = std::make_unique<cache::PackedStore>();
      store->setEntryMaker([selection = options.selection](json&& object) {
        return workloadEntry(std::move(object), selection);
      });
      store->addIndex(kConfigMapIndex, packedReferenceIndex(core::RefKind::ConfigMap, options.selection));
      store->addIndex(kSecretIndex, packedReferenceIndex(core::RefKind::Secret, options.selection));
      entry->workloads.emplace(kind.name, std::move(store));
    }
    caches.push_back(std::move(entry));
  }

  // Every row of the reconciler table: its reconciler, its queue and (below, per namespace) its
  // watches.
  rollEvictor = std::make_unique<Evictor>(context);
  std::vector<ReconcilerRow> table = reconcilerTable(kinds, reconcilerParts());
  std::vector<std::pair<Reconciler*, std::vector<WatchOn>>> watches;
  for (ReconcilerRow& row : table) {
    std::unique_ptr<Reconciler> reconciler = row.make();
    queues.add(*reconciler, row.workers);
    watches.emplace_back(reconciler.get(), std::move(row.watches));
    reconcilers.emplace(row.name, std::move(reconciler));
  }

  const Enqueue enqueue = [this](const QueueKey& key, milliseconds delay, QueueReason reason) {
    queues.enqueue(key, reason, delay);
  };
  for (const auto& entry : caches) {
    NamespaceCaches& c = *entry;
    // Only the ConfigMaps and Secrets a workload references are kept as entries.
    for (auto [store, index] :
         {std::pair{&c.configMaps, kConfigMapIndex}, std::pair{&c.secrets, kSecretIndex}}) {
      store->setRetention([this, &c, indexName = std::string(index)](std::string_view key) {
        return referenced(c, indexName, key);
      });
    }
    // Not a watch: counts and logs the metadata-only updates of the objects whose content is read.
    for (auto [store, index] :
         {std::pair{&c.configMaps, kConfigMapIndex}, std::pair{&c.secrets, kSecretIndex}}) {
      store->addHandlers(cache::MetaStore::Handlers{
          {},
          [this, indexName = index](const cache::MetaPtr& before, const cache::MetaPtr& after) {
            noteContentUnchanged(indexName, *before, *after);
          },
          {}});
    }
    for (const auto& [reconciler, rows] : watches) {
      for (const WatchOn& watch : rows) watch(c, *reconciler, enqueue);
    }

    // Reloader's annotations are annotations, which no selector can ask for: with them every
    // workload is listed, and those not opted in are kept as stubs (docs/architecture.md,
    // "Reloader annotations").
    const bool reloader = options.selection.reloaderAnnotations;
    for (const WorkloadResource& kind : kinds) {
      addReflector(kind.resource, c.namespace_, reloader ? std::string() : std::string(core::kEnabledSelector),
                   false, *c.workloads.at(kind.name), nullptr, kListPageSize);
      if (kind.crd) reflectors.back().crd = kind.resource;
    }
    addReferencedReflector(kube::resources::configMaps(), core::RefKind::ConfigMap, c.namespace_, c.configMaps);
    addReferencedReflector(kube::resources::secrets(), core::RefKind::Secret, c.namespace_, c.secrets);
    addReflector(kube::resources::pods(), c.namespace_, std::string(core::kEnabledSelector), true, c.pods,
                 slimPod, kListPageSize);
  }
}

// ConfigMaps or Secrets: metadata-only unless --content-aware reads the kind (then whole objects,
// hashed and slimmed as they arrive: referencedEntry).
void Controller::Impl::addReferencedReflector(const kube::ResourceRef& resource, core::RefKind kind,
                                              const std::string& ns, cache::MetaStore& store) {
  const bool content = core::readsContent(options.contentAware, kind);
  // digestKey is set before run() starts any reflector (and never changes after).
  store.setEntryMaker([kind, content, this](json&& object) {
    return referencedEntry(std::move(object), kind, content ? &*digestKey : nullptr);
  });
  addReflector(resource, ns, "", !content, store, nullptr, content ? kContentListPageSize : kListPageSize);
  reflectors.back().afterWorkloads = true;
}

void Controller::Impl::addReflector(const kube::ResourceRef& resource, const std::string& ns,
                                    const std::string& selector, bool metadataOnly, cache::StoreBase& store,
                                    std::function<void(json&)> slim, std::int64_t pageSize) {
  cache::ReflectorOptions ro;
  ro.resource = resource;
  ro.namespace_ = ns;
  ro.labelSelector = selector;
  ro.metadataOnly = metadataOnly;
  ro.pageSize = pageSize;
  ro.streamingList = true;  // see cache/reflector.hpp: a paged sync grows with the square of the objects
  // Only what the reconcilers read is kept (see slimReferencedObject): managedFields and
  // last-applied-configuration are most of an object's size.
  ro.transform = std::move(slim);
  const std::string plural = resource.plural;
  ro.onError = [this, plural, ns](const core::Error& error) {
    metrics.watchRestarts.with({plural}).inc();
    const obs::LogLevel level = error.kind == core::ErrorKind::Gone ? obs::LogLevel::Info : obs::LogLevel::Warn;
    logger.log(level, "list/watch failed; retrying",
               {{"resource", plural}, {"namespace", ns.empty() ? "*" : ns}, {"error", error.describe()}});
  };
  reflectors.push_back(ReflectorEntry{std::make_unique<cache::Reflector>(client, store, std::move(ro), clock),
                                      &store, plural, std::nullopt, false});
}

}  // namespace restarter::controller
