#pragma once
// What explain-restart and status read and say: why did (or will) a workload restart?
// (docs/architecture.md, "explain-restart").
//
// readExplainInput reads the workload, its revisions (ControllerRevisions for StatefulSets and
// DaemonSets, ReplicaSets for Deployments), its pods, the live ConfigMaps/Secrets it references
// (metadata only, or hashed content) and its RolloutHeld Events; explain() (explanation.hpp)
// judges them. RevisionFeed says what each revision seen later adds.

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/base/clock.hpp"
#include "restarter/core/content.hpp"
#include "restarter/core/explain.hpp"
#include "restarter/core/reloader.hpp"
#include "restarter/core/roll.hpp"
#include "restarter/core/rollout_queue.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/digest_key.hpp"
#include "restarter/kube/resource.hpp"

namespace restarter::inspect {

// Everything an explanation is made of, as read from the API.
struct ExplainInput {
  core::WorkloadKind kind = core::WorkloadKind::StatefulSet;
  nlohmann::json workload;
  std::vector<core::Revision> revisions;
  std::string currentRevision;  // name of the revision the workload's status points at, if known
  // Whether and why restarter manages it (core::workloadManagement under the judgement's selection).
  core::Management management;
  core::Result<core::DesiredAnnotations> desired = core::makeError(core::ErrorKind::Internal, "not computed");
  // The workload's RolloutHeld Events (serve-controller --min-rollout-interval), or why they could
  // not be read (e.g. no permission to list Events: the rest of the explanation still stands).
  core::Result<std::vector<core::HeldRollout>> heldRollouts = std::vector<core::HeldRollout>{};
  // The newest BaselineRecorded Event of the workload (time, note), when one is kept: when and why
  // serve-controller recorded what its pods run with (opted in, an object created after it).
  std::optional<std::pair<std::string, std::string>> baselineRecorded;
  // StatefulSets and DaemonSets: their pods in full (the roll needs the Ready condition; pods
  // hold no Secret contents) and a DaemonSet's current revision hash, for the "roll" section
  // (core::decideRoll, judged at `now` with `readyTimeout`).
  std::vector<nlohmann::json> pods;
  // The namespace's PodDisruptionBudgets (StatefulSets and DaemonSets), to name the one a roll's
  // eviction waits for (core::budgetBlocking); empty when they cannot be listed.
  std::vector<nlohmann::json> budgets;
  std::string daemonSetRevision;
  // serve-controller --max-concurrent-rollouts: the queued workloads (queuedRolloutOf) among which
  // this one's place is counted, and where they were listed ("all namespaces", "namespace x"), or
  // why they could not be; read (readRolloutQueue) only when the workload is queued.
  core::Result<std::vector<core::QueuedRollout>> rolloutQueue = std::vector<core::QueuedRollout>{};
  std::string rolloutQueueScope;
  core::TimePoint now{};
  // serve-controller's --rollout-window, for a workload without its own annotation.
  std::string defaultRolloutWindow = "always";
  std::chrono::seconds readyTimeout = core::kDefaultReadyTimeout;
};

// The API resource of a workload kind (statefulsets, deployments, daemonsets, Argo rollouts).
kube::ResourceRef workloadResourceOf(core::WorkloadKind kind);

// The revision a ControllerRevision (StatefulSet, DaemonSet) or ReplicaSet (Deployment) object
// records, if the object belongs to the workload with `workloadUid`; nullopt otherwise. Tolerates
// any JSON shape.
std::optional<core::Revision> revisionFromObject(const nlohmann::json& object, core::WorkloadKind kind,
                                                 const std::string& workloadUid);

// The hold a core/v1 Event records, if it is a RolloutHeld Event whose note names the time:
// recorded at its eventTime (else lastTimestamp, firstTimestamp, creationTimestamp). Tolerates
// any JSON shape.
std::optional<core::HeldRollout> heldRolloutFromEvent(const nlohmann::json& event);

// The workload's place in serve-controller's rollout queue (core/rollout_queue.hpp): its id
// ("<kind>/<namespace>/<name>", kind lower-case as the controller's queue keys), priority and
// queued-since; nullopt when it carries no valid queued-since annotation.
std::optional<core::QueuedRollout> queuedRolloutOf(const nlohmann::json& workload, core::WorkloadKind kind);

// Every queued workload (queuedRolloutOf) of the managed kinds that `labelSelector` lists, in all
// namespaces, or in `namespace_` alone when the caller may not list them all; `scope` says which.
core::Result<std::vector<core::QueuedRollout>> readRolloutQueue(kube::Client& client,
                                                                const std::string& namespace_,
                                                                const std::string& labelSelector,
                                                                std::string& scope);

// Reads an ExplainInput from the API. The referenced objects of the kinds `contentAware` reads
// are read whole and hashed (their content is dropped at once), the others metadata only, as
// serve-controller --content-aware does, so Pending says what that controller would do.
// `rollOnOptIn`: judge as serve-controller --roll-on-opt-in does (a workload without any restarter
// record is rolled, not given a baseline). `digestKey`: the key of content digests
// (readJudgementDigestKey), so contents are compared with the controller's keyed records; null:
// compared unkeyed, which matches only records written before keys.
core::Result<ExplainInput> readExplainInput(kube::Client& client, core::WorkloadKind kind,
                                            const std::string& namespace_, const std::string& name,
                                            core::ContentAwareness contentAware = core::ContentAwareness::All,
                                            const core::SelectionOptions& selection = {},
                                            bool rollOnOptIn = false,
                                            const core::DigestKey* digestKey = nullptr);

// What explain-restart and status judge by, as serve-controller was started: --content-aware
// (which referenced kinds' content tells a metadata-only change from a real one) and
// --ondelete-ready-timeout (when an OnDelete roll counts as paused). One declaration for both.
struct JudgementOptions {
  core::ContentAwareness contentAware = core::ContentAwareness::All;
  core::SelectionOptions selection{};  // --reloader-annotations, --auto-reload-all, as the controller
  std::chrono::seconds readyTimeout = core::kDefaultReadyTimeout;  // --ondelete-ready-timeout
  bool rollOnOptIn = false;                                        // --roll-on-opt-in
  std::string rolloutWindow = "always";                            // --rollout-window
  kube::DigestKeySecret digestKey;                                 // --digest-key-*
};
// The key of content digests, read from --digest-key-secret when the content of some kind is
// read; nullopt (with a warning on `err` naming the problem and what to do, kube::digestKeyAdvice)
// when it cannot be read: contents are then compared unkeyed, and a metadata-only change since a
// keyed record is judged a change. During a rotation the key carries its previous one (judged as
// serve-controller judges, under both) and a note on `err` says so.
std::optional<core::DigestKey> readJudgementDigestKey(kube::Client& client, const JudgementOptions& judgement,
                                                      std::ostream& err);

// One workload as explain-restart and roll judge it: readExplainInput under `judgement` (its
// content awareness, selection and roll-on-opt-in, with `digestKey`), its ready timeout and default
// rollout window set and, when `withQueue` and the workload is queued (queued-since), its place in
// the rollout queue (readRolloutQueue with the judgement's selector). status reads the queue once
// for the whole fleet instead (withQueue false).
core::Result<ExplainInput> readJudgedInput(kube::Client& client, core::WorkloadKind kind,
                                           const std::string& namespace_, const std::string& name,
                                           const JudgementOptions& judgement, const core::DigestKey* digestKey,
                                           bool withQueue);

// The revisions of one workload seen after its explanation was read (explain-restart --watch):
// each new one with its cause against the newest older revision known.
class RevisionFeed {
 public:
  explicit RevisionFeed(const ExplainInput& start);

  // What to list and watch: ControllerRevisions or ReplicaSets, by the workload's pod selector.
  const kube::ResourceRef& resource() const { return resource_; }
  const std::string& labelSelector() const { return selector_; }

  struct NewRevision {
    core::Revision revision;
    core::RevisionCause cause;  // against the newest older revision known
  };
  // The revision `object` (a ControllerRevision or ReplicaSet) records, if it belongs to the
  // workload and was not seen before (or changed its number); then it is known.
  std::optional<NewRevision> add(const nlohmann::json& object);

 private:
  core::WorkloadKind kind_;
  std::string uid_;
  kube::ResourceRef resource_;
  std::string selector_;
  std::map<std::string, core::Revision> known_;
};

// Why watchRevisions stopped: a list failed (`listing`), or kMaxWatchFailures watches in a row.
struct WatchStopped {
  core::Error error;
  bool listing = false;
};
inline constexpr int kMaxWatchFailures = 5;

// explain-restart --watch: lists the workload's revisions (those made since `start` was read are
// reported too, so none is missed), then watches them with cache::ListWatch (relisting on 410
// Gone, backing off after other errors), calling `onRevision` with each new one, and
// `onWatchError` with each watch failure but 410 Gone, until it stops (never when all goes well).
WatchStopped watchRevisions(kube::Client& client, const ExplainInput& start, const std::string& namespace_,
                            base::Clock& clock,
                            const std::function<void(const RevisionFeed::NewRevision&)>& onRevision,
                            const std::function<void(const core::Error&)>& onWatchError);

}  // namespace restarter::inspect
