#include "restarter/controller/announcements.hpp"

namespace restarter::controller {

Announcements::Announcements(std::size_t bound) : bound_(bound == 0 ? 1 : bound) {}

void Announcements::erase(std::map<Id, Entry>::iterator it) {
  byOrder_.erase(it->second.order);
  entries_.erase(it);
}

void Announcements::set(const Id& id, std::string state, base::Clock::MonotonicTime at) {
  auto it = entries_.find(id);
  if (it != entries_.end()) {
    byOrder_.erase(it->second.order);
  } else {
    if (entries_.size() >= bound_) erase(entries_.find(byOrder_.begin()->second));
    it = entries_.emplace(id, Entry{}).first;
  }
  it->second = Entry{std::move(state), at, next_};
  byOrder_.emplace(next_++, id);
}

bool Announcements::once(const std::string& key, std::string_view topic, const std::string& state) {
  std::lock_guard lock(mutex_);
  Id id{key, std::string(topic)};
  const auto it = entries_.find(id);
  if (it != entries_.end() && it->second.state == state) return false;
  set(id, state, base::Clock::MonotonicTime{});
  return true;
}

bool Announcements::every(const std::string& key, std::string_view topic, base::Clock::MonotonicTime now,
                          milliseconds interval) {
  std::lock_guard lock(mutex_);
  Id id{key, std::string(topic)};
  const auto it = entries_.find(id);
  if (it != entries_.end() && now - it->second.at < interval) return false;
  set(id, {}, now);
  return true;
}

void Announcements::forget(const std::string& key) {
  std::lock_guard lock(mutex_);
  for (auto it = entries_.lower_bound(Id{key, {}}); it != entries_.end() && it->first.first == key;) {
    auto next = std::next(it);
    erase(it);
    it = next;
  }
}

void Announcements::forget(const std::string& key, std::string_view topic) {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(Id{key, std::string(topic)});
  if (it != entries_.end()) erase(it);
}

std::size_t Announcements::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace restarter::controller
