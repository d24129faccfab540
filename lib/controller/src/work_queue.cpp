#include "restarter/controller/work_queue.hpp"

#include <algorithm>
#include <utility>

namespace restarter::controller {

WorkQueue::WorkQueue(base::Clock& clock, cache::BackoffPolicy backoff, base::Random& random)
    : clock_(clock), backoff_(backoff), random_(random) {}

void WorkQueue::queueLocked(const QueueKey& key, Turn turn) {
  auto it = waiting_.find(key);
  if (it == waiting_.end()) {
    waiting_.emplace(key, turn);
    byDue_.emplace(turn.due, key);
    return;
  }
  it->second.reasons |= turn.reasons;
  if (it->second.due <= turn.due) return;  // already due earlier: keep it (deduplication)
  auto [first, last] = byDue_.equal_range(it->second.due);
  for (auto entry = first; entry != last; ++entry) {
    if (entry->second == key) {
      byDue_.erase(entry);
      break;
    }
  }
  it->second.due = turn.due;
  byDue_.emplace(turn.due, key);
}

void WorkQueue::add(const QueueKey& key, QueueReason reason, milliseconds delay) {
  const Turn turn{clock_.monotonicNow() + std::max(delay, milliseconds(0)), reason};
  {
    std::lock_guard lock(mutex_);
    if (shutDown_) return;
    if (processing_.count(key) > 0) {
      auto [it, inserted] = dirty_.emplace(key, turn);
      if (!inserted) {
        it->second.due = std::min(it->second.due, turn.due);
        it->second.reasons |= turn.reasons;
      }
    } else {
      queueLocked(key, turn);
    }
    ++generation_;
  }
  cv_.notify_all();
}

milliseconds WorkQueue::addRateLimited(const QueueKey& key, milliseconds atLeast) {
  int count = 0;
  {
    std::lock_guard lock(mutex_);
    count = ++failures_[key];
  }
  milliseconds delay = std::max(cache::backoffDelay(backoff_, count, random_.uniform()), atLeast);
  add(key, QueueReason::ErrorRetry, delay);
  return delay;
}

void WorkQueue::forget(const QueueKey& key) {
  std::lock_guard lock(mutex_);
  failures_.erase(key);
}

int WorkQueue::failures(const QueueKey& key) const {
  std::lock_guard lock(mutex_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

WorkQueue::Taken WorkQueue::takeFirstLocked() {
  QueueKey key = std::move(byDue_.begin()->second);
  byDue_.erase(byDue_.begin());
  const auto waiting = waiting_.find(key);
  const QueueReasons reasons = waiting->second.reasons;
  waiting_.erase(waiting);
  processing_.insert(key);
  return Taken{std::move(key), reasons};
}

std::optional<WorkQueue::Taken> WorkQueue::tryGet(base::Clock::MonotonicTime now) {
  std::lock_guard lock(mutex_);
  if (shutDown_ || byDue_.empty() || byDue_.begin()->first > now) return std::nullopt;
  return takeFirstLocked();
}

std::optional<WorkQueue::Taken> WorkQueue::get(std::stop_token stop) {
  // A wait is bounded so that a clock whose monotonic time does not follow the condition
  // variable's (a test's fake clock) can delay a due key by at most this long.
  constexpr milliseconds kMaxWait(1000);
  std::unique_lock lock(mutex_);
  while (!shutDown_ && !stop.stop_requested()) {
    const base::Clock::MonotonicTime now = clock_.monotonicNow();
    if (!byDue_.empty() && byDue_.begin()->first <= now) return takeFirstLocked();
    milliseconds wait = kMaxWait;
    if (!byDue_.empty()) {
      wait = std::min(wait, std::chrono::ceil<milliseconds>(byDue_.begin()->first - now));
    }
    const std::uint64_t seen = generation_;
    cv_.wait_for(lock, stop, wait, [&] { return shutDown_ || generation_ != seen; });
  }
  return std::nullopt;
}

void WorkQueue::done(const QueueKey& key) {
  {
    std::lock_guard lock(mutex_);
    processing_.erase(key);
    auto it = dirty_.find(key);
    if (it == dirty_.end()) return;
    const Turn turn = it->second;
    dirty_.erase(it);
    if (!shutDown_) queueLocked(key, turn);
    ++generation_;
  }
  cv_.notify_all();
}

std::optional<base::Clock::MonotonicTime> WorkQueue::nextDue() const {
  std::lock_guard lock(mutex_);
  if (byDue_.empty()) return std::nullopt;
  return byDue_.begin()->first;
}

std::size_t WorkQueue::depth() const {
  std::lock_guard lock(mutex_);
  std::size_t count = waiting_.size() + processing_.size();
  for (const auto& [key, turn] : dirty_) {
    (void)turn;
    if (waiting_.count(key) == 0 && processing_.count(key) == 0) ++count;
  }
  return count;
}

void WorkQueue::shutDown() {
  {
    std::lock_guard lock(mutex_);
    shutDown_ = true;
    ++generation_;
  }
  cv_.notify_all();
}

}  // namespace restarter::controller
