#include "restarter/controller/controller.hpp"

#include <functional>
#include <map>
#include <optional>
#include <thread>

#include "restarter/cache/reflector.hpp"
#include "restarter/cache/store.hpp"
#include "restarter/controller/ondelete.hpp"
#include "restarter/controller/pod_expiry.hpp"
#include "restarter/controller/workload.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/rollout.hpp"
#include "restarter/core/write_plan.hpp"

namespace restarter::controller {

using cache::ObjectPtr;
using nlohmann::json;

Metrics::Metrics(obs::Registry& registry)
    : reconciles(registry.counter("restarter_controller_reconciles_total",
                                  "Reconciles run, by controller and result.", {"controller", "result"})),
      errors(registry.counter("restarter_controller_reconcile_errors_total",
                              "Reconciles that failed, by controller and error kind.",
                              {"controller", "error"})),
      writes(registry.counter("restarter_controller_writes_total",
                              "API writes made, by resource and operation.", {"resource", "operation"})),
      restarts(registry.counter("restarter_controller_restarts_triggered_total",
                                "Workload rollouts triggered by an annotation change, by kind.", {"kind"})),
      dryRunRestarts(registry.counter("restarter_controller_dry_run_restarts_total",
                                      "Workload rollouts that --dry-run announced but did not make.",
                                      {"kind"})),
      rolloutsHeld(registry.counter("restarter_controller_rollouts_held_total",
                                    "Workload rollouts held back by --min-rollout-interval (one per "
                                    "hold, however many changes it merges), by kind.",
                                    {"kind"})),
      contentUnchanged(registry.counter("restarter_controller_content_unchanged_total",
                                        "Updates of a ConfigMap or Secret whose content did not "
                                        "change (metadata-only), by resource; only for the kinds "
                                        "whose content is read (--content-aware).",
                                        {"resource"})),
      evictions(registry.counter("restarter_controller_evictions_total",
                                 "Pod evictions for expired credentials, by result "
                                 "(evicted, refused, dry_run).",
                                 {"result"})),
      rollEvictions(registry.counter("restarter_controller_roll_evictions_total",
                                     "Evictions of the OnDelete roll, by workload kind and result "
                                     "(evicted, refused, gone, dry_run).",
                                     {"kind", "result"})),
      outdatedPods(registry.gauge("restarter_controller_outdated_pods",
                                  "Pods of labeled OnDelete workloads on an outdated revision, by kind.",
                                  {"kind"})),
      queueDepth(registry.gauge("restarter_controller_queue_depth",
                                "Keys waiting in the work queue or being processed.")),
      watchRestarts(registry.counter("restarter_controller_watch_restarts_total",
                                     "List or watch failures after which a cache re-watched or "
                                     "relisted, by resource.",
                                     {"resource"})),
      cacheObjects(registry.gauge("restarter_controller_cache_objects",
                                  "Objects held in the caches, by resource.", {"resource"})),
      leader(registry.gauge("restarter_controller_leader",
                            "1 while this replica does the work (leader, or no leader election).")),
      reconcileDuration(registry.histogram("restarter_controller_reconcile_duration_seconds",
                                           "Time spent in one reconcile, by controller.", {"controller"})) {}

namespace {

// Keeps only the fields of `object` (when it is an object) named in `keep`; drops every other.
void keepFields(json& object, const std::vector<const char*>& keep) {
  if (!object.is_object()) return;
  json kept = json::object();
  for (const char* name : keep) {
    auto it = object.find(name);
    if (it != object.end()) kept[name] = std::move(*it);
  }
  object = std::move(kept);
}

void keepPrefixed(json& map, const std::vector<std::string_view>& prefixes) {
  if (!map.is_object()) return;
  json kept = json::object();
  for (auto& [key, value] : map.items()) {
    for (std::string_view prefix : prefixes) {
      if (std::string_view(key).substr(0, prefix.size()) == prefix) {
        kept[key] = std::move(value);
        break;
      }
    }
  }
  map = std::move(kept);
}

void slimMetadata(json& object, const std::vector<const char*>& keep) {
  if (!object.is_object()) return;
  auto metadata = object.find("metadata");
  if (metadata == object.end()) return;
  keepFields(*metadata, keep);
}

}  // namespace

void slimReferencedObjectWithDigest(json& object, core::RefKind kind, const core::DigestKey& key) {
  if (!object.is_object()) return;
  std::optional<std::string> digest;
  std::optional<std::string> unkeyed;
  if (auto hashed = core::keyedContentDigest(object, kind, key)) {
    digest = core::formatDigest(*hashed);
    if (auto plain = core::contentDigest(object, kind)) unkeyed = core::formatDigest(*plain);
  }
  slimReferencedObject(object);  // drops data, binaryData, type
  if (digest) object[cache::kContentDigestField] = std::move(*digest);
  if (unkeyed) object[cache::kUnkeyedDigestField] = std::move(*unkeyed);
}

void slimReferencedObject(json& object) {
  if (!object.is_object()) return;
  keepFields(object, {"apiVersion", "kind", "metadata"});
  slimMetadata(object, {"name", "namespace", "uid", "resourceVersion", "labels", "annotations"});
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return;
  if (auto labels = metadata->find("labels"); labels != metadata->end()) {
    keepPrefixed(*labels, {core::kIgnoreLabel});
  }
  if (auto annotations = metadata->find("annotations"); annotations != metadata->end()) {
    keepPrefixed(*annotations, {core::kReloaderMatchAnnotation, core::kReloaderIgnoreAnnotation});
    if (annotations->empty()) metadata->erase(annotations);
  }
}

void slimWorkload(json& object) {
  if (!object.is_object()) return;
  keepFields(object,
             {"apiVersion", "kind", "metadata", "spec", "status", core::kOmittedAnnotationsBytesField.data()});
  slimMetadata(object, {"name", "namespace", "uid", "resourceVersion", "generation", "labels", "annotations"});
  if (auto status = object.find("status"); status != object.end()) {
    // The OnDelete roll's inputs and triggers (ondelete.hpp): pods becoming Ready change these.
    // The rollout hold reads them too (core::rolloutProgressOf, with metadata.generation and
    // spec.replicas and spec.updateStrategy).
    keepFields(*status, {"observedGeneration", "updateRevision", "currentRevision", "replicas", "readyReplicas",
                         "availableReplicas", "updatedReplicas", "currentReplicas", "desiredNumberScheduled",
                         "currentNumberScheduled", "numberReady", "numberAvailable", "numberUnavailable",
                         "updatedNumberScheduled"});
  }
  if (auto metadata = object.find("metadata"); metadata != object.end() && metadata->is_object()) {
    if (auto annotations = metadata->find("annotations"); annotations != metadata->end()) {
      // The size check of a write counts every metadata annotation (core/write_plan.hpp), also
      // those dropped here (a kubectl last-applied-configuration may hold most of the limit).
      const std::size_t before = core::metadataAnnotationsBytes(object);
      keepPrefixed(
          *annotations,
          {core::kIgnoreConfigMapAnnotationPrefix, core::kIgnoreSecretAnnotationPrefix,
           core::kLastRolloutAnnotation, core::kContentDigestsAnnotation, core::kBaselineAnnotation,
           core::kOnDeleteAnnotation, core::kReloaderAutoAnnotation, core::kReloaderConfigMapAutoAnnotation,
           core::kReloaderSecretAutoAnnotation, core::kReloaderSearchAnnotation,
           core::kReloaderConfigMapReloadAnnotation, core::kReloaderSecretReloadAnnotation,
           core::kReloaderConfigMapExcludeAnnotation, core::kReloaderSecretExcludeAnnotation});
      if (const std::size_t omitted = before - core::metadataAnnotationsBytes(object); omitted > 0)
        object[std::string(core::kOmittedAnnotationsBytesField)] = omitted;
    }
  }
  if (auto spec = object.find("spec"); spec != object.end()) {
    keepFields(*spec, {"template", "replicas", "selector", "updateStrategy", "minReadySeconds"});
  }
}

void slimWorkload(json& object, const core::SelectionOptions& selection) {
  if (selection.reloaderAnnotations && object.is_object() &&
      core::workloadManagement(object, selection).by == core::ManagedBy::None) {
    keepFields(object, {"apiVersion", "kind", "metadata"});
    slimMetadata(object, {"name", "namespace", "uid", "resourceVersion"});
    object[kUnmanagedField] = true;
    return;
  }
  slimWorkload(object);
}

void slimPod(json& object) {
  if (!object.is_object()) return;
  keepFields(object, {"apiVersion", "kind", "metadata"});
  slimMetadata(object, {"name", "namespace", "uid", "resourceVersion", "deletionTimestamp", "annotations"});
  if (auto metadata = object.find("metadata"); metadata != object.end() && metadata->is_object()) {
    if (auto annotations = metadata->find("annotations"); annotations != metadata->end()) {
      keepPrefixed(*annotations, {core::kExpiresAtAnnotationPrefix});
    }
  }
}

namespace {

// QueueKey::kind of pod expiry, and the prefix of the OnDelete rollers' ("ondelete-statefulset").
constexpr const char* kPodKind = "pod";
constexpr std::string_view kRollPrefix = "ondelete-";

// Objects per list page, or per batch a streaming list stages (cache/reflector.hpp). Each page is
// parsed whole before its objects become compact cache
// entries, and the entries made meanwhile sit between the page's freed nodes: a smaller page
// leaves smaller holes behind the initial sync (client-go's 500 is tuned for fewer requests).
constexpr std::int64_t kListPageSize = 100;
// Objects per page where ConfigMaps or Secrets are listed whole (--content-aware): a page is held
// whole before its objects are hashed and slimmed, and one object may be ~1 MiB (etcd's limit),
// so a page costs at most ~25 MiB, not ~100.
constexpr std::int64_t kContentListPageSize = 25;

// The caches of one namespace (or of all, with an empty name).
struct NamespaceCaches {
  std::string namespace_;
  std::map<std::string, std::unique_ptr<cache::PackedStore>> workloads;  // by WorkloadKind::name
  cache::MetaStore configMaps;  // identity and version only (docs/architecture.md, "Metadata only")
  cache::MetaStore secrets;
  cache::Store pods;
};

// Whether metadata.<field> is the same (of any type, or absent) in both objects.
bool sameMetadata(const json& before, const json& after, std::string_view field) {
  const json* a = core::valueAt(before, {"metadata", field});
  const json* b = core::valueAt(after, {"metadata", field});
  return a == nullptr || b == nullptr ? a == b : *a == *b;
}

json templateAnnotationsOf(const json& object) {
  if (!object.is_object()) return nullptr;
  const json::json_pointer pointer("/spec/template/metadata/annotations");
  return object.contains(pointer) ? object.at(pointer) : json(nullptr);
}

// A workload update worth a reconcile: its template (generation), its ignore annotations or its
// template annotations changed. Status-only updates (a rollout in progress) are not.
bool workloadChanged(const cache::PackedPtr& beforePacked, const cache::PackedPtr& afterPacked) {
  const json before = beforePacked->unpack();
  const json after = afterPacked->unpack();
  return !sameMetadata(before, after, "generation") || !sameMetadata(before, after, "annotations") ||
         !sameMetadata(before, after, "uid") || templateAnnotationsOf(before) != templateAnnotationsOf(after);
}

// A workload update that finishes its rollout (core::rolloutProgressOf): a change held while that
// rollout was in progress may roll now (docs/architecture.md, "Rollouts rate-limited per workload").
// Status updates are otherwise no reason to reconcile; this one comes once per rollout.
bool rolloutFinished(core::WorkloadKind kind, const cache::PackedPtr& beforePacked,
                     const cache::PackedPtr& afterPacked) {
  return !core::rolloutProgressOf(beforePacked->unpack(), kind).finished &&
         core::rolloutProgressOf(afterPacked->unpack(), kind).finished;
}

// A workload update worth a look by the OnDelete roll: anything but its resourceVersion (the
// slimmed object keeps only what the roll and the restarter read; status changes as pods come
// and go and become Ready).
bool rollInputChanged(const cache::PackedPtr& beforePacked, const cache::PackedPtr& afterPacked) {
  json before = beforePacked->unpack();
  json after = afterPacked->unpack();
  for (json* object : {&before, &after}) {
    if (object->is_object() && object->contains("metadata") && (*object)["metadata"].is_object()) {
      (*object)["metadata"].erase("resourceVersion");
    }
  }
  return before != after;
}

}  // namespace

struct Controller::Impl {
  Impl(kube::Client& clientIn, ControllerOptions optionsIn, obs::Logger& loggerIn, obs::Registry& registry,
       base::Clock& clockIn)
      : client(clientIn),
        options(std::move(optionsIn)),
        logger(loggerIn),
        metrics(registry),
        clock(clockIn),
        limiter(clock, options.writesPerSecond, options.writeBurst),
        queue(clock, cache::BackoffPolicy{milliseconds(500), milliseconds(300'000), 0.5}),
        context{client,
                logger,
                metrics,
                limiter,
                clock,
                options.dryRun,
                "restarter.stackable.tech/controller",
                options.identity,
                options.minRolloutInterval,
                options.selection,
                options.rollOnOptIn,
                {}} {}

  kube::Client& client;
  ControllerOptions options;
  obs::Logger& logger;
  Metrics metrics;
  base::Clock& clock;
  TokenBucket limiter;
  WorkQueue queue;
  ReconcileContext context;

  std::vector<std::unique_ptr<NamespaceCaches>> caches;
  std::map<std::string, std::unique_ptr<WorkloadReconciler>> workloadReconcilers;
  std::unique_ptr<PodExpiryReconciler> podReconciler;
  std::unique_ptr<Evictor> rollEvictor;
  std::map<std::string, std::unique_ptr<OnDeleteRoller>> rollers;  // by queue kind "ondelete-<kind>"
  struct ReflectorEntry {
    std::unique_ptr<cache::Reflector> reflector;
    const cache::StoreBase* store;
    std::string resource;
  };
  std::vector<ReflectorEntry> reflectors;
  std::atomic<bool> synced{false};
  std::atomic<std::uint64_t> reconciled{0};
  // The key of content digests (docs/architecture.md, "Keyed digests"): got or created by run()
  // before any reflector or worker thread starts, read-only after.
  std::optional<core::DigestKey> digestKey;

  // StatefulSets and DaemonSets have an OnDelete strategy; Deployments do not.
  static bool rollsKind(const WorkloadKind& kind) {
    return kind.resource.kind == "StatefulSet" || kind.resource.kind == "DaemonSet";
  }

  NamespaceCaches* cachesFor(std::string_view ns) const {
    for (const auto& entry : caches) {
      if (entry->namespace_.empty() || entry->namespace_ == ns) return entry.get();
    }
    return nullptr;
  }

  static ObjectName nameOf(const cache::ObjectIdentity& object) {
    return {object.namespace_.str(), object.name};
  }
  static ObjectName nameOf(const json& object) {
    return {core::metadataString(object, "namespace"), core::metadataString(object, "name")};
  }

  void enqueueWorkload(const std::string& kind, ObjectName object, milliseconds delay) {
    if (!object.name.empty()) queue.add(QueueKey{kind, std::move(object)}, delay);
  }

  void enqueueReferencing(NamespaceCaches& ns, const char* index, const cache::MetaPtr& object) {
    const std::string key = cache::objectKey(*object);
    for (const auto& [kind, store] : ns.workloads) {
      auto referencing = store->byIndex(index, key);
      if (!referencing) continue;  // not synced yet: its initial list queues every workload
      for (const cache::PackedPtr& workload : *referencing)
        enqueueWorkload(kind, nameOf(*workload), options.debounce);
    }
  }

  // Counts and logs (debug) an update that changed no content: same uid, new resourceVersion, the
  // same digest. Nothing is written for it; whether a workload still rolls (no digest recorded
  // yet: migration) is the reconcile's decision, which it logs itself.
  void noteContentUnchanged(const char* index, const cache::ObjectMeta& before,
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

  void setUp() {
    std::vector<std::string> namespaces = options.namespaces;
    if (namespaces.empty()) namespaces.push_back("");
    for (const std::string& ns : namespaces) {
      auto entry = std::make_unique<NamespaceCaches>();
      entry->namespace_ = ns;
      NamespaceCaches& c = *entry;
      for (const WorkloadKind& kind : workloadKinds()) {
        auto store = std::make_unique<cache::PackedStore>();
        store->addIndex(kConfigMapIndex, packedReferenceIndex(core::RefKind::ConfigMap, options.selection));
        store->addIndex(kSecretIndex, packedReferenceIndex(core::RefKind::Secret, options.selection));
        const std::string name = kind.name;
        const std::string roll = rollsKind(kind) ? std::string(kRollPrefix) + kind.name : std::string();
        store->addHandlers(cache::PackedStore::Handlers{
            [this, name, roll](const cache::PackedPtr& o) {
              enqueueWorkload(name, nameOf(*o), options.debounce);
              if (!roll.empty()) enqueueWorkload(roll, nameOf(*o), milliseconds(0));
            },
            [this, name, roll, progressKind = coreKind(kind)](const cache::PackedPtr& before,
                                                              const cache::PackedPtr& after) {
              if (workloadChanged(before, after) || rolloutFinished(progressKind, before, after)) {
                enqueueWorkload(name, nameOf(*after), options.debounce);
              }
              if (!roll.empty() && rollInputChanged(before, after)) {
                enqueueWorkload(roll, nameOf(*after), milliseconds(0));
              }
            },
            [this, name, roll](const cache::PackedPtr& o) {
              enqueueWorkload(name, nameOf(*o), milliseconds(0));
              if (!roll.empty()) enqueueWorkload(roll, nameOf(*o), milliseconds(0));
            }});
        c.workloads.emplace(kind.name, std::move(store));
      }
      for (auto [store, index] :
           {std::pair{&c.configMaps, kConfigMapIndex}, std::pair{&c.secrets, kSecretIndex}}) {
        const char* indexName = index;
        NamespaceCaches* owner = &c;
        store->addHandlers(cache::MetaStore::Handlers{
            [this, owner, indexName](const cache::MetaPtr& o) { enqueueReferencing(*owner, indexName, o); },
            [this, owner, indexName](const cache::MetaPtr& before, const cache::MetaPtr& after) {
              noteContentUnchanged(indexName, *before, *after);
              enqueueReferencing(*owner, indexName, after);
            },
            [this, owner, indexName](const cache::MetaPtr& o) { enqueueReferencing(*owner, indexName, o); }});
      }
      c.pods.addHandlers(cache::Handlers{
          [this](const ObjectPtr& o) { enqueueWorkload(kPodKind, nameOf(*o), milliseconds(0)); },
          [this](const ObjectPtr& before, const ObjectPtr& after) {
            if (!sameMetadata(*before, *after, "annotations") || !sameMetadata(*before, *after, "uid")) {
              enqueueWorkload(kPodKind, nameOf(*after), milliseconds(0));
            }
          },
          {}});
      caches.push_back(std::move(entry));
    }

    for (const WorkloadKind& kind : workloadKinds()) {
      const std::string name = kind.name;
      workloadReconcilers.emplace(
          kind.name, std::make_unique<WorkloadReconciler>(
                         kind,
                         [this, name](std::string_view ns) -> std::optional<WorkloadCaches> {
                           NamespaceCaches* c = cachesFor(ns);
                           if (c == nullptr) return std::nullopt;
                           return WorkloadCaches{c->workloads.at(name).get(), &c->configMaps, &c->secrets};
                         },
                         context));
    }
    rollEvictor = std::make_unique<Evictor>(context);
    for (const WorkloadKind& kind : workloadKinds()) {
      if (!rollsKind(kind)) continue;
      const std::string name = kind.name;
      rollers.emplace(std::string(kRollPrefix) + kind.name,
                      std::make_unique<OnDeleteRoller>(
                          kind,
                          [this, name](std::string_view ns) -> const cache::PackedStore* {
                            NamespaceCaches* c = cachesFor(ns);
                            return c == nullptr ? nullptr : c->workloads.at(name).get();
                          },
                          context, *rollEvictor, options.onDeleteReadyTimeout));
    }
    podReconciler = std::make_unique<PodExpiryReconciler>(
        [this](std::string_view ns) -> const cache::Store* {
          NamespaceCaches* c = cachesFor(ns);
          return c == nullptr ? nullptr : &c->pods;
        },
        context);

    for (const auto& entry : caches) {
      NamespaceCaches& c = *entry;
      // Reloader's annotations are annotations, which no selector can ask for: with them every
      // workload is listed, and those not opted in are kept as stubs (docs/architecture.md,
      // "Reloader annotations").
      const bool reloader = options.selection.reloaderAnnotations;
      for (const WorkloadKind& kind : workloadKinds()) {
        addReflector(kind.resource, c.namespace_,
                     reloader ? std::string() : std::string(core::kEnabledSelector), false,
                     *c.workloads.at(kind.name),
                     [selection = options.selection](json& object) { slimWorkload(object, selection); });
      }
      addReferencedReflector(kube::resources::configMaps(), core::RefKind::ConfigMap, c.namespace_,
                             c.configMaps);
      addReferencedReflector(kube::resources::secrets(), core::RefKind::Secret, c.namespace_, c.secrets);
      addReflector(kube::resources::pods(), c.namespace_, std::string(core::kEnabledSelector), true, c.pods,
                   slimPod);
    }
  }

  // ConfigMaps or Secrets: metadata-only unless --content-aware reads the kind (then whole objects,
  // hashed and slimmed as they arrive).
  void addReferencedReflector(const kube::ResourceRef& resource, core::RefKind kind, const std::string& ns,
                              cache::StoreBase& store) {
    if (!core::readsContent(options.contentAware, kind)) {
      addReflector(resource, ns, "", true, store, slimReferencedObject);
      return;
    }
    // digestKey is set before run() starts any reflector (and never changes after).
    addReflector(
        resource, ns, "", false, store,
        [kind, this](json& object) { slimReferencedObjectWithDigest(object, kind, *digestKey); },
        kContentListPageSize);
  }

  void addReflector(const kube::ResourceRef& resource, const std::string& ns, const std::string& selector,
                    bool metadataOnly, cache::StoreBase& store, std::function<void(json&)> slim,
                    std::int64_t pageSize = kListPageSize) {
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
      const obs::LogLevel level =
          error.kind == core::ErrorKind::Gone ? obs::LogLevel::Info : obs::LogLevel::Warn;
      logger.log(level, "list/watch failed; retrying",
                 {{"resource", plural}, {"namespace", ns.empty() ? "*" : ns}, {"error", error.describe()}});
    };
    reflectors.push_back(ReflectorEntry{std::make_unique<cache::Reflector>(client, store, std::move(ro), clock),
                                        &store, plural});
  }

  void process(const QueueKey& queued, std::stop_token stop) {
    const std::string& kind = queued.kind;
    const std::string key = queued.object.key();
    const auto started = std::chrono::steady_clock::now();
    core::Result<Action> result =
        core::makeError(core::ErrorKind::Internal, "unknown key " + queued.toString());
    if (kind == kPodKind) {
      result = podReconciler->reconcile(queued.object, stop);
    } else if (auto it = workloadReconcilers.find(kind); it != workloadReconcilers.end()) {
      result = it->second->reconcile(queued.object, stop);
    } else if (auto roller = rollers.find(kind); roller != rollers.end()) {
      result = roller->second->reconcile(queued.object, stop);
    }
    const std::string controller = kind == kPodKind ? "pod-expiry" : kind;
    metrics.reconcileDuration.with({controller})
        .observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    if (result) {
      metrics.reconciles.with({controller, "success"}).inc();
      queue.forget(queued);
      if (result->requeueAfter) queue.add(queued, *result->requeueAfter);
      return;
    }
    const core::Error& error = result.error();
    metrics.reconciles.with({controller, "error"}).inc();
    metrics.errors.with({controller, core::errorKindName(error.kind)}).inc();
    RetryDecision decision = retryPolicy(error);
    if (!decision.retry) {
      logger.error("reconcile failed; waiting for the object to change",
                   {{"controller", controller}, {"key", key}, {"error", error.describe()}});
      queue.forget(queued);
      return;
    }
    if (stop.stop_requested()) return;
    const milliseconds delay = queue.addRateLimited(queued, decision.atLeast);
    logger.warn("reconcile failed; retrying", {{"controller", controller},
                                               {"key", key},
                                               {"error", error.describe()},
                                               {"retryIn", std::to_string(delay.count()) + "ms"}});
  }

  void updateGauges() {
    metrics.queueDepth.with().set(static_cast<double>(queue.depth()));
    std::map<std::string, double> sizes;
    for (const ReflectorEntry& entry : reflectors)
      sizes[entry.resource] += static_cast<double>(entry.store->size());
    for (const auto& [resource, size] : sizes) metrics.cacheObjects.with({resource}).set(size);
  }

  bool allSynced() const {
    for (const ReflectorEntry& entry : reflectors) {
      if (!entry.store->synced()) return false;
    }
    return true;
  }
};

Controller::Controller(kube::Client& client, ControllerOptions options, obs::Logger& logger,
                       obs::Registry& registry, base::Clock& clock)
    : impl_(std::make_unique<Impl>(client, std::move(options), logger, registry, clock)) {
  impl_->setUp();
}

Controller::~Controller() = default;

bool Controller::synced() const { return impl_->synced.load(); }

std::uint64_t Controller::reconciled() const { return impl_->reconciled.load(std::memory_order_relaxed); }

core::Status Controller::run(std::stop_token stop) {
  Impl& s = *impl_;
  // No digest is computed before the key is there: get it, or create it (several replicas may
  // start at once: ensureDigestKey reads the winner's key on 409), retrying until a signal.
  const std::string keyName = s.options.digestKeyNamespace + "/" + s.options.digestKeySecret;
  for (;;) {
    auto key = kube::ensureDigestKey(s.client, s.options.digestKeyNamespace, s.options.digestKeySecret);
    if (key) {
      s.digestKey = std::move(*key);
      break;
    }
    s.logger.warn("cannot get or create the digest key; retrying in 2s",
                  {{"secret", keyName}, {"error", key.error().describe()}});
    if (!s.clock.waitFor(milliseconds(2000), stop)) return core::okStatus();
  }
  s.context.digestKeyId = s.digestKey->id();
  s.logger.info("digest key ready", {{"secret", keyName}, {"keyId", s.digestKey->id()}});
  std::vector<std::jthread> reflectorThreads;
  for (auto& entry : s.reflectors) {
    cache::Reflector* reflector = entry.reflector.get();
    reflectorThreads.emplace_back([reflector](std::stop_token token) { reflector->run(token); });
  }
  std::jthread ticker([&s](std::stop_token token) {
    do {
      s.updateGauges();
    } while (s.clock.waitFor(milliseconds(1000), token));
  });
  auto stopCaches = [&] {
    ticker.request_stop();
    for (auto& thread : reflectorThreads) thread.request_stop();
    for (auto& thread : reflectorThreads) thread.join();
  };

  s.logger.info("waiting for caches to sync", {{"caches", std::to_string(s.reflectors.size())}});
  for (const auto& entry : s.reflectors) {
    while (!stop.stop_requested() && !entry.store->waitForSync(milliseconds(1000), stop)) {
    }
  }
  if (stop.stop_requested()) {
    stopCaches();
    return core::okStatus();
  }
  s.synced = true;
  {
    obs::Fields fields;
    for (const auto& entry : s.reflectors)
      fields.push_back({entry.resource, std::to_string(entry.store->size())});
    s.logger.info("caches synced", fields);
  }

  std::unique_ptr<LeaderElector> elector;
  if (s.options.leaderElection) {
    kube::Client& leaseClient = s.options.leaseClient != nullptr ? *s.options.leaseClient : s.client;
    elector = std::make_unique<LeaderElector>(leaseClient, *s.options.leaderElection, s.clock, s.logger);
    if (!elector->acquire(stop)) {
      stopCaches();
      return core::okStatus();
    }
  }
  s.metrics.leader.with().set(1);
  s.logger.info("starting workers",
                obs::Fields{{"workers", std::to_string(s.options.workers)},
                            {"dryRun", s.options.dryRun ? "true" : "false"},
                            {"contentAware", core::contentAwarenessName(s.options.contentAware)},
                            {"debounce", std::to_string(s.options.debounce.count()) + "ms"},
                            {"minRolloutInterval", core::formatInterval(s.options.minRolloutInterval)}});
  std::stop_source workStop;
  std::vector<std::jthread> workers;
  for (int i = 0; i < std::max(1, s.options.workers); ++i) {
    workers.emplace_back([&s, token = workStop.get_token()] {
      while (auto key = s.queue.get(token)) {
        s.process(*key, token);
        s.queue.done(*key);
        s.reconciled.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }

  bool lost = false;
  if (elector) {
    lost = !elector->hold(stop);
  } else {
    while (s.clock.waitFor(milliseconds(60'000), stop)) {
    }
  }
  // Stop taking work; a reconcile in progress finishes its write (HTTP requests are not cancelled;
  // only a wait for the write limiter is).
  s.logger.info(lost ? "stopping work: leadership lost" : "shutting down: finishing in-flight work");
  s.queue.shutDown();
  workStop.request_stop();
  for (auto& worker : workers) worker.join();
  s.metrics.leader.with().set(0);
  stopCaches();
  if (lost) return core::makeError(core::ErrorKind::Unavailable, "leader election lost");
  if (elector) elector->release();
  s.logger.info("stopped");
  return core::okStatus();
}

}  // namespace restarter::controller
