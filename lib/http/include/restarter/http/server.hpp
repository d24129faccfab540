#pragma once
// restarter::http — one event-driven HTTP/1.1 server (plain or TLS) for the webhook and the
// health and metrics endpoints, on Boost.Asio and Boost.Beast (kept out of this header).
//
// Model: one io_context run by `ioThreads` threads; every connection is an asynchronous state
// machine on its own strand, so no connection ever holds a thread while it waits. A hostile client
// on the port can cost only bounded memory and never blocks another client:
//
//   - every phase has a deadline: the TLS handshake and the first request head run from accept,
//     a later request head from its first byte, the body from the end of its head, the response
//     from when it is ready; waiting for the next request of a keep-alive connection is bounded
//     by the idle timeout. A deadline is absolute: sending slowly does not extend it.
//   - a connection earns its slot by progress, not by age: from a request's first byte on, its
//     head and body must keep arriving at `minReceiveBytesPerSecond` (Apache's mod_reqtimeout
//     MinRate, nginx's and Envoy's timeouts between reads): a receive deadline `receiveGrace`
//     after the first byte, pushed later by 1/minReceiveBytesPerSecond per byte received, never
//     beyond `receiveGrace` from now. A trickle below the rate, or a stall of `receiveGrace` (a
//     body held one byte short), is closed (TooSlow) long before the absolute deadlines.
//   - at most `maxConnections` are open, every one counted, and at most `maxConnectionsPerSource`
//     of them from one client address. A newcomer beyond either evicts the least-deserving
//     connection, never one whose handler runs: first the oldest one never served (no request of it
//     answered yet, whatever it is doing: waiting for its first byte, in its TLS handshake,
//     sending its first head or body) once it is `newcomerGrace` old; then a served one still
//     receiving a later request `receiveGrace` after its first byte (EvictedSlow); then, at the
//     address bound, the address's own idle served one (the least recently active), and at the
//     total bound a connection of the address holding most, if that is more than the
//     newcomer's address would hold (a fair share of the slots for every address;
//     EvictedOverShare): a newcomer within its grace first, then an idle served one, then a busy
//     served one (a client pipelining requests is never idle), then one whose request waits in
//     the worker queue, then one whose answer is being written (so an address over its share
//     may lose an answer under way: a pipelining client is nearly always there). At the address
//     bound the victim
//     comes from the newcomer's own address (a source replaces its own connections, never
//     another's). Only when nothing can be evicted is a newcomer closed at once (RefusedAtCap,
//     RefusedSourceShare). A client that sends a whole request at once (the apiserver, the
//     kubelet) is served within its newcomer grace, so no flood of newcomers from however many
//     addresses evicts it first, and it always finds a slot while any is held by a connection
//     not served in time or by an address holding more than its own.
//   - a connection's first request must be complete within `firstRequestTimeout` of accept (TLS
//     handshake included), whatever it is doing meanwhile (FirstRequestDeadline): a client that
//     never finishes a handshake or a head, or closes and reconnects just before a deadline,
//     holds a slot for at most that long and is the first evicted at the cap.
//   - a request head is at most `maxHeadBytes` (431 beyond), a body at most `maxBodyBytes` (413
//     from the Content-Length alone, nothing of the body read); a malformed head gets 400.
//   - bytes held for requests in flight are charged against `maxInFlightBytes` across all
//     connections as they arrive (a head's bytes x 2: the read buffer and the parsed fields; a
//     body's bytes received x the route's costFactor) until the response is written; one address
//     may hold at most `maxInFlightBytesPerSource` of them, and the last `inFlightReserveBytes`
//     go only to prompt requests (within `receiveGrace` of their first byte). When a prompt
//     request does not fit and its address holds less than its fair share (the budget divided by
//     the addresses holding bytes, its own counted), the budget is taken back from requests still
//     arriving (never one being answered) of the addresses above their fair share, the one
//     holding most first: those connections are closed (Preempted). So however many addresses
//     hold bytes, each finds its fair share of the budget. A request whose Content-Length x
//     costFactor does not fit gets 503 from its head, and one whose head or body outgrows it
//     while arriving gets 503 then; either way the connection is closed without reading the rest.
//     Nothing is held for bytes not yet sent, so a slow sender holds only what it sent. Handlers
//     may charge more (Request::reserve) for what they are about to allocate.
//   - memory is given back after a flood: once the open connections fall to half of their peak
//     since the last time (and the peak was more than a handful), the allocator returns its free
//     pages to the system (malloc_trim), so RSS falls back near where it started.
//   - no 503 of the server carries Retry-After: Kubernetes' apiserver (client-go's REST client)
//     retries a 503 or 429 that has one until the webhook's timeout, so a webhook call that
//     cannot be served now should fail at once (the apiserver then fails open) instead.
//   - blocking handlers run on a bounded worker pool with a bounded queue, never on the I/O
//     threads; cheap handlers run inline. The queue is fair across addresses: a queue per address
//     served in turn, and at the bound a request of an address holding fewer queued requests takes
//     the place of the newest of the address holding most (which gets 503, as does a request
//     with nowhere to go).
//
// Keep-alive with any number of requests per connection; a request's "Connection: close" (or
// HTTP/1.0 without keep-alive) is honoured. One request at a time per connection: the next one is
// read only after the response was written. HTTP/2 is not spoken (Beast has no HTTP/2); over TLS
// no ALPN protocol is selected, so clients offering h2 fall back to HTTP/1.1.
//
// Threads: start() and stop() from one owning thread. Handlers run on I/O threads (Inline) or
// worker threads (Pool) and must be thread-safe. The Observer is called from I/O threads.

#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "restarter/core/result.hpp"

namespace restarter::http {

namespace detail {
struct RequestAccess;
}  // namespace detail

using Milliseconds = std::chrono::milliseconds;

// Per-server limits. The defaults suit the webhook behind a Kubernetes apiserver (each reason is
// given); obs::EndpointServer and webhook::HttpsServer set their own.
struct Limits {
  // A TLS handshake takes milliseconds even on a loaded node; a client that has not finished one
  // in 10 s is not the apiserver, whose whole call is bounded by the webhook timeout (<= 30 s).
  Milliseconds handshakeTimeout{10'000};
  // The apiserver writes a request head at once; 10 s is generous on any network.
  Milliseconds headTimeout{10'000};
  // From the end of the head to the last body byte: 8 MiB arrive in well under a second on a
  // cluster network; an apiserver that has not sent its body after 10 s is past its webhook
  // timeout (5 s in our configuration) and no longer waits for the answer.
  Milliseconds bodyTimeout{10'000};
  // Writing one response; a client that does not read it for 10 s is gone or hostile.
  Milliseconds writeTimeout{10'000};
  // A keep-alive connection may wait this long for its next request. Longer than the 90 s after
  // which Go's HTTP client (the apiserver's) closes idle connections, so the client closes first
  // and never sends a request into a connection we are closing.
  Milliseconds idleTimeout{120'000};
  // After a response that closes the connection (an error answered before the body was read),
  // discard what the client still sends for at most this long before closing, so that a client
  // busy sending its body reads the answer instead of a connection reset.
  Milliseconds lingerTimeout{1'000};
  // The apiserver keeps a few connections per webhook; an idle TLS connection holds about 80 KiB
  // (Asio's and OpenSSL's record buffers), so 128 cost at most 10 MiB. A hard cap: every open
  // connection counts, from whatever address. Beyond it the least-deserving connection (never
  // served, or slow past its grace, or idle) makes room, so no flood can lock a client out.
  std::size_t maxConnections = 128;
  // Half the slots per client address: the apiserver (its own address, a handful of connections)
  // always finds the other half free of any one attacking pod's connections.
  std::size_t maxConnectionsPerSource = 64;
  // From accept to the first request complete, TLS handshake included: the apiserver and the
  // kubelet send a request at once on a new connection (milliseconds on a cluster network, a
  // TLS handshake under a loaded 2-core node included), so 3 s is generous; a connection that has
  // not been served by then holds no slot any more.
  Milliseconds firstRequestTimeout{3'000};
  // A connection not yet served is evicted at the total cap only once it is this old, unless its
  // address holds more connections than the newcomer's would: the apiserver and the kubelet send
  // their request within milliseconds of connecting (a TLS handshake included), so a flood of
  // newcomers cannot evict theirs before it is served.
  Milliseconds newcomerGrace{500};
  // From a request's first byte: the apiserver writes a head and a review at once (a 4 MiB body
  // arrives in milliseconds on a cluster network), so 2 s is generous, and a client that has not
  // sent its whole request by then must keep sending at 16 KiB/s or lose its slot. A trickled
  // review (a few KiB over seconds) or a body held one byte short is closed within 2 s of its
  // last progress.
  Milliseconds receiveGrace{2'000};
  std::size_t minReceiveBytesPerSecond = 16 * 1024;
  // 16 KiB: Kubernetes' requests carry a handful of short headers; Go's server allows 1 MiB,
  // nginx 8-32 KiB. A head is held in full while parsing, so this is also its memory bound.
  std::size_t maxHeadBytes = 16 * 1024;
  // An AdmissionReview holds the object and, on UPDATE, the old one: each at most etcd's 1.5 MiB
  // (as JSON somewhat more); 8 MiB as the webhook always allowed.
  std::size_t maxBodyBytes = 8 * 1024 * 1024;
  // The webhook runs under a 128 MiB limit: 32 MiB admits one 4.5 MiB review charged at 7x (one
  // address: 4 MiB, its share below), or hundreds of ordinary ones, and leaves the rest of the limit
  // to the process itself. What parallel reviews of that size peak at is measured by kuttl
  // webhook-hostile-bodies and tests/bench/webhook_limits.sh (docs/benchmarks.md).
  std::size_t maxInFlightBytes = 32 * 1024 * 1024;
  // 28 MiB per client address: the rest (4 MiB, some 280 ordinary reviews at 7 x 2 KiB) is
  // always left to the others, however much one attacking pod holds; the largest review one
  // address can have answered is then 4 MiB (28 MiB at 7x), still more than etcd stores.
  std::size_t maxInFlightBytesPerSource = 28 * 1024 * 1024;
  // The last 1 MiB of the budget only for prompt requests (within receiveGrace of their first
  // byte): a crowd of slow senders, each at the minimum rate, cannot take the budget's last bytes
  // from a review that arrives whole.
  std::size_t inFlightReserveBytes = 1024 * 1024;
};

// One request, as a handler sees it. Valid during the handler call only.
class Request {
 public:
  std::string method;  // as sent, e.g. "POST"
  std::string target;  // as sent, e.g. "/mutate?timeout=5s"
  std::string body;
  // The connection's TLS session (read-only), or nullptr over plain HTTP.
  const SSL* tls = nullptr;

  // Makes this request's charge against the in-flight budget at least `bytes` in all (it already
  // holds its body's charge) until its response is written. False, charging nothing, when the
  // budget cannot take it: the handler should then answer 503, without Retry-After (see above).
  // Thread-safe with respect to other requests.
  bool reserve(std::size_t bytes) const;

 private:
  friend struct detail::RequestAccess;
  std::function<bool(std::size_t)> reserve_;  // the server's budget accounting for this request
};

struct Response {
  int status = 200;
  std::string contentType = "text/plain; charset=utf-8";
  std::string body;
  // Ask the client to close the connection after this response ("Connection: close").
  bool close = false;
  // When > 0, sent as "Retry-After". Not with a 503 to the apiserver: it would retry until its
  // timeout instead of failing open at once.
  int retryAfterSeconds = 0;
};

using Handler = std::function<Response(const Request&)>;

enum class Dispatch {
  Inline,  // cheap and non-blocking: runs on the I/O thread (health, metrics)
  Pool,    // may block: runs on the worker pool (the webhook's lookups)
};

struct Route {
  std::string method;  // "GET", "POST"
  std::string path;    // exact match of the target without its query
  Handler handler;
  Dispatch dispatch = Dispatch::Inline;
  // A body of n bytes is charged n x costFactor once it has arrived (and in proportion while it
  // arrives): the bytes held plus what the handler will build from them (e.g. a parsed tree). A
  // Content-Length whose charge does not fit in what is free is refused before its body is read.
  std::size_t costFactor = 1;
};

// Why a connection ended (one count each).
enum class CloseReason {
  Peer,               // the client closed, or the connection ended after a final response
  HandshakeFailed,    // the TLS handshake failed (no certificate, old protocol, garbage)
  HandshakeDeadline,  // the TLS handshake did not finish in time
  HeadDeadline,       // a request head did not arrive in full in time
  BodyDeadline,       // a request body did not arrive in full in time
  IdleDeadline,       // no next request within the idle timeout
  WriteDeadline,      // the client did not read its response in time
  Evicted,            // an idle connection (served or not), closed to admit a new one at a cap
  RefusedAtCap,       // a new connection closed at once: at the cap, nothing evictable
  Rejected,           // closed after an error answer (400, 413, 431, 503 over budget)
  Error,              // a read or write failed
  Stopped,            // the server stopped
  TooSlow,            // a request arrived below the minimum rate
  EvictedSlow,  // a served connection receiving a request past its grace, closed to admit a new one at a cap
  RefusedSourceShare,    // a new connection closed at once: its address holds its share, none of its evictable
  FirstRequestDeadline,  // its first request was not complete within firstRequestTimeout of accept
  Preempted,             // a request still arriving whose bytes were taken back for a fairer share
  EvictedUnserved,  // a connection never served and not idle (in its handshake, first head or body), evicted at a cap
  EvictedOverShare,  // a busy served connection of an address holding more than the newcomer's, evicted at the cap
};
const char* closeReasonName(CloseReason reason) noexcept;
inline constexpr std::size_t kCloseReasonCount = 19;

// Why a request was answered with an error by the server itself (not by a handler).
enum class RejectReason {
  Malformed,         // 400: the head does not parse
  HeadTooLarge,      // 431
  BodyTooLarge,      // 413
  OverBudget,        // 503: the in-flight byte budget is spent
  QueueFull,         // 503: the worker pool's queue is full
  NotFound,          // 404 (or 405 for a known path with another method)
  SourceOverBudget,  // 503: the client address's share of the in-flight budget is spent
};
const char* rejectReasonName(RejectReason reason) noexcept;
inline constexpr std::size_t kRejectReasonCount = 7;

// Receives the server's events (for metrics). Called from I/O threads, concurrently: must be
// thread-safe and quick. Must outlive the server.
class Observer {
 public:
  virtual ~Observer() = default;
  virtual void connectionOpened() = 0;
  // Every opened connection is closed exactly once; RefusedAtCap and RefusedSourceShare come
  // without an opening.
  virtual void connectionClosed(CloseReason reason) = 0;
  virtual void requestRejected(RejectReason reason) = 0;
  // The bytes charged against the in-flight budget went up (> 0) or down (< 0) by `delta`; a
  // sum, not a level, so that concurrent reports cannot leave a stale figure.
  virtual void inFlightBytesChanged(std::int64_t delta) = 0;
};

// TLS for a server: `configure` sets the SSL_CTX's policy (versions, ciphers, certificate
// callback); false fails start().
struct TlsOptions {
  std::function<bool(SSL_CTX*)> configure;
};

struct ServerOptions {
  std::string host;  // "" means every interface (0.0.0.0)
  int port = 0;      // 0 means any free port
  Limits limits;
  // I/O threads running the io_context. Two: TLS handshakes and parsing use CPU, and the
  // machines we run on have few cores.
  std::size_t ioThreads = 2;
  // The worker pool for Dispatch::Pool routes (none is started without such a route) and how
  // many requests may wait for a worker before 503.
  std::size_t workers = 16;
  std::size_t maxQueued = 64;
  std::vector<Route> routes;
  std::optional<TlsOptions> tls;  // plain HTTP when empty
  Observer* observer = nullptr;   // optional; must outlive the server
};

// Live figures, for tests and diagnostics.
struct Stats {
  std::size_t openConnections = 0;
  std::size_t idleConnections = 0;
  std::size_t inFlightBytes = 0;
  std::uint64_t closed[kCloseReasonCount] = {};
  std::uint64_t rejected[kRejectReasonCount] = {};
  std::uint64_t requests = 0;     // requests answered (by handlers or by the server)
  std::uint64_t memoryTrims = 0;  // times free memory was given back to the system after a flood
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();  // stops
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds (SO_REUSEADDR, never SO_REUSEPORT: a second process must not share the port), starts
  // the threads and serves; the bound port. Unavailable "cannot listen on HOST:PORT" when the
  // address cannot be bound; Internal when TLS cannot be set up or the server ran before.
  core::Result<int> start();
  // Stops accepting, closes every connection, waits for handlers running on workers to return
  // (queued ones are dropped), joins all threads. Idempotent; safe with connections open.
  void stop();
  // A graceful stop (docs/architecture.md, "Shutdown"): stops accepting new connections; every
  // answer from now on, to a request under way or to one that arrives on an open keep-alive
  // connection, carries "Connection: close" and closes its connection after it. Idle connections
  // are not closed early: a client may be writing a request into one at that very moment, and a
  // client does not resend a POST it has written. Returns when every connection has closed or
  // `grace` has passed, whichever is first, then does what stop() does with whatever is left.
  // Idempotent, and stop() after it is a no-op.
  void shutdown(Milliseconds grace);

  Stats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace restarter::http
