#pragma once
// restarter::controller — the reliable half (docs/architecture.md, "Two halves"): keeps every labeled
// workload's pod template annotated and evicts pods whose credentials expire.
//
//   queue_key.hpp        the queue's key: reconciler, namespace, name
//   work_queue.hpp       deduplicating, debouncing, backing-off queue
//   reconciler_queues.hpp  each reconciler's own queue and workers
//   rate_limiter.hpp     the global write limiter and the reference loads' limiter (a token bucket)
//   reconcile.hpp        the Reconciler interface, Action, the error policy, the shared context
//   watches.hpp          the watch table's rows: store -> reconciler, predicate, delay or mapper
//   reconciler_table.hpp the reconcilers, one row each: name, factory, watches, workers
//   namespace_caches.hpp the caches of one watched namespace
//   predicates.hpp       which cache updates the rows let through
//   slim.hpp             what the caches keep of each object
//   announcements.hpp    the one bounded memory of what was announced
//   workload.hpp         the workload restarter (StatefulSet, Deployment, DaemonSet)
//   pod_expiry.hpp       the pod expiry restarter
//   ondelete.hpp         the pod-by-pod roll of OnDelete StatefulSets and DaemonSets
//   eviction.hpp         the Eviction API with PodDisruptionBudget backoff (expiry and roll)
//   events.hpp           recording Events
//   leader_election.hpp  Lease-based leader election
//   metrics.hpp          Prometheus metrics
//   controller.hpp       this file: the manager wiring caches, the reconciler table, queues and
//                        workers
//                        (docs/architecture.md, "Watches and dispatch")
//
// Caches (one set per watched namespace, or one set for all namespaces):
//   - StatefulSets, Deployments, DaemonSets labeled restarter.stackable.tech/enabled=true (full
//     objects: the pod template is needed), each indexed by the ConfigMaps and Secrets it
//     references;
//   - ConfigMaps and Secrets, metadata-only (docs/architecture.md, "Metadata only"), kept as compact
//     cache::ObjectMeta entries (uid, resourceVersion, the ignore label): the bulk of the objects
//     and so of the memory. The kinds ControllerOptions::contentAware reads (ConfigMaps and
//     Secrets by default) are listed and watched whole instead; each object's content is hashed as it
//     arrives and dropped, and the entry keeps the 16-byte digest (docs/architecture.md,
//     "Content-aware restarts");
//   - Pods labeled restarter.stackable.tech/enabled=true, metadata-only.
// ConfigMap/Secret events queue only indexed workloads (docs/architecture.md, "Idempotent reconcile"); a workload
// event queues that workload; every workload key waits out the debounce window. Nothing is
// reconciled before all caches sync (docs/architecture.md, "No serving before sync"), then every labeled
// workload, so changes made while the controller was down are applied at start.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "restarter/controller/leader_election.hpp"
#include "restarter/controller/metrics.hpp"
#include "restarter/controller/ondelete.hpp"
#include "restarter/controller/slim.hpp"
#include "restarter/controller/work_queue.hpp"
#include "restarter/core/content.hpp"
#include "restarter/core/reloader.hpp"
#include "restarter/core/result.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/digest_key.hpp"
#include "restarter/obs/log.hpp"

namespace restarter::controller {

// serve-controller --min-rollout-interval's default (docs/configuration.md "serve-controller" says
// why 5m): the upper bound of a hold (core::decideRollout). A held change waits for the previous
// rollout to finish, which for a StatefulSet of a few replicas with Kubernetes' default 30 s
// termination grace period and a readiness probe takes about this long; a rollout that never
// finishes holds the next change no longer than this.
inline constexpr milliseconds kDefaultMinRolloutInterval{5 * 60 * 1000};

// What serve-controller's flags set (cli/serve_controller.hpp binds them to these fields, so each
// default is written here and nowhere else) and what only the program sets (identity, leader
// election, the Lease's client).
struct ControllerOptions {
  std::vector<std::string> namespaces;  // empty: all namespaces
  milliseconds debounce{1000};
  // The upper bound of a rollout hold (core::decideRollout); 0: no holds.
  milliseconds minRolloutInterval = kDefaultMinRolloutInterval;
  // --max-concurrent-rollouts: at most this many of restarter's rollouts in progress at once
  // across every watched namespace, the rest queued (rollout_slots.hpp); 0: no limit.
  std::size_t maxConcurrentRollouts = 0;
  bool dryRun = false;
  // Whose content is read to tell a metadata-only change from a real one (core/content.hpp).
  core::ContentAwareness contentAware = core::ContentAwareness::All;
  // Roll a workload at opt-in instead of recording its baseline (ReconcileContext::rollOnOptIn).
  bool rollOnOptIn = false;
  // --rollout-window: the windows of workloads without their own (core/rollout_window.hpp), a spec
  // the cli has parsed already; "always": no window.
  std::string rolloutWindow = "always";
  double writesPerSecond = 10.0;  // global write limit (token bucket)
  int writeBurst = 50;            // writes allowed at once before writesPerSecond applies
  // Each reconciler's workers (its share, reconciler_queues.hpp): every reconciler has its own
  // queue served by this many threads, as controller-runtime's MaxConcurrentReconciles; so
  // serve-controller runs this many times the reconcilers (2 x 6, 2 x 7 with --argo-rollouts).
  int workersPerReconciler = 2;
  std::string identity;  // this replica, for Events and the Lease
  std::optional<LeaderElectionOptions> leaderElection;
  // The client the Lease is read and written with; nullptr: the main client. serve-controller
  // gives it timeouts of leaseRequestTimeout(): a renewal stuck in a hung request must not keep
  // a leader working past the point where a standby may take over (leader_election.hpp).
  kube::Client* leaseClient = nullptr;
  // How long a replacement pod of the OnDelete roll may take to become Ready before the roll of
  // its workload pauses (ondelete.hpp).
  std::chrono::seconds onDeleteReadyTimeout = kDefaultOnDeleteReadyTimeout;
  // --reloader-annotations, --auto-reload-all (core/reloader.hpp): with them the workloads are
  // listed without the label selector and those Reloader's annotations do not opt in are kept as
  // stubs (slimWorkload).
  core::SelectionOptions selection{};
  // --argo-rollouts: also manage Argo Rollouts' Rollouts (core::kManagedKinds' custom resource
  // rows). Watched only while discovery finds the kind served: looked for at start and then every
  // crdCheckInterval until found (docs/architecture.md, "Custom resource kinds").
  bool argoRollouts = false;
  milliseconds crdCheckInterval{30'000};
  // The Secret holding the key of content digests (kube/digest_key.hpp): run() gets it, or creates
  // it when missing, before it reads any content (docs/architecture.md, "Keyed digests").
  kube::DigestKeySecret digestKey{};
  // While run() has no key: the first retry, the longest (each retry doubles the wait up to it),
  // and at most one warning per warningInterval. Tests shorten them.
  struct DigestKeyRetry {
    std::chrono::milliseconds first{2000};
    std::chrono::milliseconds max{60'000};
    std::chrono::milliseconds warningInterval{60'000};
  };
  DigestKeyRetry digestKeyRetry{};
};

// The reason of the Warning Event on a digest key Secret that holds no valid key.
inline constexpr std::string_view kInvalidDigestKeyReason = "InvalidDigestKey";

class Controller {
 public:
  // Every reference must outlive the controller.
  Controller(kube::Client& client, ControllerOptions options, obs::Logger& logger, obs::Registry& registry,
             base::Clock& clock);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Runs until `stop`: starts the caches, waits for them to sync, (with leader election) waits
  // for the Lease, then works. On stop: takes no new work, lets in-flight writes finish, stops
  // the caches, releases the Lease; returns OK. Returns an error when leadership is lost (the
  // caller must exit: another replica is working now).
  core::Status run(std::stop_token stop);

  // Every cache has completed its initial list (for /readyz).
  bool synced() const;
  // Why the controller is not ready, in one line that says what to do (for /readyz's body):
  // the digest key's problem while run() has none (kube::digestKeyAdvice), else "caches are not
  // synced yet". Any thread.
  std::string notReadyReason() const;
  // Queue keys processed since start (any thread): how the caller tells when a burst of work has
  // ended (runtime/trim_schedule.hpp).
  std::uint64_t reconciled() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace restarter::controller
