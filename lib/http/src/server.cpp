// The listener of restarter::http's server: binds, accepts, admits each connection under the
// connection bounds (evicting the least-deserving one for a newcomer: the oldest never served
// first), starts and stops the I/O threads, and gives memory back after
// a flood.
// Each connection's state machine is connection.cpp; what both share is shared.hpp.

#include "restarter/http/server.hpp"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/system/error_code.hpp>

#include "restarter/base/clock.hpp"
#include "shared.hpp"
#include "worker_pool.hpp"

namespace restarter::http {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using detail::ConnectionBase;
using detail::Shared;
using detail::SourceSlots;

const char* closeReasonName(CloseReason reason) noexcept {
  switch (reason) {
    case CloseReason::Peer: return "peer";
    case CloseReason::HandshakeFailed: return "handshake_failed";
    case CloseReason::HandshakeDeadline: return "handshake_deadline";
    case CloseReason::HeadDeadline: return "head_deadline";
    case CloseReason::BodyDeadline: return "body_deadline";
    case CloseReason::IdleDeadline: return "idle_deadline";
    case CloseReason::WriteDeadline: return "write_deadline";
    case CloseReason::Evicted: return "evicted_idle";
    case CloseReason::RefusedAtCap: return "refused_at_cap";
    case CloseReason::Rejected: return "rejected";
    case CloseReason::Error: return "error";
    case CloseReason::Stopped: return "stopped";
    case CloseReason::TooSlow: return "too_slow";
    case CloseReason::EvictedSlow: return "evicted_slow";
    case CloseReason::RefusedSourceShare: return "refused_source_share";
    case CloseReason::FirstRequestDeadline: return "first_request_deadline";
    case CloseReason::Preempted: return "preempted";
    case CloseReason::EvictedUnserved: return "evicted_unserved";
    case CloseReason::EvictedOverShare: return "evicted_over_share";
  }
  return "unknown";
}

const char* rejectReasonName(RejectReason reason) noexcept {
  switch (reason) {
    case RejectReason::Malformed: return "malformed";
    case RejectReason::HeadTooLarge: return "head_too_large";
    case RejectReason::BodyTooLarge: return "body_too_large";
    case RejectReason::OverBudget: return "over_budget";
    case RejectReason::QueueFull: return "queue_full";
    case RejectReason::NotFound: return "not_found";
    case RejectReason::SourceOverBudget: return "source_over_budget";
  }
  return "unknown";
}

bool Request::reserve(std::size_t bytes) const { return reserve_ ? reserve_(bytes) : false; }

namespace {

// After a failed accept (e.g. no file descriptor left) wait this long before the next, rather
// than spinning on the error.
constexpr std::chrono::milliseconds kAcceptBackoff{50};
// How many connections one accept completion takes from the listen queue at most (the first by
// the asynchronous accept, the rest without waiting). One per completion would admit one
// connection per round of the I/O loop: with 64 connections pipelining requests that is one
// admission per 64 handlers run, and a probe queued behind a few hundred attacking connects would
// wait seconds before it is even accepted (docs/architecture.md "Bounded servers"). A batch ends
// early at an admission that evicts: the victim's close is posted to its strand, and it must run
// before the next admission, or the sockets open would exceed the cap by the evictions pending.
constexpr std::size_t kAcceptBatch = 64;
// How often the server looks whether a flood has passed, and the least peak of connections (or of
// in-flight bytes) that counts as one: below it there is too little to give back to bother.
constexpr std::chrono::seconds kTrimCheckInterval{5};
constexpr std::size_t kTrimMinPeakConnections = 16;
constexpr std::size_t kTrimMinPeakInFlightBytes = 1024 * 1024;

}  // namespace

struct Server::Impl {
  ServerOptions options;
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::optional<tcp::acceptor> acceptor;
  std::optional<asio::steady_timer> backoff;
  std::optional<asio::steady_timer> trimTimer;
  std::vector<std::thread> threads;
  bool started = false;
  bool running = false;
  bool stopped = false;  // stop() ran (the owning thread's only)

  explicit Impl(ServerOptions o) : options(std::move(o)) {}

  void accept() {
    acceptor->async_accept(
        asio::make_strand(io),
        [this](const boost::system::error_code& ec, tcp::socket socket) { onAccept(ec, std::move(socket)); });
  }

  // The client's address, the key of its share: an IPv4 address mapped into IPv6 is the IPv4
  // address. "" when the socket has none (it is gone: it will close at its first read).
  static std::string sourceOf(const tcp::socket& socket) {
    boost::system::error_code ec;
    const auto endpoint = socket.remote_endpoint(ec);
    if (ec) return std::string();
    auto address = endpoint.address();
    if (address.is_v6() && address.to_v6().is_v4_mapped()) {
      address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
    }
    try {
      return address.to_string();
    } catch (const std::exception&) {
      return std::string();
    }
  }

  // The least-deserving open connection (under shared->mutex), or null when none may be evicted,
  // and in `reason` why it goes. Never one whose handler runs; at the total cap, last, one whose
  // request no worker has taken yet or whose answer is being written. In this order:
  //   1. the oldest never served that has had its newcomer grace (whatever it is doing);
  //   2. a served one receiving a request past receiveGrace (the longest receiving);
  //   3. at an address's own share (`onlySource`): its idle served one, the least recently active;
  //      at the total cap: a connection of the address holding most, if that is more than
  //      `newcomerHolds` (what the newcomer's address holds with the newcomer: a fair share of
  //      the slots for every address), a newcomer within its grace first, then an idle served one
  //      (the least recently active), then a served one receiving within its grace (a client
  //      pipelining requests is never idle), then one whose request still waits in the worker
  //      queue (no worker will run its handler), then one whose answer is being written (a client
  //      pipelining cheap requests is nearly always there). Never one whose handler runs.
  // A client that sends its request at once (the apiserver, the kubelet) is served within its
  // grace, so no flood of newcomers can evict it first, from however many addresses.
  ConnectionBase* pickVictimLocked(const std::string* onlySource, std::size_t newcomerHolds,
                                   CloseReason& reason) {
    using Clock = std::chrono::steady_clock;
    const auto now = Clock::now();
    const Limits& limits = shared->limits;
    ConnectionBase* best = nullptr;
    // Smaller is less deserving: (rule, -connections of its address, kind, when).
    std::tuple<int, long long, int, Clock::time_point> bestKey{};
    for (ConnectionBase* candidate : shared->open) {
      if (onlySource != nullptr && candidate->source != *onlySource) continue;
      // Never one being answered, unless at the total cap its request still waits in the queue.
      const bool answering = candidate->activity == ConnectionBase::Activity::Answering;
      if (answering && (onlySource != nullptr || !(candidate->inQueue || candidate->writing))) continue;
      const bool idle = candidate->activity == ConnectionBase::Activity::Idle;
      std::tuple<int, long long, int, Clock::time_point> key;
      if (!answering && !candidate->served &&
          (onlySource != nullptr || now - candidate->acceptedAt >= limits.newcomerGrace)) {
        key = {1, 0, 0, candidate->acceptedAt};
      } else if (!answering && candidate->served && !idle && now - candidate->since > limits.receiveGrace) {
        key = {2, 0, 0, candidate->since};
      } else if (onlySource != nullptr) {
        if (answering || !candidate->served || !idle) continue;
        key = {3, 0, 0, candidate->since};
      } else {
        const auto it = shared->sources.find(candidate->source);
        const std::size_t held = it == shared->sources.end() ? 0 : it->second.connections;
        if (held <= newcomerHolds) continue;
        const int kind = answering ? (candidate->inQueue ? 3 : 4) : !candidate->served ? 0 : idle ? 1 : 2;
        key = {3, -static_cast<long long>(held), kind,
               candidate->served ? candidate->since : candidate->acceptedAt};
      }
      if (best == nullptr || key < bestKey) {
        best = candidate;
        bestKey = key;
      }
    }
    if (best != nullptr) {
      const bool idle = best->activity == ConnectionBase::Activity::Idle;
      switch (std::get<0>(bestKey)) {
        case 1: reason = idle ? CloseReason::Evicted : CloseReason::EvictedUnserved; break;
        case 2: reason = CloseReason::EvictedSlow; break;
        default: reason = onlySource != nullptr ? CloseReason::Evicted : CloseReason::EvictedOverShare; break;
      }
    }
    return best;
  }

  // On the acceptor's strand: admits the accepted connection and then, without waiting, up to
  // kAcceptBatch - 1 more already in the listen queue (until one evicts), and accepts again.
  void onAccept(const boost::system::error_code& ec, tcp::socket socket) {
    {
      std::lock_guard<std::mutex> lock(shared->mutex);
      if (shared->stopping) return;
    }
    if (ec) {
      if (ec == asio::error::operation_aborted) return;
      backOffThenAccept();
      return;
    }
    bool evicted = admit(std::move(socket));
    for (std::size_t taken = 1; taken < kAcceptBatch && !evicted; ++taken) {
      tcp::socket next(asio::make_strand(io));
      boost::system::error_code error;
      acceptor->accept(next, error);
      if (error == asio::error::would_block || error == asio::error::try_again) break;
      if (error) {
        backOffThenAccept();
        return;
      }
      evicted = admit(std::move(next));
    }
    accept();
  }

  // Out of descriptors or memory: back off instead of spinning on the error.
  void backOffThenAccept() {
    backoff->expires_after(kAcceptBackoff);
    backoff->async_wait([this](const boost::system::error_code& error) {
      if (!error) accept();
    });
  }

  // Admits one accepted connection under the caps (evicting or refusing, see pickVictimLocked);
  // true when it evicted a connection (whose close is posted, not done).
  bool admit(tcp::socket socket) {
    boost::system::error_code ignored;
    // No Nagle: an answer is one write; with Nagle and the peer's delayed ACK a TLS record split
    // over two segments could wait ~40 ms.
    socket.set_option(tcp::no_delay(true), ignored);
    const std::string source = sourceOf(socket);
    std::shared_ptr<ConnectionBase> connection;
    try {
      connection = detail::makeConnection(shared, std::move(socket));
    } catch (...) {
      socket.close(ignored);  // no memory, or no SSL object: this connection cannot be served
      return false;
    }
    connection->source = source;
    connection->acceptedAt = base::systemClock().monotonicNow();
    connection->since = connection->acceptedAt;
    std::shared_ptr<ConnectionBase> victim;
    CloseReason victimReason = CloseReason::Evicted;
    std::optional<CloseReason> refused;
    {
      std::lock_guard<std::mutex> lock(shared->mutex);
      const Limits& limits = shared->limits;
      // Read, not held: the victim's unregisterLocked below may erase this source's entry (its
      // last connection evicted at the total cap), so the entry is looked up again to count the
      // new connection, never kept across the eviction.
      const auto known = shared->sources.find(source);
      const std::size_t sourceConnections = known == shared->sources.end() ? 0 : known->second.connections;
      const bool atShare = sourceConnections >= limits.maxConnectionsPerSource;
      const bool atCap = shared->open.size() >= limits.maxConnections;
      if (atShare || atCap) {
        // A source at its share replaces its own; at the total cap any address's connection gives.
        ConnectionBase* chosen =
            pickVictimLocked(atShare ? &source : nullptr, sourceConnections + 1, victimReason);
        if (chosen != nullptr) {
          shared->unregisterLocked(chosen);
          victim = chosen->weak_from_this().lock();  // null while it is being destroyed: gone anyway
        } else {
          refused = atShare ? CloseReason::RefusedSourceShare : CloseReason::RefusedAtCap;
        }
      }
      if (!refused) {
        shared->open.insert(connection.get());
        ++shared->sources[source].connections;
        shared->peakOpen = std::max(shared->peakOpen, shared->open.size());
      }
    }
    if (victim) victim->postClose(victimReason);
    if (!refused) {
      if (shared->observer) shared->observer->connectionOpened();
      connection->postStart();
    } else {
      shared->countClose(*refused);
      connection.reset();  // closes the socket; it never counted as open
    }
    return victim != nullptr;
  }

  // Every kTrimCheckInterval: once the open connections (or the in-flight bytes) have fallen to
  // half of their peak since the last look, and the peak was a flood, the allocator gives its
  // free pages back to the system (glibc keeps them otherwise, and RSS would stay at the flood's
  // level for good). On the acceptor's strand.
  void scheduleTrim() {
    trimTimer->expires_after(kTrimCheckInterval);
    trimTimer->async_wait([this](const boost::system::error_code& error) {
      if (error) return;
      bool trim = false;
      {
        std::lock_guard<std::mutex> lock(shared->mutex);
        const std::size_t open = shared->open.size();
        if (shared->peakOpen >= kTrimMinPeakConnections && open * 2 <= shared->peakOpen) trim = true;
        if (trim || open * 2 <= shared->peakOpen) shared->peakOpen = open;
      }
      {
        std::lock_guard<std::mutex> lock(shared->budgetMutex);
        const std::size_t inFlight = shared->inFlight.load(std::memory_order_relaxed);
        if (shared->peakInFlight >= kTrimMinPeakInFlightBytes && inFlight * 2 <= shared->peakInFlight)
          trim = true;
        if (trim || inFlight * 2 <= shared->peakInFlight) shared->peakInFlight = inFlight;
      }
      if (trim) {
        malloc_trim(0);
        shared->trims.fetch_add(1, std::memory_order_relaxed);
      }
      scheduleTrim();
    });
  }

  core::Result<int> start() {
    const std::string host = options.host.empty() ? "0.0.0.0" : options.host;
    auto cannotListen = [&](const std::string& why) {
      return core::makeError(core::ErrorKind::Unavailable,
                             "cannot listen on " + host + ":" + std::to_string(options.port) + ": " + why);
    };
    if (started) return core::makeError(core::ErrorKind::Internal, "the server was started before");
    started = true;
    shared->limits = options.limits;
    shared->limits.maxConnections = std::max<std::size_t>(shared->limits.maxConnections, 1);
    shared->routes = options.routes;
    shared->observer = options.observer;
    if (options.tls) {
      try {
        shared->tls = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
      } catch (const std::exception& e) {
        return core::makeError(core::ErrorKind::Internal, std::string("cannot set up TLS: ") + e.what());
      }
      if (!options.tls->configure || !options.tls->configure(shared->tls->native_handle())) {
        return core::makeError(core::ErrorKind::Internal, "cannot set up TLS");
      }
    }
    boost::system::error_code ec;
    tcp::resolver resolver(io);
    const auto endpoints = resolver.resolve(host, std::to_string(options.port),
                                            tcp::resolver::passive | tcp::resolver::numeric_service, ec);
    if (ec || endpoints.empty()) return cannotListen(ec ? ec.message() : "no address");
    const tcp::endpoint endpoint = endpoints.begin()->endpoint();
    acceptor.emplace(asio::make_strand(io));
    acceptor->open(endpoint.protocol(), ec);
    if (ec) return cannotListen(ec.message());
    // SO_REUSEADDR for quick restarts; never SO_REUSEPORT, which would let a second process bind
    // the same port and silently take half the connections.
    acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
    acceptor->bind(endpoint, ec);
    if (ec) return cannotListen(ec.message());
    acceptor->listen(asio::socket_base::max_listen_connections, ec);
    if (ec) return cannotListen(ec.message());
    acceptor->non_blocking(true, ec);  // onAccept's batch takes what is queued, never waits
    if (ec) return cannotListen(ec.message());
    const int port = acceptor->local_endpoint(ec).port();
    if (ec) return cannotListen(ec.message());
    bool needPool = false;
    for (const Route& route : shared->routes) needPool = needPool || route.dispatch == Dispatch::Pool;
    if (needPool) shared->pool = std::make_unique<detail::WorkerPool>(options.workers, options.maxQueued);
    backoff.emplace(acceptor->get_executor());
    trimTimer.emplace(acceptor->get_executor());
    work.emplace(io.get_executor());
    accept();
    scheduleTrim();
    const std::size_t count = std::max<std::size_t>(options.ioThreads, 1);
    for (std::size_t i = 0; i < count; ++i) {
      try {
        threads.emplace_back([this] { runLoop(); });
      } catch (const std::system_error& e) {
        if (threads.empty()) {
          stop();
          return core::makeError(core::ErrorKind::Internal, std::string("cannot start a thread: ") + e.what());
        }
        break;
      }
    }
    running = true;
    return port;
  }

  void runLoop() {
    while (true) {
      try {
        io.run();
        return;
      } catch (...) {
        // Handlers catch what they call; should anything still escape, keep serving.
      }
    }
  }

  // Stops admitting connections and closes the listener (the first call); returns the open
  // connections, taken under the lock, for the caller to close or not.
  std::vector<std::shared_ptr<ConnectionBase>> stopAccepting() {
    std::vector<std::shared_ptr<ConnectionBase>> taken;
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(shared->mutex);
      first = !shared->stopping;
      shared->stopping = true;
      for (ConnectionBase* connection : shared->open) {
        if (auto strong = connection->weak_from_this().lock()) taken.push_back(std::move(strong));
      }
    }
    if (first && acceptor) {
      asio::post(acceptor->get_executor(), [this] {
        boost::system::error_code ignored;
        acceptor->close(ignored);
        backoff->cancel();
        trimTimer->cancel();
      });
    }
    return taken;
  }

  void shutdown(Milliseconds grace) {
    if (stopped) return;
    // Idle connections are left open: a client may be writing a request into one right now, and
    // closing it would lose that request (the apiserver does not retry a POST it has written).
    // Their next answer closes them; those still idle when the grace ends are closed then.
    stopAccepting();
    {
      std::unique_lock<std::mutex> lock(shared->mutex);
      shared->drained.wait_for(lock, grace, [this] { return shared->open.empty(); });
    }
    stop();
  }

  void stop() {
    if (stopped) return;
    stopped = true;
    std::vector<std::shared_ptr<ConnectionBase>> open = stopAccepting();
    for (auto& connection : open) connection->postClose(CloseReason::Stopped);
    open.clear();
    // Handlers running on workers finish; their answers find their connections closed.
    if (shared->pool) shared->pool->stop();
    // Every socket is closed and every timer cancelled: the threads run out of work and return.
    work.reset();
    for (auto& thread : threads) {
      if (thread.joinable()) thread.join();
    }
    threads.clear();
    running = false;
  }
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Server::~Server() { stop(); }

core::Result<int> Server::start() {
  try {
    return impl_->start();
  } catch (const std::exception& e) {
    impl_->stop();
    return core::makeError(core::ErrorKind::Internal, std::string("cannot start the server: ") + e.what());
  }
}

void Server::stop() {
  if (impl_->started) impl_->stop();
}

void Server::shutdown(Milliseconds grace) {
  if (impl_->started) impl_->shutdown(grace);
}

Stats Server::stats() const {
  Stats stats;
  const Shared& shared = *impl_->shared;
  {
    std::lock_guard<std::mutex> lock(impl_->shared->mutex);
    stats.openConnections = shared.open.size();
    stats.idleConnections = shared.idle.size();
  }
  stats.inFlightBytes = shared.inFlight.load();
  for (std::size_t i = 0; i < kCloseReasonCount; ++i) stats.closed[i] = shared.closed[i].load();
  for (std::size_t i = 0; i < kRejectReasonCount; ++i) stats.rejected[i] = shared.rejected[i].load();
  stats.requests = shared.requests.load();
  stats.memoryTrims = shared.trims.load();
  return stats;
}

}  // namespace restarter::http
