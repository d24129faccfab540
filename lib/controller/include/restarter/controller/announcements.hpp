#pragma once
// The one memory of what was announced (a log line, a metric, an Event), so that a state is
// announced once however often it is reconciled (docs/architecture.md, "Announced once").
//
// Entries are (key, topic) -> state: `key` is the object ("<namespace>/<name>", or a pod's uid),
// `topic` what was announced of it ("dry-run", "held", "too-large", ...), `state` what the
// announcement said. Each reconciler (and the Evictor) owns one memory; the owner's reconciles may
// run on several workers at once, so every call locks the memory's own mutex (held only inside a
// call, never while announcing).
//
// Bound: at most `bound` entries (kMaxAnnouncements by default). Eviction: when a new entry would
// pass the bound, the entry set longest ago is dropped (setting an entry again makes it the
// newest). Forgetting an entry costs at most one more announcement of its state, never a missed
// one; an owner forgets what it no longer needs (a workload gone, a state resolved) at once.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "restarter/controller/work_queue.hpp"

namespace restarter::controller {

inline constexpr std::size_t kMaxAnnouncements = 10000;

class Announcements {
 public:
  explicit Announcements(std::size_t bound = kMaxAnnouncements);

  // True the first time (key, topic) is given, and whenever `state` differs from the state it was
  // last given; then `state` is remembered. False when it is the state remembered: announced
  // already.
  bool once(const std::string& key, std::string_view topic, const std::string& state = {});
  // True the first time (key, topic) is given, and when at least `interval` has passed since it
  // last returned true (at `now`); false in between.
  bool every(const std::string& key, std::string_view topic, base::Clock::MonotonicTime now,
             milliseconds interval);
  // Drops every topic of `key`.
  void forget(const std::string& key);
  // Drops one topic of `key`: its next announcement is made again.
  void forget(const std::string& key, std::string_view topic);

  std::size_t size() const;

 private:
  using Id = std::pair<std::string, std::string>;  // key, topic
  struct Entry {
    std::string state;
    base::Clock::MonotonicTime at;
    std::uint64_t order;  // when it was last set: the oldest is dropped at the bound
  };

  // Sets `id` to (state, at), dropping the oldest entry first when the memory is full.
  void set(const Id& id, std::string state, base::Clock::MonotonicTime at);
  void erase(std::map<Id, Entry>::iterator it);

  std::size_t bound_;
  mutable std::mutex mutex_;
  std::map<Id, Entry> entries_;
  std::map<std::uint64_t, Id> byOrder_;
  std::uint64_t next_ = 0;
};

}  // namespace restarter::controller
