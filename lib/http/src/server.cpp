#include "restarter/http/server.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <list>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

#include "worker_pool.hpp"

namespace restarter::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

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
  }
  return "unknown";
}

bool Request::reserve(std::size_t bytes) const { return reserve_ ? reserve_(bytes) : false; }

namespace detail {
struct RequestAccess {
  static void setReserve(Request& request, std::function<bool(std::size_t)> reserve) {
    request.reserve_ = std::move(reserve);
  }
};
}  // namespace detail

namespace {

// Bytes asked of the socket per read: a head is read in small steps (it is held until complete,
// and most are far smaller), a body in large ones (it is copied into its string at once).
constexpr std::size_t kHeadReadBytes = 4 * 1024;
constexpr std::size_t kBodyReadBytes = 64 * 1024;
// At most this much is discarded while lingering before a close (see Limits::lingerTimeout).
constexpr std::size_t kMaxLingerBytes = 1024 * 1024;
// Retry-After on 503: the budget and the queue drain within a request's time.
constexpr int kRetryAfterSeconds = 1;
// After a failed accept (e.g. no file descriptor left) wait this long before the next, rather
// than spinning on the error.
constexpr std::chrono::milliseconds kAcceptBackoff{50};

class ConnectionBase;

// What the server and its connections share. Lives as long as the last connection.
// Thread-safety: the registry (open, idle, stopping) is guarded by `mutex`; counters and the
// budget are atomics; the rest is set before start() and read-only afterwards.
struct Shared {
  Limits limits;
  std::vector<Route> routes;
  Observer* observer = nullptr;
  std::unique_ptr<asio::ssl::context> tls;
  std::unique_ptr<detail::WorkerPool> pool;

  std::atomic<std::size_t> inFlight{0};
  std::array<std::atomic<std::uint64_t>, kCloseReasonCount> closed{};
  std::array<std::atomic<std::uint64_t>, kRejectReasonCount> rejected{};
  std::atomic<std::uint64_t> requests{0};

  std::mutex mutex;
  std::unordered_set<ConnectionBase*> open;
  std::list<ConnectionBase*> idle;  // oldest first
  // Set under `mutex` (admission checks it there); atomic so that answers read it without the lock.
  std::atomic<bool> stopping{false};

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

enum class State { Idle, Handshake, Head, Body, Handling, Writing, Lingering };

template <typename Stream>
class Connection final : public ConnectionBase {
 public:
  static constexpr bool kTls = !std::is_same_v<Stream, tcp::socket>;

  Connection(std::shared_ptr<Shared> shared, tcp::socket socket)
      : shared_(std::move(shared)),
        executor_(socket.get_executor()),
        stream_(makeStream(std::move(socket), *shared_)),
        timer_(executor_),
        buffer_(shared_->limits.maxHeadBytes + kBodyReadBytes),
        acceptedAt_(SteadyClock::now()) {}

  ~Connection() override {
    release();
    bool registered = false;
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      registered = shared_->open.erase(this) > 0;
      if (inIdle) shared_->idle.erase(idleAt);
      inIdle = false;
    }
    if (!closed_ && registered) shared_->countClose(CloseReason::Stopped);
  }

  void postStart() override {
    asio::post(executor_, [self = self()] { self->start(); });
  }

  void postClose(CloseReason reason) override {
    asio::post(executor_, [self = self(), reason] { self->close(reason); });
  }

 private:
  // Starts the state machine; runs once, on the strand.
  void start() {
    if (closed_) return;
    if constexpr (kTls) {
      // Idle (evictable) until the client's first handshake byte: nothing has been read from the
      // socket yet, so waiting for readability cannot miss buffered data.
      state_ = State::Idle;
      becomeIdle();
      arm(acceptedAt_ + shared_->limits.handshakeTimeout, CloseReason::HandshakeDeadline);
      socket().async_wait(tcp::socket::wait_read, [self = self()](const beast::error_code& ec) {
        if (self->closed_) return;
        if (ec) return self->close(CloseReason::Error);
        self->becomeBusy();
        self->state_ = State::Handshake;
        self->stream_.async_handshake(asio::ssl::stream_base::server, [self](const beast::error_code& error) {
          if (self->closed_) return;
          if (error) return self->close(CloseReason::HandshakeFailed);
          self->startRequest(true);
        });
      });
    } else {
      startRequest(true);
    }
  }

  static Stream makeStream(tcp::socket socket, Shared& shared) {
    if constexpr (kTls) {
      return Stream(std::move(socket), *shared.tls);
    } else {
      return socket;
    }
  }

  std::shared_ptr<Connection> self() { return std::static_pointer_cast<Connection>(shared_from_this()); }

  tcp::socket& socket() {
    if constexpr (kTls) {
      return stream_.next_layer();
    } else {
      return stream_;
    }
  }

  // --- deadlines: one timer, re-armed for each phase; a stale expiry is ignored by generation.
  void arm(SteadyClock::time_point at, CloseReason reason) {
    const std::uint64_t generation = ++timerGeneration_;
    timer_.expires_at(at);
    timer_.async_wait([self = self(), generation, reason](const beast::error_code& ec) {
      if (ec || generation != self->timerGeneration_ || self->closed_) return;
      if (self->state_ == State::Lingering) return self->close(self->lingerReason_);
      self->close(reason);
    });
  }
  void disarm() {
    ++timerGeneration_;
    timer_.cancel();
  }

  // --- the registry's idle list (evictable connections, oldest first).
  void becomeIdle() {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    if (inIdle || shared_->open.count(this) == 0) return;  // evicted meanwhile
    idleAt = shared_->idle.insert(shared_->idle.end(), this);
    inIdle = true;
  }
  void becomeBusy() {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    if (!inIdle) return;
    shared_->idle.erase(idleAt);
    inIdle = false;
  }

  // --- requests.
  void startRequest(bool first) {
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(shared_->limits.maxHeadBytes));
    parser_->body_limit(static_cast<std::uint64_t>(shared_->limits.maxBodyBytes));
    parser_->eager(false);  // stop after the head, to route and charge before reading the body
    if (buffer_.size() == 0) buffer_.shrink_to_fit();  // an idle connection holds no buffer
    if (!first && buffer_.size() > 0) {
      // The next request's bytes arrived with the previous one (pipelining).
      state_ = State::Head;
      arm(SteadyClock::now() + shared_->limits.headTimeout, CloseReason::HeadDeadline);
      return parse();
    }
    state_ = State::Idle;
    becomeIdle();
    if (first) {
      arm(acceptedAt_ + shared_->limits.headTimeout, CloseReason::HeadDeadline);
    } else {
      arm(SteadyClock::now() + shared_->limits.idleTimeout, CloseReason::IdleDeadline);
    }
    readSome();
  }

  void readSome() {
    const std::size_t want = state_ == State::Body ? kBodyReadBytes : kHeadReadBytes;
    const std::size_t room = buffer_.max_size() - buffer_.size();
    if (room == 0) return reject(RejectReason::HeadTooLarge);  // the parser bounds the head first
    stream_.async_read_some(
        buffer_.prepare(std::min(want, room)),
        [self = self()](const beast::error_code& ec, std::size_t bytes) { self->onRead(ec, bytes); });
  }

  void onRead(const beast::error_code& ec, std::size_t bytes) {
    if (closed_) return;
    if (ec) {
      // The client went away: between requests that is how keep-alive ends.
      const bool peer = ec == asio::error::eof || ec == asio::error::connection_reset ||
                        ec == asio::ssl::error::stream_truncated;
      return close(peer ? CloseReason::Peer : CloseReason::Error);
    }
    buffer_.commit(bytes);
    if (state_ == State::Idle && bytes > 0) {
      becomeBusy();
      state_ = State::Head;
      // A later request's head is timed from its first byte; the first one's from accept.
      if (requestsServed_ > 0) arm(SteadyClock::now() + shared_->limits.headTimeout, CloseReason::HeadDeadline);
    }
    parse();
  }

  void parse() {
    while (true) {
      if (buffer_.size() == 0) return readSome();
      beast::error_code ec;
      const std::size_t used = parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      // The body grows inside put(), also when it then asks for more: charge it first.
      if (state_ == State::Body && !chargeBodyGrowth()) return;
      if (ec == bhttp::error::need_more) return readSome();
      if (ec == bhttp::error::header_limit) return reject(RejectReason::HeadTooLarge);
      if (ec == bhttp::error::body_limit) return reject(RejectReason::BodyTooLarge);
      if (ec) return reject(RejectReason::Malformed);
      if (state_ == State::Head && parser_->is_header_done() && !onHead()) return;
      if (parser_->is_done()) return onRequest();
    }
  }

  // The head is complete: route, and check the body's size against the limit and against what the
  // budget has free now, before reading it. False when it answered (and closes) instead.
  bool onHead() {
    state_ = State::Body;
    const auto& head = parser_->get();
    const std::string_view target(head.target().data(), head.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    const std::string_view method(head.method_string().data(), head.method_string().size());
    route_ = nullptr;
    bool pathKnown = false;
    for (const Route& route : shared_->routes) {
      if (route.path != path) continue;
      pathKnown = true;
      if (route.method == method) route_ = &route;
    }
    const auto length = parser_->content_length();
    const bool hasBody = parser_->chunked() || (length && *length > 0);
    if (route_ == nullptr) {
      // Answered without reading a body, so the connection cannot carry another request after it.
      reject(RejectReason::NotFound, pathKnown ? 405 : 404, hasBody);
      return false;
    }
    if (length && *length > shared_->limits.maxBodyBytes) {
      reject(RejectReason::BodyTooLarge);
      return false;
    }
    // Refused from the head when it cannot fit now, but nothing is held until bytes arrive
    // (chargeBodyGrowth): a client that declares a large body and sends it slowly holds only what
    // it sent, so it cannot keep the budget from the small reviews behind it.
    const std::size_t cost =
        static_cast<std::size_t>(length.value_or(0)) * std::max<std::size_t>(route_->costFactor, 1);
    if (!shared_->fits(cost)) {
      reject(RejectReason::OverBudget);
      return false;
    }
    parser_->eager(true);
    if (!parser_->is_done()) arm(SteadyClock::now() + shared_->limits.bodyTimeout, CloseReason::BodyDeadline);
    return true;
  }

  // A body is charged as it arrives, times the route's factor: a Content-Length body by the bytes
  // received (its string is reserved whole at the head, but only written pages are resident), a
  // chunked one by its string's capacity (it grows by reallocation). Once complete, a body of n
  // bytes holds n x costFactor. False when it answered 503 (and closes) instead.
  bool chargeBodyGrowth() {
    const auto& body = parser_->get().body();
    const std::size_t held = parser_->chunked() ? body.capacity() : body.size();
    const std::size_t need = held * std::max<std::size_t>(route_->costFactor, 1);
    const std::size_t have = charged_.load();
    if (need <= have) return true;
    if (!shared_->charge(need - have)) {
      reject(RejectReason::OverBudget);
      return false;
    }
    charged_ += need - have;
    return true;
  }

  void onRequest() {
    disarm();
    state_ = State::Handling;
    auto& message = parser_->get();
    keepAlive_ = message.keep_alive();
    http10_ = message.version() < 11;
    request_.method = std::string(message.method_string());
    request_.target = std::string(message.target());
    request_.body = std::move(message.body());
    if constexpr (kTls) request_.tls = stream_.native_handle();
    detail::RequestAccess::setReserve(request_, [this](std::size_t total) { return reserveTotal(total); });
    parser_.reset();  // frees the head; the body now lives in request_
    if (route_->dispatch == Dispatch::Inline) return writeResponse(callHandler());
    const bool queued = shared_->pool && shared_->pool->tryPost([self = self()] {
      Response response = self->callHandler();
      asio::post(self->executor_, [self, response = std::move(response)]() mutable {
        self->writeResponse(std::move(response));
      });
    });
    if (!queued) {
      release();
      reject(RejectReason::QueueFull, 503, false);
    }
  }

  // Runs on an I/O thread (Inline) or a worker (Pool); nothing else touches request_ meanwhile.
  Response callHandler() {
    try {
      return route_->handler(request_);
    } catch (...) {
      return Response{500, "text/plain; charset=utf-8", "internal error\n"};
    }
  }

  bool reserveTotal(std::size_t total) {
    std::size_t have = charged_.load();
    if (total <= have) return true;
    if (!shared_->charge(total - have)) return false;
    charged_ += total - have;
    return true;
  }

  void release() { shared_->release(charged_.exchange(0)); }

  // An answer of the server's own. `closeAfter`: the request's body (if any) was not read, so the
  // connection cannot go on.
  void reject(RejectReason reason, int status = 0, bool closeAfter = true) {
    if (status == 0) {
      switch (reason) {
        case RejectReason::Malformed: status = 400; break;
        case RejectReason::HeadTooLarge: status = 431; break;
        case RejectReason::BodyTooLarge: status = 413; break;
        case RejectReason::OverBudget:
        case RejectReason::QueueFull: status = 503; break;
        case RejectReason::NotFound: status = 404; break;
      }
    }
    shared_->countReject(reason);
    disarm();
    Response response;
    response.status = status;
    response.body =
        std::string(bhttp::obsolete_reason(bhttp::int_to_status(static_cast<unsigned>(status)))) + "\n";
    response.retryAfterSeconds = status == 503 ? kRetryAfterSeconds : 0;
    response.close = closeAfter;
    if (closeAfter) {
      keepAlive_ = false;
      closeAfterWrite_ = CloseReason::Rejected;
      // The part of a body received so far goes now, with the charge for it after the write:
      // memory must never outlast its charge while the connection lingers.
      parser_.reset();
    } else if (parser_) {
      keepAlive_ = parser_->get().keep_alive();
      http10_ = parser_->get().version() < 11;
    }
    writeResponse(std::move(response));
  }

  void writeResponse(Response response) {
    if (closed_) return release();
    const bool closeAfter = response.close || !keepAlive_ || shared_->stopping.load();
    if (closeAfter && closeAfterWrite_ != CloseReason::Rejected) closeAfterWrite_ = CloseReason::Peer;
    out_.clear();
    const unsigned status = static_cast<unsigned>(response.status);
    out_ += "HTTP/1.1 " + std::to_string(status) + " ";
    out_ += std::string_view(bhttp::obsolete_reason(bhttp::int_to_status(status)));
    out_ += "\r\nContent-Type: " + response.contentType;
    out_ += "\r\nContent-Length: " + std::to_string(response.body.size());
    if (response.retryAfterSeconds > 0)
      out_ += "\r\nRetry-After: " + std::to_string(response.retryAfterSeconds);
    if (closeAfter) {
      out_ += "\r\nConnection: close";
    } else if (http10_) {
      out_ += "\r\nConnection: keep-alive";
    }
    out_ += "\r\n\r\n";
    out_ += response.body;
    response.body = std::string();
    shared_->requests.fetch_add(1, std::memory_order_relaxed);
    state_ = State::Writing;
    arm(SteadyClock::now() + shared_->limits.writeTimeout, CloseReason::WriteDeadline);
    asio::async_write(stream_, asio::buffer(out_),
                      [self = self(), closeAfter](const beast::error_code& ec, std::size_t) {
                        self->onWritten(ec, closeAfter);
                      });
  }

  void onWritten(const beast::error_code& ec, bool closeAfter) {
    release();
    request_.body = std::string();
    out_ = std::string();
    if (closed_) return;
    if (ec) return close(CloseReason::Error);
    ++requestsServed_;
    if (closeAfter) return linger(closeAfterWrite_.value_or(CloseReason::Peer));
    startRequest(false);
  }

  // Ends our side, then discards what the client still sends (its body, or nothing) until it
  // closes, for at most lingerTimeout and kMaxLingerBytes: closing with unread bytes would reset
  // the connection and could destroy the answer before the client read it.
  void linger(CloseReason reason) {
    state_ = State::Lingering;
    lingerReason_ = reason;
    beast::error_code ignored;
    socket().shutdown(tcp::socket::shutdown_send, ignored);
    arm(SteadyClock::now() + shared_->limits.lingerTimeout, reason);
    buffer_.clear();
    drain();
  }
  void drain() {
    buffer_.clear();
    socket().async_read_some(buffer_.prepare(kBodyReadBytes),
                             [self = self()](const beast::error_code& ec, std::size_t bytes) {
                               if (self->closed_) return;
                               self->lingered_ += bytes;
                               if (ec || self->lingered_ > kMaxLingerBytes)
                                 return self->close(self->lingerReason_);
                               self->drain();
                             });
  }

  void close(CloseReason reason) {
    if (closed_) return;
    closed_ = true;
    disarm();
    // A handler still running may yet reserve; then the destructor releases.
    parser_.reset();  // a body cut off at its deadline, before its charge is released
    if (state_ != State::Handling) release();
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      shared_->open.erase(this);
      if (inIdle) shared_->idle.erase(idleAt);
      inIdle = false;
    }
    // Counted before the client can see the close.
    shared_->countClose(reason);
    beast::error_code ignored;
    socket().close(ignored);
    // buffer_ is not freed here: a read may still be in flight (a deadline fired while it waited),
    // and its completion, which the close only cancels, may still write into the buffer (the TLS
    // engine copies what it had decrypted). It goes with the connection, once the last handler
    // holding it has run.
  }

  std::shared_ptr<Shared> shared_;
  asio::any_io_executor executor_;  // the connection's strand
  Stream stream_;
  asio::steady_timer timer_;
  std::uint64_t timerGeneration_ = 0;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  const Route* route_ = nullptr;
  Request request_;
  std::atomic<std::size_t> charged_{0};  // this request's budget charge (workers may add to it)
  State state_ = State::Idle;
  bool closed_ = false;
  bool keepAlive_ = true;
  bool http10_ = false;
  std::optional<CloseReason> closeAfterWrite_;
  CloseReason lingerReason_ = CloseReason::Peer;
  std::size_t lingered_ = 0;
  std::uint64_t requestsServed_ = 0;
  std::string out_;
  SteadyClock::time_point acceptedAt_;
};

}  // namespace

struct Server::Impl {
  ServerOptions options;
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  asio::io_context io;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::optional<tcp::acceptor> acceptor;
  std::optional<asio::steady_timer> backoff;
  std::vector<std::thread> threads;
  bool started = false;
  bool running = false;

  explicit Impl(ServerOptions o) : options(std::move(o)) {}

  void accept() {
    acceptor->async_accept(asio::make_strand(io), [this](const beast::error_code& ec, tcp::socket socket) {
      onAccept(ec, std::move(socket));
    });
  }

  void onAccept(const beast::error_code& ec, tcp::socket socket) {
    {
      std::lock_guard<std::mutex> lock(shared->mutex);
      if (shared->stopping) return;
    }
    if (ec) {
      if (ec == asio::error::operation_aborted) return;
      // Out of descriptors or memory: back off instead of spinning on the error.
      backoff->expires_after(kAcceptBackoff);
      backoff->async_wait([this](const beast::error_code& error) {
        if (!error) accept();
      });
      return;
    }
    beast::error_code ignored;
    // No Nagle: an answer is one write; with Nagle and the peer's delayed ACK a TLS record split
    // over two segments could wait ~40 ms.
    socket.set_option(tcp::no_delay(true), ignored);
    std::shared_ptr<ConnectionBase> connection;
    try {
      if (shared->tls) {
        connection = std::make_shared<Connection<asio::ssl::stream<tcp::socket>>>(shared, std::move(socket));
      } else {
        connection = std::make_shared<Connection<tcp::socket>>(shared, std::move(socket));
      }
    } catch (...) {
      socket.close(ignored);  // no memory, or no SSL object: this connection cannot be served
      accept();
      return;
    }
    std::shared_ptr<ConnectionBase> victim;
    bool admitted = true;
    {
      std::lock_guard<std::mutex> lock(shared->mutex);
      if (shared->open.size() >= shared->limits.maxConnections) {
        admitted = false;
        while (!shared->idle.empty()) {
          ConnectionBase* oldest = shared->idle.front();
          shared->idle.pop_front();
          oldest->inIdle = false;
          shared->open.erase(oldest);
          victim = oldest->weak_from_this().lock();  // null while it is being destroyed: gone anyway
          admitted = true;
          if (victim) break;
        }
      }
      if (admitted) shared->open.insert(connection.get());
    }
    if (victim) victim->postClose(CloseReason::Evicted);
    if (admitted) {
      if (shared->observer) shared->observer->connectionOpened();
      connection->postStart();
    } else {
      shared->countClose(CloseReason::RefusedAtCap);
      connection.reset();  // closes the socket; it never counted as open
    }
    accept();
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
    beast::error_code ec;
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
    const int port = acceptor->local_endpoint(ec).port();
    if (ec) return cannotListen(ec.message());
    bool needPool = false;
    for (const Route& route : shared->routes) needPool = needPool || route.dispatch == Dispatch::Pool;
    if (needPool) shared->pool = std::make_unique<detail::WorkerPool>(options.workers, options.maxQueued);
    backoff.emplace(acceptor->get_executor());
    work.emplace(io.get_executor());
    accept();
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

  void stop() {
    std::vector<std::shared_ptr<ConnectionBase>> open;
    {
      std::lock_guard<std::mutex> lock(shared->mutex);
      if (shared->stopping) return;
      shared->stopping = true;
      for (ConnectionBase* connection : shared->open) {
        if (auto strong = connection->weak_from_this().lock()) open.push_back(std::move(strong));
      }
    }
    if (acceptor) {
      asio::post(acceptor->get_executor(), [this] {
        beast::error_code ignored;
        acceptor->close(ignored);
        backoff->cancel();
      });
    }
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
  return stats;
}

}  // namespace restarter::http
