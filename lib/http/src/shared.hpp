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

// What a charge against the in-flight budget came to. Revoked: the connection's charge was taken
// back for a fairer share (it is being closed, Preempted) and it may charge nothing more.
enum class Charge { Ok, OverBudget, SourceOverBudget, Revoked };

// Per client address, guarded by Shared::mutex.
struct SourceSlots {
  std::size_t connections = 0;  // open
};

// What the server and its connections share. Lives as long as the last connection.
// Thread-safety: the registry (open, idle, sources, peakOpen, stopping) is guarded by `mutex`;
// the budget (inFlight's level checks, sourceBytes, holders, peakInFlight and each connection's
// budget fields)
// by `budgetMutex`; the two are never held together; counters are atomics; the rest is set before
// start() and read-only afterwards.
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
  std::atomic<std::uint64_t> trims{0};  // times memory was given back after a flood

  std::mutex mutex;
  std::unordered_set<ConnectionBase*> open;
  std::list<ConnectionBase*> idle;  // oldest first
  std::unordered_map<std::string, SourceSlots> sources;
  // The most connections open at once since memory was last given back (Server's trim).
  std::size_t peakOpen = 0;
  // Set under `mutex` (admission checks it there); atomic so that answers read it without the lock.
  // Once set, every answer closes its connection and no connection starts waiting anew
  // (Server::shutdown).
  std::atomic<bool> stopping{false};
  // Notified (without the lock) whenever a connection leaves `open`, for Server::shutdown's wait.
  std::condition_variable drained;

  std::mutex budgetMutex;
  std::unordered_map<std::string, std::size_t> sourceBytes;  // charged per address
  std::unordered_set<ConnectionBase*> holders;               // connections holding a charge
  std::size_t peakInFlight = 0;  // the most charged at once since memory was last given back

  // Whether `bytes` more would fit now for `source`; charges nothing (a later charge may still
  // fail) and takes nothing back. `prompt`: the request may take the reserve
  // (Limits::inFlightReserveBytes) and may take bytes back from addresses above their fair share.
  Charge fits(const std::string& source, std::size_t bytes, bool prompt);
  // Charges `bytes` more to `connection` (and its address). When it does not fit and `prompt`,
  // takes bytes back from other addresses' requests still arriving first (see server.hpp); those
  // connections are closed (Preempted) once the lock is let go.
  Charge charge(ConnectionBase& connection, std::size_t bytes, bool prompt);
  // Raises `connection`'s charge to at least `total` (a handler's Request::reserve).
  Charge raiseTo(ConnectionBase& connection, std::size_t total, bool prompt);
  // Gives back `bytes` of `connection`'s charge (at most what it holds).
  void release(ConnectionBase& connection, std::size_t bytes);
  // Gives back all of it.
  void releaseAll(ConnectionBase& connection);
  // What `connection` holds now.
  std::size_t chargedTo(const ConnectionBase& connection);
  // Whether `connection`'s charge may be taken back: its request is still arriving.
  void setPreemptible(ConnectionBase& connection, bool preemptible);

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
  Charge checkLocked(const std::string& source, std::size_t bytes, bool prompt) const;
  // The fair share of the budget: divided among the addresses holding bytes, `source` counted;
  // `held` is what `source` holds now.
  std::size_t fairShareLocked(const std::string& source, std::size_t& held) const;
  // Under budgetMutex: takes back charges of requests still arriving from addresses above their
  // fair share until `bytes` fit for `connection`'s address or nothing more may be taken; the
  // connections taken from are appended to `preempted`.
  Charge preemptLocked(ConnectionBase& connection, std::size_t bytes,
                       std::vector<std::shared_ptr<ConnectionBase>>& preempted);
  Charge chargeLocked(ConnectionBase& connection, std::size_t bytes, bool prompt,
                      std::vector<std::shared_ptr<ConnectionBase>>& preempted);
  void addLocked(ConnectionBase& connection, std::size_t bytes);
  std::size_t subtractLocked(ConnectionBase& connection, std::size_t bytes);
  void notifyPreempted(std::vector<std::shared_ptr<ConnectionBase>>& preempted);
};

// The registry's view of a connection. Its registry fields are guarded by Shared::mutex, its
// budget fields by Shared::budgetMutex.
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

  // Set before the connection is registered and never changed afterwards.
  std::string source;
  std::chrono::steady_clock::time_point acceptedAt{};

  // Registry fields, guarded by Shared::mutex.
  Activity activity = Activity::Idle;
  std::chrono::steady_clock::time_point since{};  // when `activity` began
  bool served = false;                            // it has had a request answered
  bool inQueue = false;  // its request waits in the worker pool's queue, no worker has taken it yet
  bool writing = false;  // its answer is being written (the handler has returned)
  bool inIdle = false;
  std::list<ConnectionBase*>::iterator idleAt;

  // Budget fields, guarded by Shared::budgetMutex.
  std::size_t charged = 0;   // its charge against the in-flight budget
  bool preemptible = false;  // its request is still arriving
  bool revoked = false;      // its charge was taken back: it charges nothing more
};

inline bool Shared::unregisterLocked(ConnectionBase* connection) {
  if (open.erase(connection) == 0) return false;
  if (connection->inIdle) idle.erase(connection->idleAt);
  connection->inIdle = false;
  auto it = sources.find(connection->source);
  if (it != sources.end()) {
    --it->second.connections;
    if (it->second.connections == 0) sources.erase(it);
  }
  return true;
}

// The connection for a socket the server accepted, not yet started (postStart() starts it): TLS
// when shared->tls is set, plain otherwise. Throws what allocation or the TLS stream's set-up throws
// (std::bad_alloc, boost::system::system_error); `socket` is then left open for the caller to close.
std::shared_ptr<ConnectionBase> makeConnection(std::shared_ptr<Shared> shared,
                                               boost::asio::ip::tcp::socket&& socket);

}  // namespace restarter::http::detail
