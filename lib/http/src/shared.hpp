#pragma once
// Internal to restarter::http: what the server and its connections share. server.cpp owns the
// listener (accepting, admitting at the connection bound, evicting the oldest idle connection,
// start and stop); connection.cpp owns each connection's state machine (TLS handshake, head, body,
// handler, answer, keep-alive). docs/architecture.md, "Bounded servers".

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

#include "restarter/http/server.hpp"
#include "worker_pool.hpp"

namespace restarter::http::detail {

class ConnectionBase;

// What the server and its connections share. Lives as long as the last connection.
// Thread-safety: the registry (open, idle, stopping) is guarded by `mutex`; counters and the
// budget are atomics; the rest is set before start() and read-only afterwards.
struct Shared {
  Limits limits;
  std::vector<Route> routes;
  Observer* observer = nullptr;
  std::unique_ptr<boost::asio::ssl::context> tls;
  std::unique_ptr<WorkerPool> pool;

  std::atomic<std::size_t> inFlight{0};
  std::array<std::atomic<std::uint64_t>, kCloseReasonCount> closed{};
  std::array<std::atomic<std::uint64_t>, kRejectReasonCount> rejected{};
  std::atomic<std::uint64_t> requests{0};

  std::mutex mutex;
  std::unordered_set<ConnectionBase*> open;
  std::list<ConnectionBase*> idle;  // oldest first
  // Set under `mutex` (admission checks it there); atomic so that answers read it without the lock.
  // Once set, every answer closes its connection and no connection starts waiting anew
  // (Server::shutdown).
  std::atomic<bool> stopping{false};
  // Notified (without the lock) whenever a connection leaves `open`, for Server::shutdown's wait.
  std::condition_variable drained;

  // Whether `bytes` more would fit now; charges nothing (a later charge may still fail).
  bool fits(std::size_t bytes) const {
    const std::size_t current = inFlight.load(std::memory_order_relaxed);
    return current <= limits.maxInFlightBytes && bytes <= limits.maxInFlightBytes - current;
  }
  bool charge(std::size_t bytes) {
    if (bytes == 0) return true;
    std::size_t current = inFlight.load(std::memory_order_relaxed);
    do {
      if (current > limits.maxInFlightBytes || bytes > limits.maxInFlightBytes - current) return false;
    } while (!inFlight.compare_exchange_weak(current, current + bytes, std::memory_order_relaxed));
    if (observer) observer->inFlightBytesChanged(static_cast<std::int64_t>(bytes));
    return true;
  }
  void release(std::size_t bytes) {
    if (bytes == 0) return;
    inFlight.fetch_sub(bytes, std::memory_order_relaxed);
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
};

// The registry's view of a connection. Its registry fields are guarded by Shared::mutex.
class ConnectionBase : public std::enable_shared_from_this<ConnectionBase> {
 public:
  virtual ~ConnectionBase() = default;
  // Starts the connection's state machine on its own strand (from any thread).
  virtual void postStart() = 0;
  // Closes the connection on its own strand (from any thread).
  virtual void postClose(CloseReason reason) = 0;

  bool inIdle = false;
  std::list<ConnectionBase*>::iterator idleAt;
};

// The connection for a socket the server accepted, not yet started (postStart() starts it): TLS
// when shared->tls is set, plain otherwise. Throws what allocation or the TLS stream's set-up throws
// (std::bad_alloc, boost::system::system_error); `socket` is then left open for the caller to close.
std::shared_ptr<ConnectionBase> makeConnection(std::shared_ptr<Shared> shared,
                                               boost::asio::ip::tcp::socket&& socket);

}  // namespace restarter::http::detail
