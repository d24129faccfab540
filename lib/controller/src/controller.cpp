#include "restarter/controller/controller.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <thread>

#include "controller_impl.hpp"

#include "restarter/controller/events.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/rollout.hpp"
#include "restarter/core/rollout_queue.hpp"
#include "restarter/kube/discovery.hpp"
#include "restarter/kube/resource.hpp"

// The running half of the controller (controller_impl.hpp): run() and the dispatch of each key.

namespace restarter::controller {

Controller::Impl::Impl(kube::Client& clientIn, ControllerOptions optionsIn, obs::Logger& loggerIn,
                       obs::Registry& registry, base::Clock& clockIn)
    : client(clientIn),
      options(std::move(optionsIn)),
      logger(loggerIn),
      metrics(registry),
      clock(clockIn),
      limiter(clock, options.writesPerSecond, options.writeBurst),
      referenceLoads(clock, kReferenceLoadsPerSecond, kReferenceLoadBurst),
      queues(clock, cache::BackoffPolicy{milliseconds(500), milliseconds(300'000), 0.5}),
      rolloutSlots(options.maxConcurrentRollouts,
                   [this](const QueueKey& key) { queues.enqueue(key, QueueReason::SlotFreed); }),
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
              {}} {
  // Parsed by the cli already; a spec that does not parse here (a caller that skipped it) holds
  // nothing, as an invalid annotation does.
  if (auto window = core::parseRolloutSchedule(options.rolloutWindow)) {
    context.rolloutWindow = std::move(*window);
    context.rolloutWindowSpec = options.rolloutWindow;
  }
  context.rolloutSlots = &rolloutSlots;
}

// One key, one call through the reconciler interface (reconcile.hpp): the key names its reconciler.
// The debug line's fields are built only at debug level (a failure's, only on failure).
void Controller::Impl::process(WorkQueue& queue, const WorkQueue::Taken& taken, std::stop_token stop) {
  const QueueKey& queued = taken.key;
  const std::string& controller = queued.reconciler->name();
  for (QueueReason reason : kQueueReasons) {
    if (taken.reasons.contains(reason))
      metrics.reconcileReasons.with({controller, std::string(queueReasonName(reason))}).inc();
  }
  if (logger.enabled(obs::LogLevel::Debug))
    logger.debug("reconciling", {{"controller", controller},
                                 {"key", queued.object.key()},
                                 {"queuedFor", queueReasonsText(taken.reasons)}});
  const auto started = clock.monotonicNow();
  core::Result<Action> result = queued.reconciler->reconcile(queued.object, stop);
  metrics.reconcileDuration.with({controller})
      .observe(std::chrono::duration<double>(clock.monotonicNow() - started).count());
  if (result) {
    metrics.reconciles.with({controller, "success"}).inc();
    queue.forget(queued);
    if (result->requeueAfter) queue.add(queued, QueueReason::RequeueAfter, *result->requeueAfter);
    return;
  }
  const core::Error& error = result.error();
  metrics.reconciles.with({controller, "error"}).inc();
  metrics.errors.with({controller, core::errorKindName(error.kind)}).inc();
  RetryDecision decision = retryPolicy(error);
  if (!decision.retry) {
    logger.error("reconcile failed; waiting for the object to change",
                 {{"controller", controller},
                  {"key", queued.object.key()},
                  {"queuedFor", queueReasonsText(taken.reasons)},
                  {"error", error.describe()}});
    queue.forget(queued);
    return;
  }
  if (stop.stop_requested()) return;
  const milliseconds delay = queue.addRateLimited(queued, decision.atLeast);
  logger.warn("reconcile failed; retrying", {{"controller", controller},
                                             {"key", queued.object.key()},
                                             {"queuedFor", queueReasonsText(taken.reasons)},
                                             {"error", error.describe()},
                                             {"retryIn", std::to_string(delay.count()) + "ms"}});
}

void Controller::Impl::updateGauges() {
  metrics.queueDepth.with().set(static_cast<double>(queues.depth()));
  // Also frees the slots whose upper bound has passed, waking the queue's head.
  const RolloutSlots::Counts slots =
      rolloutSlots.tick(std::chrono::floor<std::chrono::microseconds>(clock.wallNow()));
  metrics.queuedRollouts.with().set(static_cast<double>(slots.queued));
  metrics.rolloutsInProgress.with().set(static_cast<double>(slots.inProgress));
  std::map<std::string, std::pair<double, double>> sizes;  // all, unloaded
  for (const ReflectorEntry& entry : reflectors) {
    sizes[entry.resource].first += static_cast<double>(entry.store->size());
    sizes[entry.resource].second += static_cast<double>(entry.store->unloadedSize());
  }
  for (const auto& [resource, size] : sizes) {
    metrics.cacheObjects.with({resource}).set(size.first);
    if (resource == "configmaps" || resource == "secrets")
      metrics.cacheUnloadedObjects.with({resource}).set(size.second);
  }
}

void Controller::Impl::rebuildRolloutSlots() {
  if (!rolloutSlots.limited()) return;
  const core::TimePoint now = std::chrono::floor<std::chrono::microseconds>(clock.wallNow());
  std::vector<std::pair<QueueKey, core::TimePoint>> held;
  std::vector<RolloutSlots::Queued> queued;
  for (const auto& entry : caches) {
    for (const WorkloadResource& kind : kinds) {
      auto listed = entry->workloads.at(kind.name)->list();
      if (!listed) {
        logger.warn("cannot list cached workloads for the rollout queue",
                    {{"kind", kind.name}, {"error", listed.error().describe()}});
        continue;
      }
      Reconciler* reconciler = reconcilers.at(kind.name).get();
      for (const cache::PackedPtr& packed : *listed) {
        const nlohmann::json workload = packed->unpack();
        if (!workload.is_object() || packed->trim.stub) continue;
        if (options.selection.reloaderAnnotations &&
            core::workloadManagement(workload, options.selection).by == core::ManagedBy::None)
          continue;
        const QueueKey key{reconciler, ObjectName{core::metadataString(workload, "namespace"),
                                                  core::metadataString(workload, "name")}};
        if (const auto until =
                core::rolloutSlotUntil(core::lastRolloutOf(workload), now, options.minRolloutInterval,
                                       core::rolloutProgressOf(workload, kind.coreKind)))
          held.emplace_back(key, *until);
        if (const auto since = core::queuedSinceOf(workload))
          queued.push_back({key, core::rolloutPriorityOf(workload).value, *since});
      }
    }
  }
  logger.info("rollout queue rebuilt",
              {{"inProgress", std::to_string(held.size())},
               {"queued", std::to_string(queued.size())},
               {"maxConcurrentRollouts", std::to_string(options.maxConcurrentRollouts)}});
  rolloutSlots.rebuild(held, queued, now);
}

Controller::Controller(kube::Client& client, ControllerOptions options, obs::Logger& logger,
                       obs::Registry& registry, base::Clock& clock)
    : impl_(std::make_unique<Impl>(client, std::move(options), logger, registry, clock)) {
  impl_->setUp();
}

Controller::~Controller() = default;

bool Controller::synced() const { return impl_->synced.load(); }

std::string Controller::notReadyReason() const {
  {
    std::lock_guard lock(impl_->keyProblemMutex);
    if (!impl_->keyProblem.empty()) return impl_->keyProblem;
  }
  return "caches are not synced yet";
}

void Controller::Impl::setKeyProblem(std::string problem) {
  std::lock_guard lock(keyProblemMutex);
  keyProblem = std::move(problem);
}

bool Controller::Impl::acquireDigestKey(std::stop_token stop) {
  // Several replicas may start at once: ensureDigestKey reads the winner's key on 409. A first run
  // may find no namespace, a Secret it may not read, or one holding no valid key: each is a
  // readiness reason that says what to do; the retries back off so a wait of hours neither floods
  // the log nor the apiserver.
  const std::string& ns = options.digestKey.namespace_;
  const std::string& name = options.digestKey.name;
  const std::string keyName = ns + "/" + name;
  milliseconds delay = options.digestKeyRetry.first;
  std::optional<base::Clock::MonotonicTime> lastWarning;
  std::string lastEvent;
  for (;;) {
    auto key = kube::ensureDigestKey(client, ns, name);
    if (key) {
      digestKey = std::move(*key);
      setKeyProblem("");
      break;
    }
    std::string problem = kube::digestKeyAdvice(key.error(), ns, name);
    setKeyProblem(problem);
    const base::Clock::MonotonicTime now = clock.monotonicNow();
    if (!lastWarning || now - *lastWarning >= options.digestKeyRetry.warningInterval) {
      logger.warn(
          "no digest key: not ready",
          {{"secret", keyName}, {"reason", problem}, {"retryIn", std::to_string(delay.count()) + "ms"}});
      lastWarning = now;
    }
    // An invalid key is someone's edit of our Secret: tell them there, once per distinct problem.
    if (key.error().kind == core::ErrorKind::InvalidInput && problem != lastEvent) {
      lastEvent = problem;
      // Its uid, when the metadata can be read (the Event is recorded without it otherwise).
      auto secret = client.get(kube::resources::secrets(), ns, name, kube::GetOptions{/*metadataOnly=*/true});
      const kube::ObjectReference regarding =
          secret ? referenceTo(*secret, "v1", "Secret") : kube::ObjectReference{"v1", "Secret", ns, name, ""};
      (void)recordEvent(context, regarding, "Warning", std::string(kInvalidDigestKeyReason), "ReadDigestKey",
                        problem);
    }
    if (!clock.waitFor(delay, stop)) return false;
    delay = std::min(delay * 2, options.digestKeyRetry.max);
  }
  context.digestKeyId = digestKey->id();
  context.otherDigest = otherDigestKind(*digestKey);
  obs::Fields fields{{"secret", keyName}, {"keyId", digestKey->id()}};
  // A rotation under way: records under the previous key are compared under it and rewritten.
  if (digestKey->previous() != nullptr) fields.push_back({"previousKeyId", digestKey->previous()->id()});
  logger.info("digest key ready", fields);
  return true;
}

bool Controller::Impl::crdServed(const kube::ResourceRef& resource) {
  auto served = kube::resourceServed(client, resource);
  if (served) return *served;
  // An apiserver that cannot answer discovery now: said once per distinct error, looked for again.
  std::string error = served.error().describe();
  if (error != lastDiscoveryError) {
    logger.warn("discovery failed; looking again later",
                {{"resource", resource.plural + "." + resource.group},
                 {"error", error},
                 {"retryIn", std::to_string(options.crdCheckInterval.count()) + "ms"}});
    lastDiscoveryError = std::move(error);
  }
  return false;
}

std::vector<std::size_t> Controller::Impl::startServedCrdReflectors(const std::vector<std::size_t>& candidates,
                                                                    std::vector<std::jthread>& threads) {
  std::vector<std::size_t> notServed;
  for (std::size_t i : candidates) {
    ReflectorEntry& entry = reflectors[i];
    if (!crdServed(*entry.crd)) {
      notServed.push_back(i);
      continue;
    }
    logger.info("custom resource served; watching it",
                {{"resource", entry.crd->plural + "." + entry.crd->group}});
    cache::Reflector* reflector = entry.reflector.get();
    threads.emplace_back([reflector](std::stop_token token) { reflector->run(token); });
  }
  return notServed;
}

void Controller::Impl::watchForCrds(std::vector<std::size_t> pending, std::vector<std::jthread>& threads,
                                    std::stop_token stop) {
  while (!pending.empty() && clock.waitFor(options.crdCheckInterval, stop)) {
    pending = startServedCrdReflectors(pending, threads);
  }
}

std::uint64_t Controller::reconciled() const { return impl_->reconciled.load(std::memory_order_relaxed); }

core::Status Controller::run(std::stop_token stop) {
  Impl& s = *impl_;
  // No digest is computed before the key is there (docs/architecture.md, "Keyed digests").
  if (!s.acquireDigestKey(stop)) {
    s.logger.info("stopped");
    return core::okStatus();
  }
  // Reserved up front: the thread watching for custom resources adds to it while run() waits.
  std::vector<std::jthread> reflectorThreads;
  reflectorThreads.reserve(s.reflectors.size());
  std::vector<std::size_t> crdCandidates;
  std::vector<std::size_t> afterWorkloads;
  auto start = [&](std::size_t i) {
    cache::Reflector* reflector = s.reflectors[i].reflector.get();
    reflectorThreads.emplace_back([reflector](std::stop_token token) { reflector->run(token); });
  };
  for (std::size_t i = 0; i < s.reflectors.size(); ++i) {
    if (s.reflectors[i].crd) {
      crdCandidates.push_back(i);
    } else if (s.reflectors[i].afterWorkloads) {
      afterWorkloads.push_back(i);
    } else {
      start(i);
    }
  }
  // A custom resource not served now is neither listed nor waited for: the caches sync without
  // it, and it is looked for again every crdCheckInterval (docs/architecture.md, "Custom
  // resource kinds").
  const std::vector<std::size_t> pending = s.startServedCrdReflectors(crdCandidates, reflectorThreads);
  std::jthread crdWatcher;
  if (!pending.empty()) {
    crdWatcher = std::jthread([&s, &reflectorThreads, pending](std::stop_token token) {
      s.watchForCrds(pending, reflectorThreads, token);
    });
  }
  std::jthread ticker([&s](std::stop_token token) {
    do {
      s.updateGauges();
    } while (s.clock.waitFor(milliseconds(1000), token));
  });
  auto stopCaches = [&] {
    ticker.request_stop();
    // First the watcher, so that no reflector starts while they stop.
    if (crdWatcher.joinable()) {
      crdWatcher.request_stop();
      crdWatcher.join();
    }
    for (auto& thread : reflectorThreads) thread.request_stop();
    for (auto& thread : reflectorThreads) thread.join();
  };

  s.logger.info("waiting for caches to sync",
                {{"caches", std::to_string(s.reflectors.size() - pending.size())}});
  auto waitForSync = [&](bool referenced) {
    for (std::size_t i = 0; i < s.reflectors.size(); ++i) {
      if (std::find(pending.begin(), pending.end(), i) != pending.end()) continue;
      if (s.reflectors[i].afterWorkloads != referenced) continue;
      while (!stop.stop_requested() && !s.reflectors[i].store->waitForSync(milliseconds(1000), stop)) {
      }
    }
  };
  // The workloads first: the ConfigMap and Secret caches keep as entries only what a workload
  // references (docs/architecture.md, "Memory that follows references"), which they can tell
  // from the first object listed only once the workloads are there.
  waitForSync(false);
  if (!stop.stop_requested()) {
    for (std::size_t i : afterWorkloads) start(i);
    waitForSync(true);
  }
  if (stop.stop_requested()) {
    stopCaches();
    return core::okStatus();
  }
  s.synced = true;
  {
    obs::Fields fields;
    for (std::size_t i = 0; i < s.reflectors.size(); ++i) {
      if (std::find(pending.begin(), pending.end(), i) != pending.end()) continue;
      fields.push_back({s.reflectors[i].resource, std::to_string(s.reflectors[i].store->size())});
      if (s.reflectors[i].afterWorkloads)
        fields.push_back(
            {s.reflectors[i].resource + "Unloaded", std::to_string(s.reflectors[i].store->unloadedSize())});
    }
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
  s.rebuildRolloutSlots();
  s.logger.info("starting workers",
                obs::Fields{{"workers", std::to_string(s.queues.workers())},
                            {"workersPerReconciler", std::to_string(s.options.workersPerReconciler)},
                            {"dryRun", s.options.dryRun ? "true" : "false"},
                            {"contentAware", core::contentAwarenessName(s.options.contentAware)},
                            {"debounce", std::to_string(s.options.debounce.count()) + "ms"},
                            {"minRolloutInterval", core::formatDuration(s.options.minRolloutInterval)},
                            {"rolloutWindow", s.context.rolloutWindowSpec},
                            {"maxConcurrentRollouts", std::to_string(s.options.maxConcurrentRollouts)}});
  s.queues.start([&s](WorkQueue& queue, const WorkQueue::Taken& taken, std::stop_token token) {
    s.process(queue, taken, token);
    s.reconciled.fetch_add(1, std::memory_order_relaxed);
  });

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
  s.queues.stop();
  s.metrics.leader.with().set(0);
  stopCaches();
  if (lost) return core::makeError(core::ErrorKind::Unavailable, "leader election lost");
  if (elector) elector->release();
  s.logger.info("stopped");
  return core::okStatus();
}

}  // namespace restarter::controller
