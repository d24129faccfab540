#pragma once
// ListWatch: the one list-then-watch step every watcher of restarter takes (kube-rs's `watcher`,
// docs/architecture.md, "Streaming lists"): list (by pages) and hand the objects to a sink, watch
// from the list's resourceVersion and hand it every event, watch again from the last
// resourceVersion when a stream ends, list again at once on 410 Gone, and back off exponentially
// (with jitter, at least the server's Retry-After) after any other error. The Reflector drives it
// into a store (adding streamed lists); explain-restart --watch drives it to print new revisions,
// bounded by maxFailures. Time and randomness are injected.

#include <chrono>
#include <cstdint>
#include <stop_token>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/base/clock.hpp"
#include "restarter/base/random.hpp"
#include "restarter/core/result.hpp"
#include "restarter/kube/client.hpp"

namespace restarter::cache {

struct BackoffPolicy {
  std::chrono::milliseconds initial{std::chrono::milliseconds(800)};
  std::chrono::milliseconds max{std::chrono::seconds(30)};
  double jitter = 0.5;  // 0: none; 1: anywhere in [0, base]
};

// The delay before retry number `failures` (1-based); `random` is in [0, 1).
std::chrono::milliseconds backoffDelay(const BackoffPolicy& policy, int failures, double random);

struct ListWatchOptions {
  kube::ResourceRef resource;
  std::string namespace_;  // empty: all namespaces
  std::string labelSelector;
  std::string fieldSelector;
  bool metadataOnly = false;
  std::int64_t pageSize = 500;  // objects per page
  std::chrono::seconds watchTimeout{std::chrono::minutes(5)};
  bool relistOnStreamEnd = false;  // list again (rather than watch again) when a stream ends
  BackoffPolicy backoff;
  // Failures in a row after which step() gives up; 0: never.
  int maxFailures = 0;
};

// Where the objects go. Called on the thread that calls ListWatch; none may throw.
class ListWatchSink {
 public:
  virtual ~ListWatchSink() = default;
  // One page of a list: returns how many objects it could not take (e.g. without a name).
  virtual std::size_t stage(std::vector<nlohmann::json>&& page) = 0;
  // The list is complete at `resourceVersion`, `skipped` objects left out over its pages.
  virtual void commitList(const std::string& resourceVersion, std::size_t skipped) = 0;
  // A list failed or was stopped part-way: forget the pages staged.
  virtual void discardStaged() = 0;
  // One watch event (Added, Modified, Deleted or Bookmark).
  virtual void apply(kube::WatchEvent&& event) = 0;
  // An error, before the step backs off or relists; `listing`: a list failed, else a watch.
  virtual void report(const core::Error& error, bool listing) = 0;
  // The step waits out a backoff (true), or resumes (false).
  virtual void backingOff(bool /*waiting*/) {}
};

class ListWatch {
 public:
  // `client`, `sink`, `clock` and `random` must outlive it.
  ListWatch(kube::Client& client, ListWatchOptions options, ListWatchSink& sink, base::Clock& clock,
            base::Random& random = base::systemRandom());

  // One step: a list when there is no resourceVersion yet (or a relist is due), else one watch
  // stream. False once maxFailures failures came in a row (or `stop` was requested).
  bool step(std::stop_token stop);

  // The parts of step(), for a driver that lists otherwise (the Reflector's streamed lists).
  bool list(std::stop_token stop);   // true when the list is complete
  bool watch(std::stop_token stop);  // true to keep watching, false to relist
  // After a stream that delivered `delivered` events: true to keep watching, false to relist.
  bool afterWatch(const core::Result<kube::WatchEnd>& result, std::stop_token stop, std::size_t delivered);
  void backoff(std::stop_token stop, const core::Error& error);
  kube::WatchOptions watchOptions() const;
  // One stream with the driver's own `options` (a streamed list), its events to `handler`.
  core::Result<kube::WatchEnd> watchStream(const kube::WatchOptions& options, const kube::WatchHandler& handler,
                                           std::stop_token stop);

  const std::string& resourceVersion() const { return resourceVersion_; }
  // A list (of the driver's own) is complete at `resourceVersion`: watch from there.
  void listed(std::string resourceVersion);
  // The driver's own stream got as far as `resourceVersion`: watch on from there.
  void advance(std::string resourceVersion) { resourceVersion_ = std::move(resourceVersion); }
  void needRelist() { resourceVersion_.clear(); }
  int failures() const { return failures_; }
  bool gaveUp() const { return options_.maxFailures > 0 && failures_ >= options_.maxFailures; }
  const ListWatchOptions& options() const { return options_; }

 private:
  kube::Client& client_;
  ListWatchOptions options_;
  ListWatchSink& sink_;
  base::Clock& clock_;
  base::Random& random_;
  std::string resourceVersion_;
  int failures_ = 0;
};

}  // namespace restarter::cache
