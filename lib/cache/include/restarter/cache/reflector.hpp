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
//   A paged list costs it a pass over the whole collection per page (measured on the local
//   control plane: 100-400 ms per page of 25 at 100,000 ConfigMaps whatever the page size), so a
//   paged initial sync grows with the square of the collection (21,000 objects 5.9 s, 210,000
//   objects 207 s). Objects are staged in batches of `pageSize` as they arrive, so the stream
//   holds no more JSON at once than a page would. An apiserver without WatchList answers 422
//   before any event (or, older, ignores the parameter: the stream then ends without the
//   bookmark, or shows a change before it): the reflector reports it once and lists by pages
//   from then on. A stream cut before its bookmark discards what was staged and backs off.
// - paged (`pageSize`, client-go's pager default 500): each page is transformed and handed to
//   the store, which converts it to its entries, before the next page is asked for, so a list of
//   10,000 objects never exists as JSON at once; the store swaps the whole list in when the last
//   page has arrived (a failed page discards what was staged).
//
// Paged lists, watches, relists and backoff are the ListWatch step's (list_watch.hpp); the
// Reflector adds the store, streamed lists and its state.
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
#include "restarter/cache/list_watch.hpp"
#include "restarter/cache/store.hpp"
#include "restarter/kube/client.hpp"

namespace restarter::cache {

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

class Reflector : private ListWatchSink {
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
  bool streamList(std::stop_token stop);
  // ListWatchSink: pages and events into the store.
  std::size_t stage(std::vector<nlohmann::json>&& page) override;
  void commitList(const std::string& resourceVersion, std::size_t skipped) override;
  void discardStaged() override;
  void apply(kube::WatchEvent&& event) override;
  void report(const core::Error& error, bool listing) override;
  void backingOff(bool waiting) override;
  void report(const core::Error& error);
  // Reports, once per list, the objects a list or streamed list delivered without a name.
  void reportSkipped(std::size_t skipped);

  StoreBase& store_;
  ReflectorOptions options_;
  std::atomic<State> state_{State::Listing};
  State resumeAfterBackoff_ = State::Listing;
  std::atomic<std::uint64_t> lists_{0};
  std::atomic<std::uint64_t> watches_{0};
  std::atomic<bool> streamingUnsupported_{false};
  ListWatch listWatch_;
};

// A transform that removes metadata.managedFields: the largest part of most objects' metadata,
// and of no use to a cache that only reads names, uids, resourceVersions and labels.
void dropManagedFields(nlohmann::json& object);

const char* reflectorStateName(Reflector::State state) noexcept;

}  // namespace restarter::cache
