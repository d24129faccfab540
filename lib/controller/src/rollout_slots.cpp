#include "restarter/controller/rollout_slots.hpp"

#include <algorithm>
#include <utility>

namespace restarter::controller {

RolloutSlots::RolloutSlots(std::size_t maxConcurrent, Wake wake)
    : max_(maxConcurrent), wake_(std::move(wake)) {}

void RolloutSlots::expireLocked(core::TimePoint now) {
  std::erase_if(held_, [now](const auto& entry) { return entry.second <= now; });
}

std::vector<QueueKey> RolloutSlots::headsLocked() const {
  std::vector<core::QueuedRollout> queue;
  std::unordered_map<std::string, QueueKey> byId;
  queue.reserve(queued_.size());
  for (const auto& [key, entry] : queued_) {
    std::string id = key.toString();
    queue.push_back({id, entry.priority, entry.since});
    byId.emplace(std::move(id), key);
  }
  std::vector<QueueKey> keys;
  for (const std::string& id : core::queueHeads(max_, held_.size(), std::move(queue)))
    keys.push_back(byId.at(id));
  return keys;
}

void RolloutSlots::wakeAll(const std::vector<QueueKey>& keys) const {
  if (!wake_) return;
  for (const QueueKey& key : keys) wake_(key);
}

void RolloutSlots::rebuild(const std::vector<std::pair<QueueKey, core::TimePoint>>& held,
                           const std::vector<Queued>& queued, core::TimePoint now) {
  if (!limited()) return;
  std::vector<QueueKey> wake;
  {
    std::lock_guard lock(mutex_);
    held_.clear();
    queued_.clear();
    for (const auto& [key, until] : held) held_[key] = until;
    for (const Queued& entry : queued) {
      if (!held_.contains(entry.key)) queued_[entry.key] = entry;
    }
    expireLocked(now);
    wake = headsLocked();
  }
  wakeAll(wake);
}

void RolloutSlots::observe(const QueueKey& key, std::optional<core::TimePoint> until, core::TimePoint now) {
  if (!limited()) return;
  std::vector<QueueKey> wake;
  {
    std::lock_guard lock(mutex_);
    const std::size_t before = held_.size();
    if (until && *until > now) {
      held_[key] = *until;
    } else {
      held_.erase(key);
    }
    expireLocked(now);
    if (held_.size() < before) wake = headsLocked();
  }
  wakeAll(wake);
}

RolloutSlots::Admission RolloutSlots::request(const QueueKey& key, std::int64_t priority, core::TimePoint since,
                                              core::TimePoint until, core::TimePoint now) {
  if (!limited()) return {};
  Admission admission;
  std::vector<QueueKey> wake;
  {
    std::lock_guard lock(mutex_);
    const std::size_t before = held_.size();
    expireLocked(now);
    const bool expired = held_.size() < before;
    const auto found = queued_.find(key);
    admission.newlyQueued = found == queued_.end();
    // The first time seen queued: `since` (this time, or the earlier time the workload's
    // annotation says a previous leader queued it). Later requests keep the oldest.
    const core::TimePoint first = found == queued_.end() ? since : std::min(found->second.since, since);
    std::vector<core::QueuedRollout> queue;
    queue.reserve(queued_.size());
    for (const auto& [other, entry] : queued_) queue.push_back({other.toString(), entry.priority, entry.since});
    const core::SlotAdmission decision =
        core::admitRollout(max_, held_.size(), queue, core::QueuedRollout{key.toString(), priority, first});
    admission.admitted = decision.admit;
    admission.ahead = decision.ahead;
    if (decision.admit) {
      queued_.erase(key);
      held_[key] = until;
      admission.newlyQueued = false;
    } else {
      queued_[key] = Queued{key, priority, first};
    }
    admission.inProgress = held_.size();
    if (expired) wake = headsLocked();
  }
  wakeAll(wake);
  return admission;
}

void RolloutSlots::leave(const QueueKey& key, core::TimePoint now) {
  if (!limited()) return;
  std::vector<QueueKey> wake;
  {
    std::lock_guard lock(mutex_);
    queued_.erase(key);
    const std::size_t before = held_.size();
    expireLocked(now);
    if (held_.size() < before) wake = headsLocked();
  }
  wakeAll(wake);
}

void RolloutSlots::forget(const QueueKey& key, core::TimePoint now) {
  if (!limited()) return;
  std::vector<QueueKey> wake;
  {
    std::lock_guard lock(mutex_);
    queued_.erase(key);
    const std::size_t before = held_.size();
    held_.erase(key);
    expireLocked(now);
    if (held_.size() < before) wake = headsLocked();
  }
  wakeAll(wake);
}

RolloutSlots::Counts RolloutSlots::tick(core::TimePoint now) {
  if (!limited()) return {};
  std::vector<QueueKey> wake;
  Counts counts;
  {
    std::lock_guard lock(mutex_);
    const std::size_t before = held_.size();
    expireLocked(now);
    if (held_.size() < before) wake = headsLocked();
    counts = {held_.size(), queued_.size()};
  }
  wakeAll(wake);
  return counts;
}

}  // namespace restarter::controller
