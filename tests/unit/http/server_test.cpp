#include "restarter/http/server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "restarter/certs/certs.hpp"

using namespace restarter;
using namespace restarter::http;
using namespace std::chrono_literals;

namespace {

// Generous upper bounds for waiting on an effect: a failure guard on a loaded machine, never the
// thing asserted.
constexpr auto kPatience = 30s;

template <typename Predicate>
bool waitUntil(Predicate predicate, std::chrono::steady_clock::duration limit = kPatience) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

struct Reply {
  int status = 0;
  std::string head;
  std::string body;
  bool has(const std::string& header) const { return head.find(header) != std::string::npos; }
};

// A raw loopback TCP client, to behave as politely or as badly as a test needs.
class Client {
 public:
  // `source`: the loopback address to connect from (the whole 127/8 is loopback), so that a test
  // can be one client address or another.
  explicit Client(int port, const char* source = nullptr) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (source != nullptr) {
      sockaddr_in local{};
      local.sin_family = AF_INET;
      inet_pton(AF_INET, source, &local.sin_addr);
      // Not bound to `source`: connected() stays false rather than the test being another address.
      if (bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) return;
    }
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~Client() { close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  bool connected() const { return connected_; }
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  bool send(const std::string& data) {
    std::size_t sent = 0;
    while (sent < data.size()) {
      const ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }

  // One response (head and Content-Length body); nullopt when the connection ends first.
  std::optional<Reply> read() {
    while (true) {
      const auto headEnd = pending_.find("\r\n\r\n");
      if (headEnd != std::string::npos) {
        Reply reply;
        reply.head = pending_.substr(0, headEnd);
        reply.status = std::stoi(reply.head.substr(9, 3));
        std::size_t length = 0;
        if (const auto at = reply.head.find("Content-Length: "); at != std::string::npos) {
          length = std::stoul(reply.head.substr(at + 16));
        }
        if (pending_.size() >= headEnd + 4 + length) {
          reply.body = pending_.substr(headEnd + 4, length);
          pending_.erase(0, headEnd + 4 + length);
          return reply;
        }
      }
      if (!receive()) return std::nullopt;
    }
  }

  std::optional<Reply> request(const std::string& text) {
    if (!send(text)) return std::nullopt;
    return read();
  }

  // True once the server has closed the connection (end of stream or reset), bytes before that
  // discarded; false if it is still open after kPatience.
  bool waitClosed() {
    const auto end = std::chrono::steady_clock::now() + kPatience;
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 100) > 0) {
        char buffer[4096];
        const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
        if (n <= 0) return true;
      }
    }
    return false;
  }

  // Whether the server has closed the connection by now (does not wait).
  bool closedNow() {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return false;
    char byte = 0;
    return recv(fd_, &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0;
  }

 private:
  bool receive() {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kPatience).count())) <= 0) return false;
    char buffer[16384];
    const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    pending_.append(buffer, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string pending_;
};

std::string get(const std::string& path, const std::string& extra = "") {
  return "GET " + path + " HTTP/1.1\r\nHost: test\r\n" + extra + "\r\n";
}

// What the server charges for a request's head: its bytes twice (the read buffer, the parsed fields).
std::size_t httpHeadCost(const std::string& request) { return 2 * (request.find("\r\n\r\n") + 4); }

std::string post(const std::string& path, const std::string& body) {
  return "POST " + path + " HTTP/1.1\r\nHost: test\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

Route hello() {
  return Route{"GET", "/hello",
               [](const Request&) {
                 return Response{200, "text/plain", "hello", false, 0};
               },
               Dispatch::Inline, 1};
}

Route echo(Dispatch dispatch = Dispatch::Pool) {
  return Route{"POST", "/echo",
               [](const Request& r) {
                 return Response{200, "text/plain", "echo:" + r.body, false, 0};
               },
               dispatch, 1};
}

ServerOptions plainOptions(std::vector<Route> routes) {
  ServerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.ioThreads = 1;
  options.workers = 2;
  options.routes = std::move(routes);
  // The per-address shares, the budget's reserve and the first request's deadline off: the tests
  // of the other rules are one address and want the plain bounds; the fair-admission tests set them.
  options.limits.maxConnectionsPerSource = 100'000;
  options.limits.inFlightReserveBytes = 0;
  options.limits.firstRequestTimeout = std::chrono::minutes(10);
  options.limits.newcomerGrace = 0ms;
  return options;
}

std::uint64_t closed(const Server& server, CloseReason reason) {
  return server.stats().closed[static_cast<std::size_t>(reason)];
}

std::uint64_t rejected(const Server& server, RejectReason reason) {
  return server.stats().rejected[static_cast<std::size_t>(reason)];
}

// A gate a handler waits at until the test opens it (bounded, so a failing test cannot hang).
class Gate {
 public:
  void open() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      open_ = true;
    }
    changed_.notify_all();
  }
  void pass() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait_for(lock, kPatience, [this] { return open_; });
  }
  bool waiting(int count) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, kPatience, [&] { return waiting_ >= count; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
  int waiting_ = 0;
};

}  // namespace

TEST_CASE("a slow header connection is closed at the head deadline while another is served", "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.headTimeout = 2s;
  // Every byte earns a second: only the absolute deadline can close this one.
  options.limits.minReceiveBytesPerSecond = 1;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());

  // One byte of a head that never ends, every few milliseconds until the server closes.
  Client slow(*port);
  REQUIRE(slow.send("GET /hello HTTP/1.1\r\n"));
  std::atomic<bool> slowClosed{false};
  std::atomic<int> bytesSent{0};
  std::thread sender([&] {
    const auto end = std::chrono::steady_clock::now() + kPatience;
    while (std::chrono::steady_clock::now() < end) {
      if (!slow.send("X") || slow.closedNow()) break;
      ++bytesSent;
      std::this_thread::sleep_for(20ms);
    }
    slowClosed = slow.waitClosed();
  });

  Client normal(*port);
  auto reply = normal.request(get("/hello"));
  const bool servedWhileSlowOpen = closed(server, CloseReason::HeadDeadline) == 0;
  sender.join();
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(reply->body == "hello");
  CHECK(servedWhileSlowOpen);
  CHECK(slowClosed);
  CHECK(bytesSent > 1);  // it kept sending, and was cut all the same
  CHECK(closed(server, CloseReason::HeadDeadline) == 1);
}

TEST_CASE("200 idle connections do not stop a new client from being served", "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.maxConnections = 128;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 200; ++i) {
    idle.push_back(std::make_unique<Client>(*port));
    REQUIRE(idle.back()->connected());
  }
  // Every one was accepted: 128 are open, the 72 oldest were evicted to admit the others.
  REQUIRE(waitUntil(
      [&] { return closed(server, CloseReason::Evicted) == 72 && server.stats().idleConnections == 128; }));

  Client fresh(*port);
  auto reply = fresh.request(get("/hello"));
  REQUIRE(reply);
  CHECK(reply->status == 200);
  // The oldest idle one is closed on its own strand, maybe after the answer.
  CHECK(waitUntil([&] { return closed(server, CloseReason::Evicted) == 73; }));
  CHECK(closed(server, CloseReason::RefusedAtCap) == 0);
  CHECK(server.stats().openConnections == 128);
}

TEST_CASE("at the connection cap the oldest idle connection is closed and the new one served", "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.maxConnections = 3;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());

  // a is idle from accept; b and c have each been served once and wait for their next request.
  Client a(*port);
  REQUIRE(waitUntil([&] { return server.stats().idleConnections == 1; }));
  Client b(*port);
  REQUIRE(b.request(get("/hello")));
  Client c(*port);
  REQUIRE(c.request(get("/hello")));
  // Each becomes idle once its answer is written, which the client may see first.
  REQUIRE(waitUntil([&] { return server.stats().idleConnections == 3; }));

  Client d(*port);
  auto reply = d.request(get("/hello"));
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(a.waitClosed());
  CHECK(closed(server, CloseReason::Evicted) == 1);
  // The others still work.
  auto again = b.request(get("/hello"));
  REQUIRE(again);
  CHECK(again->status == 200);
  CHECK(c.request(get("/hello")));
  CHECK(server.stats().openConnections == 3);
}

TEST_CASE("at the cap an address's only connection evicted for its own newcomer leaves its count right",
          "[http]") {
  // The victim's unregistering empties its address's entry, which the newcomer's admission then
  // counts into again: the entry must be looked up after the eviction (ASan saw it used freed).
  ServerOptions options = plainOptions({hello()});
  options.limits.maxConnections = 1;
  options.limits.newcomerGrace = std::chrono::milliseconds(0);
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // Each newcomer finds the one open connection, its own address's, never served, and evicts it.
  Client a(*port);
  REQUIRE(waitUntil([&] { return server.stats().openConnections == 1; }));
  Client b(*port);
  REQUIRE(waitUntil([&] { return closed(server, CloseReason::Evicted) == 1; }));
  CHECK(a.waitClosed());
  Client c(*port);
  auto reply = c.request(get("/hello"));
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(b.waitClosed());
  CHECK(closed(server, CloseReason::Evicted) == 2);
  CHECK(closed(server, CloseReason::RefusedAtCap) == 0);
  CHECK(server.stats().openConnections == 1);
}

TEST_CASE("at the connection cap with every connection being answered the new one is closed at once",
          "[http]") {
  Gate gate;
  ServerOptions options = plainOptions({hello(), echo()});
  options.limits.maxConnections = 2;
  options.routes[1].handler = [&gate](const Request&) {
    gate.pass();
    return Response{200, "text/plain", "done", false, 0};
  };
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // Two requests being answered: neither may be evicted.
  Client a(*port);
  Client b(*port);
  REQUIRE(a.send(post("/echo", "1")));
  REQUIRE(b.send(post("/echo", "2")));
  REQUIRE(gate.waiting(2));

  Client refused(*port);
  CHECK(refused.waitClosed());
  CHECK(closed(server, CloseReason::RefusedAtCap) == 1);
  CHECK(server.stats().openConnections == 2);
  gate.open();
  auto reply = a.read();
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(b.read());
}

TEST_CASE("a never completed TLS handshake is closed at its deadline", "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.tls = TlsOptions{[](SSL_CTX*) { return true; }};
  options.limits.handshakeTimeout = 300ms;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // The first bytes of a TLS record, then nothing.
  Client stalled(*port);
  REQUIRE(stalled.send(std::string("\x16\x03\x01\x00\xff\x01", 6)));
  // And a client that never sends a byte.
  Client silent(*port);
  CHECK(stalled.waitClosed());
  CHECK(silent.waitClosed());
  CHECK(closed(server, CloseReason::HandshakeDeadline) == 2);
}

// TLS with a serving certificate for 127.0.0.1 from a fresh CA (nullopt when one cannot be made).
std::optional<TlsOptions> tlsWithTestCertificate() {
  certs::CaRequest caRequest;
  const auto now = std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
  auto ca = certs::createCa(caRequest, now);
  if (!ca.ok()) return std::nullopt;
  certs::ServingRequest serving;
  serving.ipAddresses = {"127.0.0.1"};
  auto leaf = certs::issueServing(serving, *ca, now);
  if (!leaf.ok()) return std::nullopt;
  return TlsOptions{[certPem = leaf->certPem, keyPem = leaf->keyPem](SSL_CTX* ctx) {
    BIO* certBio = BIO_new_mem_buf(certPem.data(), static_cast<int>(certPem.size()));
    BIO* keyBio = BIO_new_mem_buf(keyPem.data(), static_cast<int>(keyPem.size()));
    X509* cert = PEM_read_bio_X509(certBio, nullptr, nullptr, nullptr);
    EVP_PKEY* key = PEM_read_bio_PrivateKey(keyBio, nullptr, nullptr, nullptr);
    const bool ok = SSL_CTX_use_certificate(ctx, cert) == 1 && SSL_CTX_use_PrivateKey(ctx, key) == 1;
    X509_free(cert);
    EVP_PKEY_free(key);
    BIO_free(certBio);
    BIO_free(keyBio);
    return ok;
  }};
}

TEST_CASE("a stalled ClientHello is held until the first request deadline", "[http]") {
  ServerOptions options = plainOptions({echo()});
  options.tls = tlsWithTestCertificate();
  REQUIRE(options.tls);
  options.limits.firstRequestTimeout = 500ms;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // A record header announcing 512 bytes, a ClientHello header announcing 508, then 39 of them.
  Client stalled(*port, "127.0.0.2");
  REQUIRE(
      stalled.send(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) + std::string(39, '\0')));
  CHECK(stalled.waitClosed());
  CHECK(closed(server, CloseReason::FirstRequestDeadline) == 1);
  CHECK(closed(server, CloseReason::HandshakeFailed) == 0);
}

TEST_CASE("TLS requests are served over one keep-alive connection", "[http]") {
  ServerOptions options = plainOptions({echo()});
  options.tls = tlsWithTestCertificate();
  REQUIRE(options.tls);
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());

  Client raw(*port);
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, raw.fd());
  REQUIRE(SSL_connect(ssl) == 1);
  for (int i = 0; i < 20; ++i) {
    const std::string request = post("/echo", std::to_string(i));
    REQUIRE(SSL_write(ssl, request.data(), static_cast<int>(request.size())) > 0);
    std::string response;
    const std::string want = "echo:" + std::to_string(i);
    while (response.find("\r\n\r\n" + want) == std::string::npos) {
      char buffer[4096];
      const int n = SSL_read(ssl, buffer, sizeof buffer);
      REQUIRE(n > 0);
      response.append(buffer, static_cast<std::size_t>(n));
    }
    CHECK(response.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  }
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  CHECK(server.stats().requests == 20);
}

TEST_CASE("a Content-Length over the body limit gets 413 without the body being read", "[http]") {
  ServerOptions options = plainOptions({echo()});
  options.limits.maxBodyBytes = 1000;
  std::atomic<int> calls{0};
  options.routes[0].handler = [&calls](const Request&) {
    ++calls;
    return Response{};
  };
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client client(*port);
  // The head only: a server waiting for the body would never answer.
  auto reply = client.request("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1001\r\n\r\n");
  REQUIRE(reply);
  CHECK(reply->status == 413);
  CHECK(reply->has("Connection: close"));
  CHECK(client.waitClosed());
  CHECK(calls == 0);
  CHECK(rejected(server, RejectReason::BodyTooLarge) == 1);
  // A body at the limit is served.
  Client fits(*port);
  auto ok = fits.request(post("/echo", std::string(1000, 'x')));
  REQUIRE(ok);
  CHECK(ok->status == 200);
}

TEST_CASE("the in flight budget answers 503 and frees its charge after the response", "[http]") {
  Gate gate;
  ServerOptions options = plainOptions({echo()});
  const std::string holding = post("/echo", "wait" + std::string(396, 'x'));
  const std::string overHead = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 104\r\n\r\n";
  // Once the holder holds its head and 400 x 2, 312 are left: a head of 106 and 104 x 2 do not fit,
  // a head of 112 and 100 x 2 do.
  options.limits.maxInFlightBytes = httpHeadCost(holding) + 800 + 312;
  options.routes[0].costFactor = 2;
  options.routes[0].handler = [&gate](const Request& r) {
    if (r.body.rfind("wait", 0) == 0) gate.pass();
    return Response{200, "text/plain", "done", false, 0};
  };
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());

  // Its head and 400 bytes x 2 held while the handler waits.
  Client holder(*port);
  REQUIRE(holder.send(holding));
  REQUIRE(gate.waiting(1));
  CHECK(server.stats().inFlightBytes == httpHeadCost(holding) + 800);

  // 104 x 2 > the 206 left after its head: refused from the head, nothing of the body read, and
  // without Retry-After (the apiserver would retry until its timeout instead of failing open).
  Client over(*port);
  auto refused = over.request(overHead);
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK_FALSE(refused->has("Retry-After"));
  CHECK(refused->has("Connection: close"));
  CHECK(over.waitClosed());
  CHECK(rejected(server, RejectReason::OverBudget) == 1);
  // 100 x 2 = 200 fits with its head.
  Client fits(*port);
  auto fitted = fits.request(post("/echo", std::string(100, 'y')));
  REQUIRE(fitted);
  CHECK(fitted->status == 200);

  gate.open();
  auto held = holder.read();
  REQUIRE(held);
  CHECK(held->status == 200);
  REQUIRE(waitUntil([&] { return server.stats().inFlightBytes == 0; }));
  Client after(*port);
  auto later = after.request(post("/echo", std::string(450, 'z')));
  REQUIRE(later);
  CHECK(later->status == 200);
}

TEST_CASE("a handler reservation beyond the budget is refused", "[http]") {
  ServerOptions options = plainOptions({echo()});
  options.limits.maxInFlightBytes = 1000;
  options.routes[0].handler = [](const Request& r) {
    if (!r.reserve(r.body.size() + 2000)) return Response{503, "text/plain", "busy", false, 0};
    return Response{200, "text/plain", "ok", false, 0};
  };
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client client(*port);
  auto reply = client.request(post("/echo", "abc"));
  REQUIRE(reply);
  CHECK(reply->status == 503);
  CHECK_FALSE(reply->has("Retry-After"));
  // Released once the answer is written, which the client may see first.
  CHECK(waitUntil([&] { return server.stats().inFlightBytes == 0; }));
}

TEST_CASE("a large body sent slowly holds only what arrived and small requests are served meanwhile",
          "[http]") {
  ServerOptions options = plainOptions({echo()});
  const std::string slowHead = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 450\r\n\r\n";
  options.limits.maxInFlightBytes = 1100;
  options.routes[0].costFactor = 2;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());

  // 450 x 2 = 900 fits what is free, so the head is accepted; it and 10 bytes sent hold its head
  // and 10 x 2.
  Client slow(*port);
  const std::size_t slowHeld = httpHeadCost(slowHead) + 20;
  REQUIRE(slow.send(slowHead + std::string(10, 's')));
  REQUIRE(waitUntil([&] { return server.stats().inFlightBytes == slowHeld; }));
  // Before, the head's 900 was held at once and this request's 2 x 400 was refused.
  Client small(*port);
  auto served = small.request(post("/echo", std::string(400, 'y')));
  REQUIRE(served);
  CHECK(served->status == 200);
  CHECK(rejected(server, RejectReason::OverBudget) == 0);

  // The small request's charge goes once its answer is written, which the client may see first.
  REQUIRE(waitUntil([&] { return server.stats().inFlightBytes == slowHeld; }));
  // The rest of the body arrives: complete, it holds 900 and is answered.
  REQUIRE(slow.send(std::string(440, 's')));
  auto finished = slow.read();
  REQUIRE(finished);
  CHECK(finished->status == 200);
  CHECK(finished->body == "echo:" + std::string(450, 's'));
  CHECK(waitUntil([&] { return server.stats().inFlightBytes == 0; }));
}

TEST_CASE("a body that outgrows the budget while it arrives gets 503", "[http]") {
  Gate gate;
  ServerOptions options = plainOptions({echo()});
  const std::string firstHead = "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 450\r\n\r\n";
  const std::string holding = post("/echo", "wait" + std::string(396, 'x'));
  options.limits.maxInFlightBytes = 1100;
  options.routes[0].costFactor = 2;
  options.routes[0].handler = [&gate](const Request& r) {
    if (r.body.rfind("wait", 0) == 0) gate.pass();
    return Response{200, "text/plain", "done", false, 0};
  };
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());

  // Both heads fit what is free when they arrive; the second body, complete, holds 2 x 400 = 800.
  Client first(*port);
  REQUIRE(first.send(firstHead + std::string(10, 'f')));
  REQUIRE(waitUntil([&] { return server.stats().inFlightBytes == httpHeadCost(firstHead) + 20; }));
  Client holder(*port);
  REQUIRE(holder.send(holding));
  REQUIRE(gate.waiting(1));
  CHECK(server.stats().inFlightBytes == httpHeadCost(firstHead) + 20 + httpHeadCost(holding) + 800);
  // The first body's next bytes would take it past what is left: 503, and the connection closed.
  (void)first.send(std::string(440, 'f'));  // the server may answer and close before all is sent
  auto refused = first.read();
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK_FALSE(refused->has("Retry-After"));
  CHECK(first.waitClosed());
  CHECK(rejected(server, RejectReason::OverBudget) == 1);

  gate.open();
  auto held = holder.read();
  REQUIRE(held);
  CHECK(held->status == 200);
  CHECK(waitUntil([&] { return server.stats().inFlightBytes == 0; }));
}

TEST_CASE("a chunked body is charged as it arrives", "[http]") {
  ServerOptions options = plainOptions({echo()});
  options.limits.maxInFlightBytes = 4096;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client small(*port);
  auto ok = small.request(
      "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  REQUIRE(ok);
  CHECK(ok->status == 200);
  CHECK(ok->body == "echo:abc");
  Client large(*port);
  REQUIRE(large.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"));
  const std::string chunk = "1000\r\n" + std::string(4096, 'c') + "\r\n";
  // The first chunk takes the body, with its head, past the 4096 bytes the budget holds.
  for (int i = 0; i < 4; ++i) {
    if (!large.send(chunk)) break;  // the server may already have answered and closed
  }
  auto reply = large.read();
  REQUIRE(reply);
  CHECK(reply->status == 503);
  CHECK(rejected(server, RejectReason::OverBudget) == 1);
}

TEST_CASE("a malformed request head gets 400 and an oversized one 431", "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.maxHeadBytes = 1024;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client garbage(*port);
  auto bad = garbage.request("NOT HTTP AT ALL\r\n\r\n");
  REQUIRE(bad);
  CHECK(bad->status == 400);
  CHECK(garbage.waitClosed());
  Client huge(*port);
  auto tooLarge = huge.request(get("/hello", "X-Fill: " + std::string(2000, 'f') + "\r\n"));
  REQUIRE(tooLarge);
  CHECK(tooLarge->status == 431);
  CHECK(rejected(server, RejectReason::Malformed) == 1);
  CHECK(rejected(server, RejectReason::HeadTooLarge) == 1);
  Client unknown(*port);
  auto missing = unknown.request(get("/nope"));
  REQUIRE(missing);
  CHECK(missing->status == 404);
  auto wrongMethod = unknown.request(post("/hello", "x"));
  REQUIRE(wrongMethod);
  CHECK(wrongMethod->status == 405);
}

TEST_CASE("many keep-alive requests are served over one connection", "[http]") {
  ServerOptions options = plainOptions({hello(), echo()});
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client client(*port);
  for (int i = 0; i < 500; ++i) {
    auto reply = i % 2 == 0 ? client.request(get("/hello")) : client.request(post("/echo", std::to_string(i)));
    REQUIRE(reply);
    REQUIRE(reply->status == 200);
    REQUIRE_FALSE(reply->has("Connection: close"));
  }
  // Two requests sent at once (pipelined) are answered in order.
  REQUIRE(client.send(post("/echo", "first") + post("/echo", "second")));
  CHECK(client.read()->body == "echo:first");
  CHECK(client.read()->body == "echo:second");
  // "Connection: close" is honoured.
  auto last = client.request(get("/hello", "Connection: close\r\n"));
  REQUIRE(last);
  CHECK(last->has("Connection: close"));
  CHECK(client.waitClosed());
  client.close();
  CHECK(waitUntil([&] { return closed(server, CloseReason::Peer) == 1; }));
  CHECK(server.stats().requests == 503);
}

TEST_CASE("an idle keep-alive connection is closed after the idle timeout", "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.idleTimeout = 200ms;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client client(*port);
  REQUIRE(client.request(get("/hello")));
  CHECK(client.waitClosed());
  CHECK(closed(server, CloseReason::IdleDeadline) == 1);
}

TEST_CASE("a body that stops arriving is closed at the body deadline", "[http]") {
  ServerOptions options = plainOptions({echo()});
  options.limits.bodyTimeout = 200ms;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client client(*port);
  REQUIRE(client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nonly some"));
  CHECK(client.waitClosed());
  CHECK(closed(server, CloseReason::BodyDeadline) == 1);
  CHECK(waitUntil([&] { return server.stats().inFlightBytes == 0; }));
}

TEST_CASE("a full worker queue answers 503", "[http]") {
  Gate gate;
  ServerOptions options = plainOptions({echo()});
  options.workers = 1;
  options.maxQueued = 1;
  options.routes[0].handler = [&gate](const Request&) {
    gate.pass();
    return Response{200, "text/plain", "done", false, 0};
  };
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client running(*port);
  REQUIRE(running.send(post("/echo", "1")));
  REQUIRE(gate.waiting(1));
  // The one worker waits at the gate; of the next two, one fits in the queue of one and the
  // other is refused, whichever comes first.
  Client second(*port);
  Client third(*port);
  REQUIRE(second.send(post("/echo", "2")));
  REQUIRE(third.send(post("/echo", "3")));
  REQUIRE(waitUntil([&] { return rejected(server, RejectReason::QueueFull) == 1; }));
  gate.open();
  auto first = running.read();
  REQUIRE(first);
  CHECK(first->status == 200);
  auto a = second.read();
  auto b = third.read();
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->status + b->status == 200 + 503);
  const Reply& refused = a->status == 503 ? *a : *b;
  CHECK_FALSE(refused.has("Retry-After"));
  // The body was read, so the connection goes on.
  CHECK_FALSE(refused.has("Connection: close"));
}

TEST_CASE("stop with open connections returns and closes them", "[http]") {
  Gate gate;
  ServerOptions options = plainOptions({hello(), echo()});
  options.routes[1].handler = [&gate](const Request&) {
    gate.pass();
    return Response{200, "text/plain", "late", false, 0};
  };
  auto server = std::make_unique<Server>(options);
  auto port = server->start();
  REQUIRE(port.ok());
  Client idle(*port);
  Client midHead(*port);
  REQUIRE(midHead.send("GET /hel"));
  Client midBody(*port);
  REQUIRE(midBody.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\nabc"));
  Client handling(*port);
  REQUIRE(handling.send(post("/echo", "x")));
  REQUIRE(gate.waiting(1));
  REQUIRE(waitUntil([&] { return server->stats().openConnections == 4; }));

  std::thread opener([&] {
    // The handler is released only once stop() has begun closing connections.
    waitUntil([&] { return idle.closedNow(); });
    gate.open();
  });
  server->stop();
  opener.join();
  CHECK(idle.waitClosed());
  CHECK(midHead.waitClosed());
  CHECK(midBody.waitClosed());
  CHECK(handling.waitClosed());
  CHECK(server->stats().openConnections == 0);
  CHECK(closed(*server, CloseReason::Stopped) == 4);
  server->stop();  // idempotent
  server.reset();
  Client after(*port);
  CHECK((!after.connected() || after.waitClosed()));
}

TEST_CASE("shutdown answers every request still sent with Connection close and takes no new connection",
          "[http]") {
  Gate gate;
  ServerOptions options = plainOptions({hello(), echo()});
  options.routes[1].handler = [&gate](const Request& r) {
    gate.pass();
    return Response{200, "text/plain", "late:" + r.body, false, 0};
  };
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client neverUsed(*port);
  Client keptAlive(*port);
  REQUIRE(keptAlive.request(get("/hello")));
  Client handling(*port);
  REQUIRE(handling.send(post("/echo", "x")));
  REQUIRE(gate.waiting(1));
  REQUIRE(waitUntil([&] { return server.stats().openConnections == 3; }));

  std::atomic<bool> returned{false};
  std::thread stopper([&] {
    server.shutdown(kPatience);
    returned = true;
  });
  // No new connection is served.
  REQUIRE(waitUntil([&] {
    Client late(*port);
    return !late.connected() || !late.request(get("/hello"));
  }));
  // An idle keep-alive connection is not closed under the client: its next request is answered,
  // and the answer closes it.
  CHECK_FALSE(keptAlive.closedNow());
  auto next = keptAlive.request(get("/hello"));
  REQUIRE(next);
  CHECK(next->status == 200);
  CHECK(next->has("Connection: close"));
  CHECK(keptAlive.waitClosed());
  // The request under way still gets its answer, which closes its connection.
  CHECK_FALSE(returned.load());
  gate.open();
  auto reply = handling.read();
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(reply->body == "late:x");
  CHECK(reply->has("Connection: close"));
  CHECK(handling.waitClosed());
  // Shutdown returns once the last connection is gone (here: its client leaves), not at the grace.
  CHECK_FALSE(returned.load());
  neverUsed.close();
  stopper.join();
  CHECK(returned.load());
  CHECK(server.stats().openConnections == 0);
  // Closed by the server only: the late client, if it was admitted just as the shutdown began.
  CHECK(closed(server, CloseReason::Stopped) <= 1);
  server.stop();  // a no-op after shutdown
}

TEST_CASE("shutdown closes what is left once its grace has passed", "[http]") {
  Gate gate;
  ServerOptions options = plainOptions({hello(), echo()});
  options.routes[1].handler = [&gate](const Request&) {
    gate.pass();
    return Response{200, "text/plain", "too late", false, 0};
  };
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client idle(*port);
  REQUIRE(idle.request(get("/hello")));
  Client handling(*port);
  REQUIRE(handling.send(post("/echo", "x")));
  REQUIRE(gate.waiting(1));
  std::thread opener([&] {
    // The handler is released only once the grace is over and the connection closed.
    waitUntil([&] { return handling.closedNow(); });
    gate.open();
  });
  server.shutdown(50ms);
  opener.join();
  CHECK(handling.waitClosed());
  CHECK(idle.waitClosed());
  CHECK(closed(server, CloseReason::Stopped) == 2);
}

TEST_CASE("a taken port is a clear error", "[http]") {
  Server first(plainOptions({hello()}));
  auto port = first.start();
  REQUIRE(port.ok());
  ServerOptions options = plainOptions({hello()});
  options.port = *port;
  Server second(options);
  auto clash = second.start();
  REQUIRE_FALSE(clash.ok());
  CHECK_THAT(clash.error().message, Catch::Contains("cannot listen on 127.0.0.1:"));
}

// --- fair admission: progress, per-address shares, the reserve, heads charged.

TEST_CASE("a request trickled below the minimum rate is closed after its grace while others are served",
          "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.receiveGrace = 300ms;
  options.limits.minReceiveBytesPerSecond = 1000;  // a byte every 20 ms is 50 bytes a second
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());

  Client trickler(*port);
  REQUIRE(trickler.send("GET /hello HTTP/1.1\r\n"));
  std::atomic<int> bytesSent{0};
  std::thread sender([&] {
    const auto end = std::chrono::steady_clock::now() + kPatience;
    while (std::chrono::steady_clock::now() < end) {
      if (!trickler.send("X") || trickler.closedNow()) break;
      ++bytesSent;
      std::this_thread::sleep_for(20ms);
    }
  });
  Client prompt(*port);
  auto reply = prompt.request(get("/hello"));
  CHECK(trickler.waitClosed());
  sender.join();
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(bytesSent > 1);  // it kept sending, and was cut all the same
  CHECK(closed(server, CloseReason::TooSlow) == 1);
  CHECK(closed(server, CloseReason::HeadDeadline) == 0);  // long before the 10 s head deadline
}

TEST_CASE("a body held one byte short is closed once it stalls for the grace and its charge freed", "[http]") {
  ServerOptions options = plainOptions({echo()});
  options.limits.receiveGrace = 300ms;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client hog(*port);
  REQUIRE(hog.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n" + std::string(999, 'h')));
  REQUIRE(waitUntil([&] { return server.stats().inFlightBytes > 0; }));
  CHECK(hog.waitClosed());
  CHECK(closed(server, CloseReason::TooSlow) == 1);
  CHECK(closed(server, CloseReason::BodyDeadline) == 0);
  CHECK(waitUntil([&] { return server.stats().inFlightBytes == 0; }));
}

TEST_CASE("a body sent steadily above the minimum rate outlasts the grace and is served", "[http]") {
  ServerOptions options = plainOptions({echo()});
  options.limits.receiveGrace = 2s;
  options.limits.minReceiveBytesPerSecond = 100;  // it sends about 1,000 a second
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client steady(*port);
  REQUIRE(steady.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3000\r\n\r\n"));
  for (int i = 0; i < 60; ++i) {
    REQUIRE(steady.send(std::string(50, 's')));
    std::this_thread::sleep_for(50ms);
  }
  auto reply = steady.read();
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(closed(server, CloseReason::TooSlow) == 0);
}

TEST_CASE("at its address share a newcomer replaces its own address's idle connection and never another's",
          "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.maxConnectionsPerSource = 2;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client other(*port, "127.0.0.1");
  REQUIRE(other.request(get("/hello")));  // idle now, and the oldest
  Client a(*port, "127.0.0.2");
  REQUIRE(waitUntil([&] { return server.stats().idleConnections == 2; }));
  Client b(*port, "127.0.0.2");
  REQUIRE(waitUntil([&] { return server.stats().idleConnections == 3; }));

  Client c(*port, "127.0.0.2");
  auto reply = c.request(get("/hello"));
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(a.waitClosed());
  CHECK(closed(server, CloseReason::Evicted) == 1);
  // The other address's connection, though older, is untouched.
  auto again = other.request(get("/hello"));
  REQUIRE(again);
  CHECK(again->status == 200);
}

TEST_CASE("a served connection slow past its grace is evicted for a newcomer at the cap", "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.maxConnections = 1;
  options.limits.receiveGrace = 1s;
  options.limits.minReceiveBytesPerSecond = 1;  // each byte earns the whole grace: never TooSlow
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client slow(*port, "127.0.0.2");
  REQUIRE(slow.request(get("/hello")));  // served once: a later slow request is judged by its grace
  REQUIRE(slow.send("GET /hello HTTP/1.1\r\n"));
  std::atomic<bool> stop{false};
  std::thread sender([&] {
    while (!stop && slow.send("X")) std::this_thread::sleep_for(20ms);
  });
  // Once it has been receiving for longer than its grace, a newcomer takes its slot.
  REQUIRE(waitUntil([&] { return server.stats().openConnections == 1; }));
  std::this_thread::sleep_for(1100ms);  // past the grace: the rule under test, not a wait for an effect
  Client fresh(*port);
  auto reply = fresh.request(get("/hello"));
  stop = true;
  sender.join();
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(slow.waitClosed());
  CHECK(closed(server, CloseReason::EvictedSlow) == 1);
  CHECK(closed(server, CloseReason::TooSlow) == 0);
}

TEST_CASE("at the cap the oldest connection never served goes first whatever its address", "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.maxConnections = 4;
  options.limits.receiveGrace = kPatience;  // mid-head within their grace
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // Two served and idle from 127.0.0.1 (the address holding most), then two never served from
  // two other addresses, the older mid-head, the younger mid-head too.
  Client served1(*port, "127.0.0.1");
  REQUIRE(served1.request(get("/hello")));
  Client served2(*port, "127.0.0.1");
  REQUIRE(served2.request(get("/hello")));
  Client older(*port, "127.0.0.2");
  REQUIRE(older.send("GET /hel"));
  REQUIRE(waitUntil([&] { return server.stats().openConnections == 3; }));
  Client younger(*port, "127.0.0.3");
  REQUIRE(younger.send("GET /hel"));
  REQUIRE(
      waitUntil([&] { return server.stats().openConnections == 4 && server.stats().idleConnections == 2; }));

  Client fresh(*port, "127.0.0.4");
  auto reply = fresh.request(get("/hello"));
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(older.waitClosed());
  CHECK(closed(server, CloseReason::EvictedUnserved) == 1);
  CHECK_FALSE(younger.closedNow());
  // The served ones keep their slots.
  CHECK(served1.request(get("/hello")));
  CHECK(served2.request(get("/hello")));
  CHECK(server.stats().openConnections <= 4);
}

TEST_CASE(
    "the connection cap counts every connection and at it a served one gives way only to an address holding fewer",
    "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.maxConnections = 8;
  options.limits.maxConnectionsPerSource = 4;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // 40 clients from 4 addresses in turn, each sending a whole request at once and keeping its
  // connection: the first 8 are served (2 per address); then every address holds its fair share
  // and a newcomer from any of them is refused, however promptly it sends.
  std::vector<std::unique_ptr<Client>> clients;
  int served = 0;
  std::size_t mostOpen = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string source = "127.0.1." + std::to_string(2 + i % 4);
    clients.push_back(std::make_unique<Client>(*port, source.c_str()));
    if (auto reply = clients.back()->request(get("/hello")); reply && reply->status == 200) ++served;
    mostOpen = std::max(mostOpen, server.stats().openConnections);
  }
  CHECK(served == 8);
  CHECK(mostOpen <= 8);
  CHECK(closed(server, CloseReason::RefusedAtCap) == 32);
  // A fifth address holds none: the least recently active idle one of an address holding most
  // gives way.
  Client fifth(*port, "127.0.1.9");
  auto reply = fifth.request(get("/hello"));
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(waitUntil([&] { return closed(server, CloseReason::EvictedOverShare) == 1; }));
  CHECK(clients[0]->waitClosed());
  CHECK(server.stats().openConnections == 8);
}

TEST_CASE("a connection not served within its first request deadline is closed whatever it is doing",
          "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.tls = TlsOptions{[](SSL_CTX*) { return true; }};
  options.limits.firstRequestTimeout = 300ms;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // 16 bytes of a ClientHello: in its handshake, neither idle nor past any receive grace.
  Client partialHello(*port, "127.0.0.2");
  REQUIRE(
      partialHello.send(std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11) + std::string(5, 'r')));
  // And a client that never sends a byte.
  Client silent(*port, "127.0.0.3");
  CHECK(partialHello.waitClosed());
  CHECK(silent.waitClosed());
  CHECK(closed(server, CloseReason::FirstRequestDeadline) == 2);
  CHECK(closed(server, CloseReason::HandshakeDeadline) == 0);
}

TEST_CASE("a half sent first request head is closed at its first request deadline", "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.firstRequestTimeout = 300ms;
  options.limits.receiveGrace = kPatience;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client half(*port);
  REQUIRE(half.send("GET /hello HTTP/1.1\r\nHost: t\r\n"));
  CHECK(half.waitClosed());
  CHECK(closed(server, CloseReason::FirstRequestDeadline) == 1);
  // A served connection's next request is not bound by it.
  Client served(*port);
  REQUIRE(served.request(get("/hello")));
  std::this_thread::sleep_for(400ms);  // past the first request's deadline: the rule under test
  auto again = served.request(get("/hello"));
  REQUIRE(again);
  CHECK(again->status == 200);
}

TEST_CASE("at its address share with nothing evictable a newcomer is refused while other addresses are served",
          "[http]") {
  Gate gate;
  ServerOptions options = plainOptions({hello(), echo()});
  options.limits.maxConnectionsPerSource = 2;
  options.routes[1].handler = [&gate](const Request&) {
    gate.pass();
    return Response{200, "text/plain", "done", false, 0};
  };
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  Client a(*port, "127.0.0.2");
  Client b(*port, "127.0.0.2");
  REQUIRE(a.send(post("/echo", "1")));
  REQUIRE(b.send(post("/echo", "2")));
  REQUIRE(gate.waiting(2));
  Client refused(*port, "127.0.0.2");
  CHECK(refused.waitClosed());
  CHECK(closed(server, CloseReason::RefusedSourceShare) == 1);
  Client other(*port, "127.0.0.1");
  auto reply = other.request(get("/hello"));
  REQUIRE(reply);
  CHECK(reply->status == 200);
  gate.open();
  CHECK(a.read());
  CHECK(b.read());
}

TEST_CASE("request heads are charged to the in flight budget as they arrive", "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.maxInFlightBytes = 1000;
  options.limits.receiveGrace = kPatience;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // 300 bytes of a head that is not finished: held twice (the buffer and, parsed, the fields).
  Client held(*port);
  REQUIRE(held.send("GET /hello HTTP/1.1\r\nX-Fill: " + std::string(270, 'f')));
  waitUntil([&] { return server.stats().inFlightBytes == 2 * 299; }, 2s);
  REQUIRE(server.stats().inFlightBytes == 2 * 299);
  // Another 300 would not fit: 503 without Retry-After, and closed.
  Client over(*port);
  auto refused = over.request("GET /hello HTTP/1.1\r\nX-Fill: " + std::string(270, 'f'));
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK_FALSE(refused->has("Retry-After"));
  CHECK(rejected(server, RejectReason::OverBudget) == 1);
  // Once the held head is complete and answered, its charge is gone.
  REQUIRE(held.send("\r\n\r\n"));
  auto reply = held.read();
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(waitUntil([&] { return server.stats().inFlightBytes == 0; }));
}

TEST_CASE("one address may hold only its share of the in flight budget", "[http]") {
  ServerOptions options = plainOptions({echo()});
  options.limits.maxInFlightBytes = 10'000;
  options.limits.maxInFlightBytesPerSource = 4'000;
  options.limits.receiveGrace = kPatience;
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // 127.0.0.2 holds a body of 3,000 one byte short, then declares one that would pass its share.
  Client hog(*port, "127.0.0.2");
  REQUIRE(hog.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3000\r\n\r\n" + std::string(2999, 'h')));
  REQUIRE(waitUntil([&] { return server.stats().inFlightBytes >= 2999; }));
  Client second(*port, "127.0.0.2");
  auto refused = second.request("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2000\r\n\r\n");
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK_FALSE(refused->has("Retry-After"));
  CHECK(rejected(server, RejectReason::SourceOverBudget) == 1);
  // Another address has the rest of the budget.
  Client other(*port, "127.0.0.1");
  auto served = other.request(post("/echo", std::string(3500, 'o')));
  REQUIRE(served);
  CHECK(served->status == 200);
}

TEST_CASE("bodies held short from several addresses give their bytes to a prompt request within its fair share",
          "[http]") {
  ServerOptions options = plainOptions({echo()});
  options.limits.maxInFlightBytes = 10'000;
  options.limits.maxInFlightBytesPerSource = 10'000;
  options.limits.receiveGrace = kPatience;  // the hogs are never too slow: only the budget decides
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // Four addresses each hold a body of 2,200 one byte short (and its head, charged twice): about
  // 9,300 of the 10,000 held.
  std::vector<std::unique_ptr<Client>> hogs;
  for (int i = 0; i < 4; ++i) {
    const std::string source = "127.0.0." + std::to_string(2 + i);
    hogs.push_back(std::make_unique<Client>(*port, source.c_str()));
    REQUIRE(hogs.back()->send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2200\r\n\r\n" +
                              std::string(2199, 'h')));
    REQUIRE(waitUntil(
        [&] { return server.stats().inFlightBytes >= std::size_t{2199} * static_cast<std::size_t>(i + 1); }));
  }
  // A prompt request of 1,500 bytes from a fifth address (within its fair share: 10,000 / 5) is
  // served: the bytes come back from the hogs above their share, the one holding most first.
  Client prompt(*port, "127.0.0.1");
  auto reply = prompt.request(post("/echo", std::string(1500, 'p')));
  REQUIRE(reply);
  CHECK(reply->status == 200);
  // It did not fit in the 700 or so free: one hog's bytes came back (no more than needed).
  CHECK(closed(server, CloseReason::Preempted) == 1);
  CHECK(waitUntil([&] {
    return std::count_if(hogs.begin(), hogs.end(), [](const auto& hog) { return hog->closedNow(); }) == 1;
  }));
  // A request asking for more than its fair share takes nothing back: 503.
  Client greedy(*port, "127.0.0.9");
  auto refused = greedy.request(post("/echo", std::string(9000, 'g')));
  REQUIRE(refused);
  CHECK(refused->status == 503);
}

TEST_CASE("memory is given back once a flood of connections has passed", "[http]") {
  ServerOptions options = plainOptions({hello()});
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  {
    std::vector<std::unique_ptr<Client>> flood;
    for (int i = 0; i < 40; ++i) {
      flood.push_back(std::make_unique<Client>(*port));
      REQUIRE(flood.back()->connected());
    }
    REQUIRE(waitUntil([&] { return server.stats().openConnections == 40; }));
  }
  REQUIRE(waitUntil([&] { return server.stats().openConnections == 0; }));
  // The server looks every 5 s.
  CHECK(waitUntil([&] { return server.stats().memoryTrims >= 1; }));
}

TEST_CASE("a full worker queue gives the place of the address holding most to another address", "[http]") {
  Gate gate;
  ServerOptions options = plainOptions({echo()});
  options.workers = 1;
  options.maxQueued = 3;
  options.routes[0].handler = [&gate](const Request& r) {
    if (r.body == "block") gate.pass();
    return Response{200, "text/plain", "echo:" + r.body, false, 0};
  };
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // The one worker is blocked; 127.0.0.2 fills the queue with three requests.
  Client blocker(*port, "127.0.0.3");
  REQUIRE(blocker.send(post("/echo", "block")));
  REQUIRE(gate.waiting(1));
  std::vector<std::unique_ptr<Client>> flood;
  for (int i = 0; i < 3; ++i) {
    flood.push_back(std::make_unique<Client>(*port, "127.0.0.2"));
    REQUIRE(flood.back()->send(post("/echo", "flood")));
  }
  REQUIRE(waitUntil(
      [&] { return server.stats().inFlightBytes >= 3 * (httpHeadCost(post("/echo", "flood")) + 5); }));
  // A fourth from the same address has nowhere to go: 503.
  Client more(*port, "127.0.0.2");
  auto refused = more.request(post("/echo", "more"));
  REQUIRE(refused);
  CHECK(refused->status == 503);
  // One from another address takes the place of 127.0.0.2's newest, which gets 503.
  Client other(*port, "127.0.0.1");
  REQUIRE(other.send(post("/echo", "other")));
  REQUIRE(waitUntil([&] { return rejected(server, RejectReason::QueueFull) == 2; }));
  gate.open();
  auto served = other.read();
  REQUIRE(served);
  CHECK(served->status == 200);
  CHECK(served->body == "echo:other");
  int ok = 0;
  int unavailable = 0;
  for (auto& client : flood) {
    auto reply = client->read();
    REQUIRE(reply);
    (reply->status == 200 ? ok : unavailable) += 1;
  }
  CHECK(ok == 2);
  CHECK(unavailable == 1);
}

TEST_CASE("at the cap a busy served connection of the address holding most gives way to another address",
          "[http]") {
  Gate gate;
  ServerOptions options = plainOptions({hello(), echo()});
  options.limits.maxConnections = 3;
  options.limits.receiveGrace = kPatience;  // mid-request within their grace
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // 127.0.0.2 holds all three slots, each served once and now in the middle of its next request.
  std::vector<std::unique_ptr<Client>> busy;
  for (int i = 0; i < 3; ++i) {
    busy.push_back(std::make_unique<Client>(*port, "127.0.0.2"));
    REQUIRE(busy.back()->request(get("/hello")));
    REQUIRE(busy.back()->send("GET /hel"));
  }
  REQUIRE(
      waitUntil([&] { return server.stats().openConnections == 3 && server.stats().idleConnections == 0; }));
  Client fresh(*port, "127.0.0.1");
  auto reply = fresh.request(get("/hello"));
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(waitUntil([&] { return closed(server, CloseReason::EvictedOverShare) == 1; }));
  // A newcomer from the address holding most takes no slot: neither its own busy ones nor the
  // other address's idle one (that address holds fewer).
  Client same(*port, "127.0.0.2");
  CHECK(same.waitClosed());
  CHECK(closed(server, CloseReason::RefusedAtCap) == 1);
}

TEST_CASE("a newcomer within its grace is not evicted by a flood of newcomers from an address holding more",
          "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.maxConnections = 4;
  options.limits.newcomerGrace = kPatience;  // the rule under test: never past it here
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // 127.0.0.2 holds three connections that send nothing; 127.0.0.1 one that has not sent its
  // request yet (a kubelet's probe between connect and GET).
  std::vector<std::unique_ptr<Client>> flood;
  for (int i = 0; i < 3; ++i) flood.push_back(std::make_unique<Client>(*port, "127.0.0.2"));
  Client probe(*port, "127.0.0.1");
  REQUIRE(waitUntil([&] { return server.stats().openConnections == 4; }));
  // Newcomers from 127.0.0.2 (it holds most) are refused; newcomers from other addresses take
  // 127.0.0.2's slots; none takes the probe's.
  for (int i = 0; i < 5; ++i) {
    Client more(*port, "127.0.0.2");
    REQUIRE(more.connected());
    REQUIRE(waitUntil(
        [&] { return closed(server, CloseReason::RefusedAtCap) == static_cast<std::uint64_t>(i + 1); }));
  }
  std::vector<std::unique_ptr<Client>> others;
  for (int i = 0; i < 2; ++i) {
    const std::string source = "127.0.0." + std::to_string(3 + i);
    others.push_back(std::make_unique<Client>(*port, source.c_str()));
    REQUIRE(waitUntil(
        [&] { return closed(server, CloseReason::EvictedOverShare) == static_cast<std::uint64_t>(i + 1); }));
  }
  CHECK_FALSE(probe.closedNow());
  auto reply = probe.request(get("/hello"));
  REQUIRE(reply);
  CHECK(reply->status == 200);
}

TEST_CASE("at the cap a request still waiting in the worker queue of the address holding most gives way",
          "[http]") {
  Gate gate;
  std::atomic<int> handled{0};
  ServerOptions options = plainOptions({echo()});
  options.workers = 1;
  options.limits.maxConnections = 3;
  options.routes[0].handler = [&](const Request& r) {
    ++handled;
    if (r.body == "block") gate.pass();
    return Response{200, "text/plain", "echo:" + r.body, false, 0};
  };
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // The one worker is blocked; 127.0.0.2's two requests wait in the queue.
  Client blocker(*port, "127.0.0.3");
  REQUIRE(blocker.send(post("/echo", "block")));
  REQUIRE(gate.waiting(1));
  Client first(*port, "127.0.0.2");
  Client second(*port, "127.0.0.2");
  REQUIRE(first.send(post("/echo", "1")));
  REQUIRE(waitUntil([&] { return server.stats().inFlightBytes >= 2 * httpHeadCost(post("/echo", "1")); }));
  REQUIRE(second.send(post("/echo", "2")));
  REQUIRE(waitUntil([&] { return server.stats().inFlightBytes >= 3 * httpHeadCost(post("/echo", "1")); }));
  // A newcomer from a fourth address takes the slot of 127.0.0.2's queued request, the oldest one
  // (its handler never runs).
  Client fresh(*port, "127.0.0.1");
  REQUIRE(fresh.send(post("/echo", "fresh")));
  REQUIRE(waitUntil([&] { return closed(server, CloseReason::EvictedOverShare) == 1; }));
  gate.open();
  auto reply = fresh.read();
  REQUIRE(reply);
  CHECK(reply->body == "echo:fresh");
  CHECK(first.waitClosed());
  auto kept = second.read();
  REQUIRE(kept);
  CHECK(kept->body == "echo:2");
  CHECK(handled == 3);
}

TEST_CASE("at the cap a connection of the address holding most whose answer is being written gives way",
          "[http]") {
  ServerOptions options = plainOptions({hello()});
  options.limits.maxConnections = 2;
  options.routes.push_back(
      Route{"GET", "/big",
            [](const Request&) {
              return Response{200, "text/plain", std::string(16 * 1024 * 1024, 'b'), false, 0};
            },
            Dispatch::Inline, 1});
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  // 127.0.0.2 asks for two answers far larger than the socket buffers and reads neither: both are
  // being written.
  Client a(*port, "127.0.0.2");
  Client b(*port, "127.0.0.2");
  REQUIRE(a.send(get("/big")));
  REQUIRE(b.send(get("/big")));
  REQUIRE(waitUntil([&] { return server.stats().openConnections == 2 && server.stats().requests == 2; }));
  Client fresh(*port, "127.0.0.1");
  auto reply = fresh.request(get("/hello"));
  REQUIRE(reply);
  CHECK(reply->status == 200);
  CHECK(closed(server, CloseReason::EvictedOverShare) == 1);
}

TEST_CASE("connections waiting in the listen queue are admitted together before any of them is read",
          "[http]") {
  // One I/O thread held by a handler while 20 clients connect and send a request: once it is free,
  // every waiting connection is admitted before the first of their requests is handled. Admitting
  // one per round of the I/O loop instead would leave a probe behind a flood of connects for
  // seconds before it is even accepted.
  Gate gate;
  Server* self = nullptr;
  ServerOptions options = plainOptions({hello()});
  options.routes.push_back(Route{"GET", "/block",
                                 [&gate](const Request&) {
                                   gate.pass();
                                   return Response{200, "text/plain", "done", false, 0};
                                 },
                                 Dispatch::Inline, 1});
  options.routes.push_back(
      Route{"GET", "/open",
            [&self](const Request&) {
              return Response{200, "text/plain", std::to_string(self->stats().openConnections), false, 0};
            },
            Dispatch::Inline, 1});
  Server server(options);
  self = &server;
  auto port = server.start();
  REQUIRE(port.ok());
  Client blocker(*port);
  REQUIRE(blocker.send(get("/block")));
  REQUIRE(gate.waiting(1));
  std::vector<std::unique_ptr<Client>> waiting;
  for (int i = 0; i < 20; ++i) {
    waiting.push_back(std::make_unique<Client>(*port, "127.0.0.3"));
    REQUIRE(waiting.back()->connected());
    REQUIRE(waiting.back()->send(get("/open")));
  }
  gate.open();
  for (auto& client : waiting) {
    auto reply = client->read();
    REQUIRE(reply);
    CHECK(reply->status == 200);
    CHECK(reply->body == "21");
  }
}

namespace {

// Counts the connections open as the observer sees them (opened, not yet closed) and their peak.
class CountingObserver : public Observer {
 public:
  void connectionOpened() override {
    const int now = ++open_;
    int peak = peak_.load();
    while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
    }
  }
  void connectionClosed(CloseReason reason) override {
    if (reason != CloseReason::RefusedAtCap && reason != CloseReason::RefusedSourceShare) --open_;
  }
  void requestRejected(RejectReason) override {}
  void inFlightBytesChanged(std::int64_t) override {}
  int peak() const { return peak_.load(); }

 private:
  std::atomic<int> open_{0};
  std::atomic<int> peak_{0};
};

}  // namespace

TEST_CASE("admissions that evict wait for each eviction's close before the next", "[http]") {
  // At the cap, each of two newcomers from 127.0.0.3 evicts an idle connection of 127.0.0.2 (the
  // address holding most). An evicted connection's close is posted to its own strand and runs
  // after its successor is admitted (the cap + 1th socket, for that moment); admitting the next
  // newcomer before it ran would leave cap + 2 sockets open, and a batch of 64 cap + 64.
  Gate gate;
  CountingObserver observer;
  ServerOptions options = plainOptions({hello()});
  options.limits.maxConnections = 6;
  options.limits.newcomerGrace = 10s;  // the newcomers are admitted at once, unserved: never victims
  options.observer = &observer;
  options.routes.push_back(Route{"GET", "/block",
                                 [&gate](const Request&) {
                                   gate.pass();
                                   return Response{200, "text/plain", "done", false, 0};
                                 },
                                 Dispatch::Inline, 1});
  Server server(options);
  auto port = server.start();
  REQUIRE(port.ok());
  std::vector<std::unique_ptr<Client>> idle;
  for (int i = 0; i < 5; ++i) {
    idle.push_back(std::make_unique<Client>(*port, "127.0.0.2"));
    REQUIRE(idle.back()->request(get("/hello")));
  }
  Client blocker(*port, "127.0.0.4");
  REQUIRE(blocker.send(get("/block")));
  REQUIRE(gate.waiting(1));
  std::vector<std::unique_ptr<Client>> newcomers;
  for (int i = 0; i < 2; ++i) {
    newcomers.push_back(std::make_unique<Client>(*port, "127.0.0.3"));
    REQUIRE(newcomers.back()->send(get("/hello")));
  }
  gate.open();
  for (auto& client : newcomers) {
    auto reply = client->read();
    REQUIRE(reply);
    CHECK(reply->status == 200);
  }
  CHECK(closed(server, CloseReason::EvictedOverShare) == 2);
  CHECK(observer.peak() <= 7);
}
