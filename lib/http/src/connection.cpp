// One connection of restarter::http's server: an asynchronous state machine on its own strand
// (TLS handshake, request head, body, handler, answer, keep-alive or close), with a deadline per
// phase, a minimum receive rate while a request arrives, and its head and body bytes charged to
// the server's in-flight budget (and its address's share of it). The listener that creates,
// admits and evicts connections is server.cpp; what both share is shared.hpp.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

#include "shared.hpp"

namespace restarter::http {

namespace detail {
struct RequestAccess {
  static void setReserve(Request& request, std::function<bool(std::size_t)> reserve) {
    request.reserve_ = std::move(reserve);
  }
};
}  // namespace detail

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
using detail::Charge;
using detail::ConnectionBase;
using detail::Shared;

// Bytes asked of the socket per read: a head is read in small steps (it is held until complete,
// and most are far smaller), a body in large ones (it is copied into its string at once).
constexpr std::size_t kHeadReadBytes = 4 * 1024;
constexpr std::size_t kBodyReadBytes = 64 * 1024;
// At most this much is discarded while lingering before a close (see Limits::lingerTimeout).
constexpr std::size_t kMaxLingerBytes = 1024 * 1024;
// A head is charged twice its bytes: the read buffer holds them until the head is complete, then
// the parser's fields hold a copy.
constexpr std::size_t kHeadCostFactor = 2;
// When the receive deadline passes with bytes waiting in the socket, the I/O thread is behind, not
// the client: look again this much later instead of closing.
constexpr std::chrono::milliseconds kBehindRecheck{100};

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
        buffer_(shared_->limits.maxHeadBytes + kBodyReadBytes) {
    acceptedAt = SteadyClock::now();  // the listener sets it again, before it starts the connection
  }

  ~Connection() override {
    release();
    bool registered = false;
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      registered = shared_->unregisterLocked(this);
    }
    shared_->drained.notify_all();
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
    // Every connection's first request must be complete within firstRequestTimeout of accept.
    firstRequestDeadline_ = acceptedAt + shared_->limits.firstRequestTimeout;
    if constexpr (kTls) {
      // Idle (evictable) until the client's first handshake byte: nothing has been read from the
      // socket yet, so waiting for readability cannot miss buffered data.
      state_ = State::Idle;
      if (!becomeIdle()) return close(CloseReason::Stopped);
      arm(acceptedAt + shared_->limits.handshakeTimeout, CloseReason::HandshakeDeadline);
      socket().async_wait(tcp::socket::wait_read, [self = self()](const beast::error_code& ec) {
        if (self->closed_) return;
        if (ec) return self->close(CloseReason::Error);
        self->becomeBusy();  // evictable again once the handshake is receiveGrace old
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

  // --- deadlines: one timer for the earliest of the phase's absolute deadline, the receive
  // deadline while a request arrives and the first request's; a stale expiry is ignored by
  // generation.
  void arm(SteadyClock::time_point at, CloseReason reason) {
    phaseDeadline_ = at;
    phaseReason_ = reason;
    rearm();
  }
  void rearm() {
    SteadyClock::time_point at = phaseDeadline_.value_or(SteadyClock::time_point::max());
    if (receiving_) at = std::min(at, receiveDeadline_);
    if (firstRequestDeadline_) at = std::min(at, *firstRequestDeadline_);
    const std::uint64_t generation = ++timerGeneration_;
    if (at == SteadyClock::time_point::max()) {
      timer_.cancel();
      return;
    }
    timer_.expires_at(at);
    timer_.async_wait([self = self(), generation](const beast::error_code& ec) {
      if (ec || generation != self->timerGeneration_ || self->closed_) return;
      self->onTimer();
    });
  }
  void onTimer() {
    const auto now = SteadyClock::now();
    if (state_ == State::Lingering) return close(lingerReason_);
    if (phaseDeadline_ && now >= *phaseDeadline_) return close(phaseReason_);
    const bool slow = receiving_ && now >= receiveDeadline_;
    const bool unserved = firstRequestDeadline_ && now >= *firstRequestDeadline_;
    if (!slow && !unserved) return rearm();
    beast::error_code ignored;
    if (socket().available(ignored) > 0) {
      // Bytes are waiting: this thread is behind, not the client.
      if (slow) receiveDeadline_ = now + kBehindRecheck;
      if (unserved) firstRequestDeadline_ = now + kBehindRecheck;
      return rearm();
    }
    close(unserved ? CloseReason::FirstRequestDeadline : CloseReason::TooSlow);
  }
  void disarm() {
    phaseDeadline_.reset();
    receiving_ = false;
    ++timerGeneration_;
    timer_.cancel();
  }
  // A request (or a handshake) starts arriving: its receive deadline is receiveGrace away.
  void startReceiving(SteadyClock::time_point now) {
    receiving_ = true;
    firstByteAt_ = now;
    receiveDeadline_ = now + shared_->limits.receiveGrace;
  }
  // `bytes` more arrived: the receive deadline moves 1/minReceiveBytesPerSecond later per byte,
  // never beyond receiveGrace from now.
  void received(std::size_t bytes, SteadyClock::time_point now) {
    if (!receiving_ || bytes == 0) return;
    const double rate = static_cast<double>(std::max<std::size_t>(shared_->limits.minReceiveBytesPerSecond, 1));
    const auto credit = std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(static_cast<double>(bytes) / rate));
    receiveDeadline_ = std::min(receiveDeadline_ + credit, now + shared_->limits.receiveGrace);
  }
  // Whether the request under way may take the budget's reserve: it is arriving promptly.
  bool prompt() const { return SteadyClock::now() - firstByteAt_ < shared_->limits.receiveGrace; }

  // --- the registry's idle list (evictable connections, oldest first).
  // False once the server is stopping: the caller closes the connection instead. (During a
  // shutdown every answer closes its connection, so only a connection admitted just before the
  // shutdown began, or one that sent nothing yet, gets here; connections already idle are not
  // touched: their next request is answered.)
  bool becomeIdle() {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    if (shared_->stopping.load()) return false;
    activity = Activity::Idle;
    since = SteadyClock::now();
    served = requestsServed_ > 0;
    if (inIdle || shared_->open.count(this) == 0) return true;  // evicted meanwhile: closing already
    idleAt = shared_->idle.insert(shared_->idle.end(), this);
    inIdle = true;
    return true;
  }
  // Receiving from now on (a handshake's or a request's first byte): evictable as the rules say,
  // and what it is charged may be taken back for a fairer share.
  void becomeBusy() {
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      activity = Activity::Receiving;
      since = SteadyClock::now();
      if (inIdle) {
        shared_->idle.erase(idleAt);
        inIdle = false;
      }
    }
    shared_->setPreemptible(*this, true);
  }
  // The request is complete: neither evictable nor preemptible until answered.
  void becomeAnswering() {
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      activity = Activity::Answering;
      since = SteadyClock::now();
    }
    shared_->setPreemptible(*this, false);
  }

  // --- requests.
  void startRequest(bool first) {
    parser_.emplace();
    headConsumed_ = 0;
    parser_->header_limit(static_cast<std::uint32_t>(shared_->limits.maxHeadBytes));
    parser_->body_limit(static_cast<std::uint64_t>(shared_->limits.maxBodyBytes));
    parser_->eager(false);  // stop after the head, to route and charge before reading the body
    if (buffer_.size() == 0) buffer_.shrink_to_fit();  // an idle connection holds no buffer
    if (!first && buffer_.size() > 0) {
      // The next request's bytes arrived with the previous one (pipelining).
      state_ = State::Head;
      becomeBusy();
      const auto now = SteadyClock::now();
      startReceiving(now);
      arm(now + shared_->limits.headTimeout, CloseReason::HeadDeadline);
      return parse();
    }
    state_ = State::Idle;
    if (!becomeIdle()) return close(CloseReason::Stopped);
    if (first) {
      arm(acceptedAt + shared_->limits.headTimeout, CloseReason::HeadDeadline);
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
    const auto now = SteadyClock::now();
    if (state_ == State::Idle && bytes > 0) {
      becomeBusy();
      state_ = State::Head;
      startReceiving(now);
      // A later request's head is timed from its first byte; the first one's from accept.
      if (requestsServed_ > 0) {
        arm(now + shared_->limits.headTimeout, CloseReason::HeadDeadline);
      } else {
        rearm();
      }
    }
    if (receiving_ && bytes > 0) {
      received(bytes, now);
      rearm();
    }
    parse();
  }

  void parse() {
    while (true) {
      if (buffer_.size() == 0) return readSome();
      beast::error_code ec;
      const std::size_t used = parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      // A head is charged for what it holds: while incomplete every byte of it held in the buffer,
      // once parsed exactly its own bytes (what came with it is the body's, charged as such).
      // (The parser consumes a head line by line, so the head held is what it consumed plus what
      // waits in the buffer.)
      if (state_ == State::Head) headConsumed_ += used;
      if (state_ == State::Head && (!ec || ec == bhttp::error::need_more) &&
          !chargeHeadTo(parser_->is_header_done() ? headConsumed_ : headConsumed_ + buffer_.size())) {
        return;
      }
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
    if (const Charge fit = shared_->fits(source, cost, prompt()); fit != Charge::Ok) return refuse(fit);
    parser_->eager(true);
    if (!parser_->is_done()) arm(SteadyClock::now() + shared_->limits.bodyTimeout, CloseReason::BodyDeadline);
    return true;
  }

  // Brings the head's charge to `headBytes` x kHeadCostFactor (held until the answer is written).
  // False when it answered 503 (and closes) instead.
  bool chargeHeadTo(std::size_t headBytes) {
    const std::size_t target = headBytes * kHeadCostFactor;
    if (target < headCharged_) {
      const std::size_t excess = headCharged_ - target;
      headCharged_ = target;
      shared_->release(*this, excess);
      return true;
    }
    const std::size_t more = target - headCharged_;
    if (const Charge c = shared_->charge(*this, more, prompt()); c != Charge::Ok) return refuse(c);
    headCharged_ = target;
    return true;
  }

  // A body is charged as it arrives, times the route's factor: a Content-Length body by the bytes
  // received (its string is reserved whole at the head, but only written pages are resident), a
  // chunked one by its string's capacity (it grows by reallocation). Once complete, a body of n
  // bytes holds n x costFactor. False when it answered 503 (and closes) instead.
  bool chargeBodyGrowth() {
    const auto& body = parser_->get().body();
    const std::size_t bodyBytes = parser_->chunked() ? body.capacity() : body.size();
    const std::size_t need = bodyBytes * std::max<std::size_t>(route_->costFactor, 1);
    const std::size_t total = shared_->chargedTo(*this);
    const std::size_t have = total - std::min(total, headCharged_);
    if (need <= have) return true;
    if (const Charge c = shared_->charge(*this, need - have, prompt()); c != Charge::Ok) return refuse(c);
    return true;
  }

  void onRequest() {
    disarm();
    firstRequestDeadline_.reset();
    becomeAnswering();
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
    detail::WorkerPool::Task task;
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      inQueue = true;  // evictable at the total cap until a worker takes it (server.cpp)
    }
    task.run = [self = self()] {
      {
        std::lock_guard<std::mutex> lock(self->shared_->mutex);
        self->inQueue = false;
        // Evicted while it waited: nobody will read the answer, so the handler does not run.
        if (self->shared_->open.count(self.get()) == 0) return;
      }
      Response response = self->callHandler();
      asio::post(self->executor_, [self, response = std::move(response)]() mutable {
        self->writeResponse(std::move(response));
      });
    };
    // Its place in the queue given to another address's request: answered as if the queue had
    // been full when it came.
    task.dropped = [self = self()] { asio::post(self->executor_, [self] { self->queueFull(); }); };
    const bool queued = shared_->pool && shared_->pool->tryPost(source, std::move(task));
    if (!queued) queueFull();
  }

  // 503 for a request the worker pool would not (or no longer) queue; the connection goes on.
  void queueFull() {
    if (closed_) return release();
    release();
    reject(RejectReason::QueueFull, 503, false);
  }

  // Runs on an I/O thread (Inline) or a worker (Pool); nothing else touches request_ meanwhile.
  Response callHandler() {
    try {
      return route_->handler(request_);
    } catch (...) {
      return Response{500, "text/plain; charset=utf-8", "internal error\n"};
    }
  }

  // A handler's reservation: the request is complete, so it may take the reserve.
  bool reserveTotal(std::size_t total) { return shared_->raiseTo(*this, total, true) == Charge::Ok; }

  void release() {
    shared_->releaseAll(*this);
    headCharged_ = 0;
  }

  // A charge that did not go through: 503 (and close) when over the budget or the address's share,
  // a close without an answer when the connection's charge was taken back (Preempted). False.
  bool refuse(Charge charge) {
    if (charge == Charge::Revoked) {
      close(CloseReason::Preempted);
      return false;
    }
    reject(charge == Charge::SourceOverBudget ? RejectReason::SourceOverBudget : RejectReason::OverBudget);
    return false;
  }

  // An answer of the server's own. `closeAfter`: the request's body (if any) was not read, so the
  // connection cannot go on.
  void reject(RejectReason reason, int status = 0, bool closeAfter = true) {
    if (status == 0) {
      switch (reason) {
        case RejectReason::Malformed: status = 400; break;
        case RejectReason::HeadTooLarge: status = 431; break;
        case RejectReason::BodyTooLarge: status = 413; break;
        case RejectReason::OverBudget:
        case RejectReason::SourceOverBudget:
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
    // No Retry-After: the apiserver would retry until its timeout instead of failing open now.
    response.retryAfterSeconds = 0;
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
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      writing = true;  // evictable at the total cap, last (server.cpp)
    }
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
    {
      std::lock_guard<std::mutex> lock(shared_->mutex);
      writing = false;
    }
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
      shared_->unregisterLocked(this);
    }
    shared_->drained.notify_all();
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
  std::optional<SteadyClock::time_point> phaseDeadline_;  // the phase's absolute deadline
  CloseReason phaseReason_ = CloseReason::Stopped;
  bool receiving_ = false;                   // a request (its head or body) is arriving
  SteadyClock::time_point receiveDeadline_;  // while receiving_: the minimum rate's deadline
  SteadyClock::time_point firstByteAt_;      // the first byte of the request under way
  // Until its first request is complete: when it must be.
  std::optional<SteadyClock::time_point> firstRequestDeadline_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  const Route* route_ = nullptr;
  Request request_;
  std::size_t headCharged_ = 0;   // of it, for the head (the strand's only)
  std::size_t headConsumed_ = 0;  // bytes of the head under way the parser consumed
  State state_ = State::Idle;
  bool closed_ = false;
  bool keepAlive_ = true;
  bool http10_ = false;
  std::optional<CloseReason> closeAfterWrite_;
  CloseReason lingerReason_ = CloseReason::Peer;
  std::size_t lingered_ = 0;
  std::uint64_t requestsServed_ = 0;
  std::string out_;
};

}  // namespace

std::shared_ptr<detail::ConnectionBase> detail::makeConnection(std::shared_ptr<Shared> shared,
                                                               tcp::socket&& socket) {
  // The socket moves only once the connection is being constructed, so a failed allocation
  // leaves it with the caller.
  if (shared->tls) {
    return std::make_shared<Connection<asio::ssl::stream<tcp::socket>>>(std::move(shared), std::move(socket));
  }
  return std::make_shared<Connection<tcp::socket>>(std::move(shared), std::move(socket));
}

}  // namespace restarter::http
