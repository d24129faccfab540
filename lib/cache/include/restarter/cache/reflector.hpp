#pragma once
// Reflector: keeps one store (Store or MetaStore) in step with one resource of the API. An
// explicit state machine (kube-rs watcher, client-go reflector):
//
//   Listing  --list ok----------------------> Watching (from the list's resourceVersion)
//   Listing  --error------------------------> Backoff -> Listing
//   Watching --event------------------------> Watching (store updated, resourceVersion advanced;
//                                             bookmarks only advance the resourceVersion)
//   Watching --stream ended by the server---> Watching again from the last resourceVersion
//                                             (or Listing when relistOnStreamEnd)
//   Watching --410 Gone (HTTP or ERROR event)-> Listing at once
//   Watching --any other error (cut stream,
//              apiserver down, malformed)---> Backoff -> Watching from the last resourceVersion;
//                                             a resourceVersion the server no longer has gives
//                                             410 and so a relist. No change is lost either way:
//                                             a watch from RV replays every later change, and a
//                                             relist diffs the new content against the store.
//
// How Listing lists (docs/architecture.md, "Streaming lists"):
// - streaming (`streamingList`, the apiserver's WatchList, client-go's WatchListClient): one
//   watch with sendInitialEvents=true sends every object as an ADDED event, then a bookmark
//   annotated k8s.io/initial-events-end; the store swaps the objects in at that bookmark and the
//   same stream goes on as the watch. The apiserver serves it from its watch cache in one pass.
//   A paged list costs it a pass over the whole collection per page, so a paged initial sync grows
//   with the square of the collection (measured: docs/benchmarks.md, "The controller at scale").
//   Objects are staged in batches of `pageSize` as they arrive, so the stream
//   holds no more JSON at once than a page would. An apiserver without WatchList answers 422
//   before any event (or, older, ignores the parameter: the stream then ends without the
//   bookmark, or shows a change before it): the reflector reports it once and lists by pages
//   from then on. A stream cut before its bookmark discards what was staged and backs off.
// - paged (`pageSize`, client-go's pager default 500): each page is transformed and handed to
//   the store, which converts it to its entries, before the next page is asked for, so a list of
//   10,000 objects never exists as JSON at once; the store swaps the whole list in when the last
//   page has arrived (a failed page discards what was staged).
//
// Backoff: exponential (initial * 2^(n-1), capped at max) with jitter (the delay is drawn from
// [base*(1-jitter), base]), at least the server's Retry-After; reset after a successful list or a
// watch that delivered events. Time and randomness are injected.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>

#include "restarter/base/clock.hpp"
#include "restarter/base/random.hpp"
#include "restarter/cache/store.hpp"
#include "restarter/kube/client.hpp"

namespace restarter::cache {

struct BackoffPolicy {
  std::chrono::milliseconds initial{std::chrono::milliseconds(800)};
  std::chrono::milliseconds max{std::chrono::seconds(30)};
  double jitter = 0.5;  // 0: none; 1: anywhere in [0, base]
};

// The delay before retry number `failures` (1-based); `random` is in [0, 1).
std::chrono::milliseconds backoffDelay(const BackoffPolicy& policy, int failures, double random);

struct ReflectorOptions {
  kube::ResourceRef resource;
  std::string namespace_;  // empty: all namespaces
  std::string labelSelector;
  std::string fieldSelector;
  bool metadataOnly = false;
  std::int64_t pageSize = 500;  // objects per page, or per staged batch of a streaming list
  // List by streaming (see above) while the apiserver supports it; false: paged lists only.
  bool streamingList = false;
  std::chrono::seconds watchTimeout{std::chrono::minutes(5)};
  bool relistOnStreamEnd = false;
  BackoffPolicy backoff;
  // Applied to every object before it is stored (list items and watch events), e.g.
  // dropManagedFields. Must not throw. Empty: objects are stored as received.
  std::function<void(nlohmann::json& object)> transform;
  // Told about every error (for logs and metrics); called on the reflector's thread; must not throw.
  std::function<void(const core::Error&)> onError;
};

class Reflector {
 public:
  enum class State { Listing, Watching, Backoff, Stopped };

  // `client`, `store`, `clock` and `random` must outlive the Reflector; `random` jitters the
  // backoff.
  Reflector(kube::Client& client, StoreBase& store, ReflectorOptions options, base::Clock& clock,
            base::Random& random = base::systemRandom());

  // Runs until `stop` is requested (then returns promptly: a watch is cancelled, a backoff wait
  // interrupted). Call once, typically on its own std::jthread.
  void run(std::stop_token stop);

  State state() const { return state_.load(); }
  std::uint64_t listCount() const { return lists_.load(); }  // paged and streaming lists
  std::uint64_t watchCount() const { return watches_.load(); }
  // False once the apiserver showed it cannot stream a list (then every list is paged).
  bool streaming() const { return options_.streamingList && !streamingUnsupported_.load(); }

 private:
  bool list(std::stop_token stop);
  bool streamList(std::stop_token stop);
  bool watch(std::stop_token stop);
  kube::WatchOptions watchOptions() const;
  // One watch event into the store (and resourceVersion_); always true (keep watching).
  bool applyEvent(kube::WatchEvent&& event);
  // After a watch stream: true to keep watching, false to relist (410 Gone, relistOnStreamEnd).
  bool afterWatch(const core::Result<kube::WatchEnd>& result, std::stop_token stop, std::size_t delivered);
  void backoff(std::stop_token stop, const core::Error& error);
  void report(const core::Error& error);
  // Reports, once per list, the objects a list or streamed list delivered without a name.
  void reportSkipped(std::size_t skipped);

  kube::Client& client_;
  StoreBase& store_;
  ReflectorOptions options_;
  base::Clock& clock_;
  base::Random& random_;
  std::atomic<State> state_{State::Listing};
  std::atomic<std::uint64_t> lists_{0};
  std::atomic<std::uint64_t> watches_{0};
  std::atomic<bool> streamingUnsupported_{false};
  std::string resourceVersion_;
  int failures_ = 0;
};

// A transform that removes metadata.managedFields: the largest part of most objects' metadata,
// and of no use to a cache that only reads names, uids, resourceVersions and labels.
void dropManagedFields(nlohmann::json& object);

const char* reflectorStateName(Reflector::State state) noexcept;

}  // namespace restarter::cache
