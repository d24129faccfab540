#pragma once
// Internal to restarter::http: what the server and its connections share. server.cpp owns the
// listener (accepting, admitting under the connection bounds, evicting the least-deserving
// connection, the reserve, start and stop); connection.cpp owns each connection's state machine (TLS handshake, head, body,
// handler, answer, keep-alive). docs/architecture.md, "Bounded servers".

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "restarter/http/server.hpp"
#include "worker_pool.hpp"

namespace restarter::http::detail {

class ConnectionBase;

// What a charge against the in-flight budget came to.
enum class Charge { Ok, OverBudget, SourceOverBudget };

// Per client address, guarded by Shared::mutex.
struct SourceSlots {
  std::size_t connections = 0;  // open, probationers included
  std::size_t probation = 0;    // of them in the reserve
};

// What the server and its connections share. Lives as long as the last connection.
// Thread-safety: the registry (open, idle, sources, probation, stopping) is guarded by `mutex`;
// the budget (inFlight's level checks and sourceBytes) by `budgetMutex`; counters are atomics;
// the rest is set before start() and read-only afterwards.
struct Shared {
  Limits limits;
  std::vector<Route> routes;
  Observer* observer = nullptr;
  std::unique_ptr<boost::asio::ssl::context> tls;
  std::unique_ptr<WorkerPool> pool;

  std::atomic<std::size_t> inFlight{0};  // written under budgetMutex; read without it for stats
  std::array<std::atomic<std::uint64_t>, kCloseReasonCount> closed{};
  std::array<std::atomic<std::uint64_t>, kRejectReasonCount> rejected{};
  std::atomic<std::uint64_t> requests{0};

  std::mutex mutex;
  std::unordered_set<ConnectionBase*> open;
  std::list<ConnectionBase*> idle;  // oldest first
  std::unordered_map<std::string, SourceSlots> sources;
  std::size_t probation = 0;  // open connections in the reserve
  // Set under `mutex` (admission checks it there); atomic so that answers read it without the lock.
  // Once set, every answer closes its connection and no connection starts waiting anew
  // (Server::shutdown).
  std::atomic<bool> stopping{false};
  // Notified (without the lock) whenever a connection leaves `open`, for Server::shutdown's wait.
  std::condition_variable drained;

  std::mutex budgetMutex;
  std::unordered_map<std::string, std::size_t> sourceBytes;  // charged per address

  // Whether `bytes` more would fit now for `source`; charges nothing (a later charge may still
  // fail). `prompt`: the request may take the reserve (Limits::inFlightReserveBytes).
  Charge fits(const std::string& source, std::size_t bytes, bool prompt) {
    std::lock_guard<std::mutex> lock(budgetMutex);
    return check(source, bytes, prompt);
  }
  Charge charge(const std::string& source, std::size_t bytes, bool prompt) {
    if (bytes == 0) return Charge::Ok;
    {
      std::lock_guard<std::mutex> lock(budgetMutex);
      if (const Charge c = check(source, bytes, prompt); c != Charge::Ok) return c;
      inFlight.fetch_add(bytes, std::memory_order_relaxed);
      sourceBytes[source] += bytes;
    }
    if (observer) observer->inFlightBytesChanged(static_cast<std::int64_t>(bytes));
    return Charge::Ok;
  }
  void release(const std::string& source, std::size_t bytes) {
    if (bytes == 0) return;
    {
      std::lock_guard<std::mutex> lock(budgetMutex);
      inFlight.fetch_sub(bytes, std::memory_order_relaxed);
      auto it = sourceBytes.find(source);
      if (it != sourceBytes.end() && (it->second -= std::min(it->second, bytes)) == 0) sourceBytes.erase(it);
    }
    if (observer) observer->inFlightBytesChanged(-static_cast<std::int64_t>(bytes));
  }
  void countClose(CloseReason reason) {
    closed[static_cast<std::size_t>(reason)].fetch_add(1, std::memory_order_relaxed);
    if (observer) observer->connectionClosed(reason);
  }
  void countReject(RejectReason reason) {
    rejected[static_cast<std::size_t>(reason)].fetch_add(1, std::memory_order_relaxed);
    if (observer) observer->requestRejected(reason);
  }

  // Removes `connection` from the registry (under `mutex`); false when it was not in it.
  bool unregisterLocked(ConnectionBase* connection);

 private:
  Charge check(const std::string& source, std::size_t bytes, bool prompt) const {
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
};

// The registry's view of a connection. Its registry fields are guarded by Shared::mutex.
class ConnectionBase : public std::enable_shared_from_this<ConnectionBase> {
 public:
  virtual ~ConnectionBase() = default;
  // Starts the connection's state machine on its own strand (from any thread).
  virtual void postStart() = 0;
  // Closes the connection on its own strand (from any thread).
  virtual void postClose(CloseReason reason) = 0;

  // What the connection is doing, for the choice of a victim at a cap: Receiving from the first
  // byte of a handshake or request until the request is complete, Answering until the answer is
  // written, Idle otherwise.
  enum class Activity { Idle, Receiving, Answering };

  // Registry fields, guarded by Shared::mutex. `source` is set before the connection is
  // registered and never changes.
  std::string source;
  Activity activity = Activity::Idle;
  std::chrono::steady_clock::time_point since{};  // when `activity` began
  bool onProbation = false;                       // in the reserve until its first request is complete
  bool served = false;                            // it has had a request answered
  bool inIdle = false;
  std::list<ConnectionBase*>::iterator idleAt;
};

inline bool Shared::unregisterLocked(ConnectionBase* connection) {
  if (open.erase(connection) == 0) return false;
  if (connection->inIdle) idle.erase(connection->idleAt);
  connection->inIdle = false;
  auto it = sources.find(connection->source);
  if (it != sources.end()) {
    --it->second.connections;
    if (connection->onProbation) --it->second.probation;
    if (it->second.connections == 0) sources.erase(it);
  }
  if (connection->onProbation) --probation;
  connection->onProbation = false;
  return true;
}

// The connection for a socket the server accepted, not yet started (postStart() starts it): TLS
// when shared->tls is set, plain otherwise. Throws what allocation or the TLS stream's set-up throws
// (std::bad_alloc, boost::system::system_error); `socket` is then left open for the caller to close.
std::shared_ptr<ConnectionBase> makeConnection(std::shared_ptr<Shared> shared,
                                               boost::asio::ip::tcp::socket&& socket);

}  // namespace restarter::http::detail
