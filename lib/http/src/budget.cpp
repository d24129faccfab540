// The in-flight byte budget of restarter::http's server (shared.hpp's Shared): charges per
// connection and per address, the reserve for prompt requests, and the fair share that a prompt
// request takes back from addresses above theirs (docs/architecture.md, "Bounded servers").

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shared.hpp"

namespace restarter::http::detail {

Charge Shared::checkLocked(const std::string& source, std::size_t bytes, bool prompt) const {
  const std::size_t total = inFlight.load(std::memory_order_relaxed);
  const std::size_t reserve = prompt ? 0 : std::min(limits.inFlightReserveBytes, limits.maxInFlightBytes);
  const std::size_t cap = limits.maxInFlightBytes - reserve;
  if (total > cap || bytes > cap - total) return Charge::OverBudget;
  const auto it = sourceBytes.find(source);
  const std::size_t held = it == sourceBytes.end() ? 0 : it->second;
  const std::size_t share = limits.maxInFlightBytesPerSource;
  if (held > share || bytes > share - held) return Charge::SourceOverBudget;
  return Charge::Ok;
}

std::size_t Shared::fairShareLocked(const std::string& source, std::size_t& held) const {
  const auto own = sourceBytes.find(source);
  held = own == sourceBytes.end() ? 0 : own->second;
  const std::size_t sharing = sourceBytes.size() + (own == sourceBytes.end() ? 1 : 0);
  return limits.maxInFlightBytes / std::max<std::size_t>(sharing, 1);
}

void Shared::addLocked(ConnectionBase& connection, std::size_t bytes) {
  const std::size_t total = inFlight.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  peakInFlight = std::max(peakInFlight, total);
  sourceBytes[connection.source] += bytes;
  connection.charged += bytes;
  holders.insert(&connection);
}

std::size_t Shared::subtractLocked(ConnectionBase& connection, std::size_t bytes) {
  bytes = std::min(bytes, connection.charged);
  if (bytes == 0) return 0;
  connection.charged -= bytes;
  if (connection.charged == 0) holders.erase(&connection);
  inFlight.fetch_sub(bytes, std::memory_order_relaxed);
  auto it = sourceBytes.find(connection.source);
  if (it != sourceBytes.end() && (it->second -= std::min(it->second, bytes)) == 0) sourceBytes.erase(it);
  return bytes;
}

Charge Shared::preemptLocked(ConnectionBase& connection, std::size_t bytes,
                             std::vector<std::shared_ptr<ConnectionBase>>& preempted) {
  Charge result = checkLocked(connection.source, bytes, true);
  while (result == Charge::OverBudget) {
    std::size_t mine = 0;
    const std::size_t fair = fairShareLocked(connection.source, mine);
    if (mine > fair || bytes > fair - mine) return result;  // it asks for more than its share
    // The largest preemptible charge of the address holding most above its fair share.
    ConnectionBase* victim = nullptr;
    std::size_t victimSourceBytes = 0;
    for (ConnectionBase* candidate : holders) {
      if (!candidate->preemptible || candidate->revoked || candidate->source == connection.source) continue;
      const auto it = sourceBytes.find(candidate->source);
      const std::size_t theirs = it == sourceBytes.end() ? 0 : it->second;
      if (theirs <= fair) continue;
      if (victim == nullptr || theirs > victimSourceBytes ||
          (theirs == victimSourceBytes && candidate->charged > victim->charged)) {
        victim = candidate;
        victimSourceBytes = theirs;
      }
    }
    if (victim == nullptr) return result;
    const std::size_t taken = subtractLocked(*victim, victim->charged);
    victim->revoked = true;
    // Null while it is being destroyed: its destructor is waiting for this lock and closes it.
    if (auto strong = victim->weak_from_this().lock()) preempted.push_back(std::move(strong));
    if (observer) observer->inFlightBytesChanged(-static_cast<std::int64_t>(taken));
    result = checkLocked(connection.source, bytes, true);
  }
  return result;
}

Charge Shared::chargeLocked(ConnectionBase& connection, std::size_t bytes, bool prompt,
                            std::vector<std::shared_ptr<ConnectionBase>>& preempted) {
  if (connection.revoked) return Charge::Revoked;
  Charge result = checkLocked(connection.source, bytes, prompt);
  if (result == Charge::OverBudget && prompt) result = preemptLocked(connection, bytes, preempted);
  if (result == Charge::Ok) addLocked(connection, bytes);
  return result;
}

void Shared::notifyPreempted(std::vector<std::shared_ptr<ConnectionBase>>& preempted) {
  for (auto& victim : preempted) victim->postClose(CloseReason::Preempted);
  preempted.clear();
}

Charge Shared::fits(const std::string& source, std::size_t bytes, bool prompt) {
  std::lock_guard<std::mutex> lock(budgetMutex);
  const Charge result = checkLocked(source, bytes, prompt);
  if (result != Charge::OverBudget || !prompt) return result;
  // Would it fit once the addresses above their fair share gave back what they may? Answered
  // without taking anything back: the body's bytes take it as they arrive.
  std::size_t mine = 0;
  const std::size_t fair = fairShareLocked(source, mine);
  if (mine > fair || bytes > fair - mine) return result;
  std::size_t reclaimable = 0;
  for (const ConnectionBase* candidate : holders) {
    if (!candidate->preemptible || candidate->revoked || candidate->source == source) continue;
    const auto it = sourceBytes.find(candidate->source);
    if (it != sourceBytes.end() && it->second > fair) reclaimable += candidate->charged;
  }
  const std::size_t total = inFlight.load(std::memory_order_relaxed);
  const std::size_t free = limits.maxInFlightBytes - std::min(total, limits.maxInFlightBytes);
  return bytes <= free + reclaimable ? Charge::Ok : result;
}

Charge Shared::charge(ConnectionBase& connection, std::size_t bytes, bool prompt) {
  if (bytes == 0) return Charge::Ok;
  std::vector<std::shared_ptr<ConnectionBase>> preempted;
  Charge result;
  {
    std::lock_guard<std::mutex> lock(budgetMutex);
    result = chargeLocked(connection, bytes, prompt, preempted);
  }
  notifyPreempted(preempted);
  if (result == Charge::Ok && observer) observer->inFlightBytesChanged(static_cast<std::int64_t>(bytes));
  return result;
}

Charge Shared::raiseTo(ConnectionBase& connection, std::size_t total, bool prompt) {
  std::vector<std::shared_ptr<ConnectionBase>> preempted;
  Charge result = Charge::Ok;
  std::size_t added = 0;
  {
    std::lock_guard<std::mutex> lock(budgetMutex);
    if (total > connection.charged) {
      added = total - connection.charged;
      result = chargeLocked(connection, added, prompt, preempted);
    }
  }
  notifyPreempted(preempted);
  if (result == Charge::Ok && added > 0 && observer)
    observer->inFlightBytesChanged(static_cast<std::int64_t>(added));
  return result;
}

void Shared::release(ConnectionBase& connection, std::size_t bytes) {
  std::size_t released = 0;
  {
    std::lock_guard<std::mutex> lock(budgetMutex);
    released = subtractLocked(connection, bytes);
  }
  if (released > 0 && observer) observer->inFlightBytesChanged(-static_cast<std::int64_t>(released));
}

void Shared::releaseAll(ConnectionBase& connection) {
  std::size_t released = 0;
  {
    std::lock_guard<std::mutex> lock(budgetMutex);
    released = subtractLocked(connection, connection.charged);
    connection.preemptible = false;
  }
  if (released > 0 && observer) observer->inFlightBytesChanged(-static_cast<std::int64_t>(released));
}

std::size_t Shared::chargedTo(const ConnectionBase& connection) {
  std::lock_guard<std::mutex> lock(budgetMutex);
  return connection.charged;
}

void Shared::setPreemptible(ConnectionBase& connection, bool preemptible) {
  std::lock_guard<std::mutex> lock(budgetMutex);
  connection.preemptible = preemptible;
}

}  // namespace restarter::http::detail
