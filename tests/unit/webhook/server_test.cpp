#include "restarter/webhook/server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <cstdlib>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <httplib.h>
#include <catch2/catch.hpp>

#include "restarter/certs/certs.hpp"
#include "restarter/webhook/admission.hpp"

using namespace restarter;
using namespace restarter::webhook;

namespace {

core::TimePoint now() {
  return std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
}

struct Pki {
  certs::KeyedCertificate ca;
  certs::KeyedCertificate leaf;
};

Pki makePki() {
  certs::CaRequest caRequest;
  auto ca = certs::createCa(caRequest, now());
  REQUIRE(ca.ok());
  certs::ServingRequest serving;
  serving.ipAddresses = {"127.0.0.1"};
  auto leaf = certs::issueServing(serving, *ca, now());
  REQUIRE(leaf.ok());
  return {*ca, *leaf};
}

std::string tempFile(const std::string& content) {
  char name[] = "/tmp/webhook-server-test-XXXXXX";
  const int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()));
  close(fd);
  return name;
}

// A minimal TLS client on raw OpenSSL, to see which certificate a connection got and to send
// several requests over one connection.
class RawTlsClient {
 public:
  RawTlsClient(int port, int maxVersion = 0) {
    ctx_ = SSL_CTX_new(TLS_client_method());
    if (maxVersion != 0) {
      SSL_CTX_set_security_level(ctx_, 0);
      SSL_CTX_set_min_proto_version(ctx_, TLS1_VERSION);
      SSL_CTX_set_max_proto_version(ctx_, maxVersion);
    }
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ssl_ = SSL_new(ctx_);
    SSL_set_fd(ssl_, fd_);
    connected_ = connected_ && SSL_connect(ssl_) == 1;
  }
  ~RawTlsClient() {
    SSL_free(ssl_);
    SSL_CTX_free(ctx_);
    close(fd_);
  }
  bool connected() const { return connected_; }
  std::string version() const { return SSL_get_version(ssl_); }

  std::string fingerprint() const {
    X509* cert = SSL_get1_peer_certificate(ssl_);
    if (cert == nullptr) return {};
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    X509_digest(cert, EVP_sha256(), digest, &length);
    X509_free(cert);
    std::string out;
    static const char* digits = "0123456789abcdef";
    for (unsigned int i = 0; i < length; ++i) {
      out += digits[digest[i] >> 4];
      out += digits[digest[i] & 0xf];
    }
    return out;
  }

  // One keep-alive request; the response body ("" on failure).
  std::string post(const std::string& body) {
    const std::string request =
        "POST /mutate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    if (SSL_write(ssl_, request.data(), static_cast<int>(request.size())) <= 0) return {};
    std::string response;
    lastHeaders_.clear();
    char buffer[4096];
    while (true) {
      const auto headerEnd = response.find("\r\n\r\n");
      if (headerEnd != std::string::npos) {
        const auto lengthAt = response.find("Content-Length: ");
        if (lengthAt != std::string::npos && lengthAt < headerEnd) {
          const std::size_t length = std::stoul(response.substr(lengthAt + 16));
          if (response.size() >= headerEnd + 4 + length) {
            lastHeaders_ = response.substr(0, headerEnd);
            return response.substr(headerEnd + 4, length);
          }
        }
      }
      const int n = SSL_read(ssl_, buffer, sizeof buffer);
      if (n <= 0) return {};
      response.append(buffer, static_cast<std::size_t>(n));
    }
  }

  const std::string& lastHeaders() const { return lastHeaders_; }

 private:
  std::string lastHeaders_;
  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace

TEST_CASE("server: the store refuses a key of another certificate and keeps the old one", "[server]") {
  const Pki a = makePki();
  const Pki b = makePki();
  CertificateStore store;
  CHECK_FALSE(store.ready());
  REQUIRE(store.update(a.leaf.certPem, a.leaf.keyPem).ok());
  const std::string before = store.fingerprint();
  CHECK(before.size() == 64);
  CHECK_FALSE(store.update(b.leaf.certPem, a.leaf.keyPem).ok());
  CHECK_FALSE(store.update("not pem", a.leaf.keyPem).ok());
  CHECK_FALSE(store.update(a.leaf.certPem, "not pem").ok());
  CHECK(store.fingerprint() == before);
}

// Readers (handshakes, requests, metrics) and the certificate check run on different threads. The
// ThreadSanitizer build runs this too: a store whose swap TSan cannot see as synchronized (as
// std::atomic<std::shared_ptr> in libstdc++ 12 was) fails it with a data race report.
TEST_CASE("server: the store swaps certificates while other threads read it", "[server]") {
  const Pki a = makePki();
  const Pki b = makePki();
  CertificateStore store;
  REQUIRE(store.update(a.leaf.certPem, a.leaf.keyPem).ok());
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 2; ++i) {
    readers.emplace_back([&] {
      while (!done.load()) {
        const auto snapshot = store.current();
        if (snapshot && store.fingerprint().size() == 64 && store.previousHandshakes() == 0) ++reads;
      }
    });
  }
  // Each update is a different pair, so each one swaps; wait for reads between them, so the
  // swaps and the reads interleave however the threads are scheduled.
  for (int round = 0; round < 20; ++round) {
    const Pki& next = round % 2 == 0 ? b : a;
    REQUIRE(store.update(next.leaf.certPem, next.leaf.keyPem).ok());
    const int seen = reads.load();
    while (reads.load() < seen + 2) std::this_thread::yield();
  }
  done = true;
  for (auto& reader : readers) reader.join();
  CHECK(reads.load() >= 40);
  CHECK(store.fingerprint().size() == 64);
}

TEST_CASE("server: serves POST over TLS and swaps the certificate without dropping connections", "[server]") {
  const Pki a = makePki();
  const Pki b = makePki();
  CertificateStore store;
  REQUIRE(store.update(a.leaf.certPem, a.leaf.keyPem).ok());
  HttpsServer server(ServerOptions{{"127.0.0.1", 0}, "/mutate", 4}, store, [](const std::string& body) {
    return HttpReply{200, "application/json", "echo:" + body};
  });
  auto port = server.start();
  REQUIRE(port.ok());

  RawTlsClient open(*port);
  REQUIRE(open.connected());
  CHECK(open.version() == "TLSv1.3");
  CHECK(open.post("one") == "echo:one");
  CHECK(open.lastHeaders().find("Connection: close") == std::string::npos);
  const std::string oldFingerprint = store.fingerprint();
  CHECK(open.fingerprint() == oldFingerprint);

  REQUIRE(store.update(b.leaf.certPem, b.leaf.keyPem).ok());
  // The open connection keeps its session and still works, and is asked to reconnect.
  CHECK(open.post("two") == "echo:two");
  CHECK(open.fingerprint() == oldFingerprint);
  CHECK(open.lastHeaders().find("Connection: close") != std::string::npos);
  // A new connection gets the new certificate.
  RawTlsClient fresh(*port);
  REQUIRE(fresh.connected());
  CHECK(fresh.fingerprint() == store.fingerprint());
  CHECK(fresh.fingerprint() != oldFingerprint);
  CHECK(fresh.post("three") == "echo:three");
  CHECK(fresh.lastHeaders().find("Connection: close") == std::string::npos);
  CHECK(store.handshakes() == 1);
  CHECK(store.previousHandshakes() == 1);
  CHECK(store.previousFingerprint() == oldFingerprint);
  // Handing over the same pair again keeps the snapshot (and its count).
  REQUIRE(store.update(b.leaf.certPem, b.leaf.keyPem).ok());
  CHECK(store.handshakes() == 1);
  CHECK(store.previousFingerprint() == oldFingerprint);

  // A verifying client trusting the CA works; other paths are not served.
  const std::string bundle = tempFile(a.ca.certPem + b.ca.certPem);
  httplib::SSLClient client("127.0.0.1", *port);
  client.set_ca_cert_path(bundle.c_str());
  client.enable_server_certificate_verification(true);
  auto verified = client.Post("/mutate", "four", "application/json");
  REQUIRE(verified);
  CHECK(verified->body == "echo:four");
  auto other = client.Post("/other", "x", "application/json");
  REQUIRE(other);
  CHECK(other->status == 404);
  client.stop();
  server.stop();
  std::remove(bundle.c_str());
}

TEST_CASE("server: TLS 1.2 is accepted and TLS 1.1 refused", "[server]") {
  const Pki a = makePki();
  CertificateStore store;
  REQUIRE(store.update(a.leaf.certPem, a.leaf.keyPem).ok());
  HttpsServer server(ServerOptions{{"127.0.0.1", 0}, "/mutate", 2}, store, [](const std::string&) {
    return HttpReply{200, "application/json", "ok"};
  });
  auto port = server.start();
  REQUIRE(port.ok());
  RawTlsClient old(*port, TLS1_1_VERSION);
  CHECK_FALSE(old.connected());
  RawTlsClient tls12(*port, TLS1_2_VERSION);
  REQUIRE(tls12.connected());
  CHECK(tls12.version() == "TLSv1.2");
  CHECK(tls12.post("x") == "ok");
}

TEST_CASE("server: without a certificate the handshake fails and a second bind is refused", "[server]") {
  CertificateStore store;
  HttpsServer server(ServerOptions{{"127.0.0.1", 0}, "/mutate", 2}, store,
                     [](const std::string&) { return HttpReply{}; });
  auto port = server.start();
  REQUIRE(port.ok());
  RawTlsClient client(*port);
  CHECK_FALSE(client.connected());
  HttpsServer second(ServerOptions{{"127.0.0.1", *port}, "/mutate", 2}, store,
                     [](const std::string&) { return HttpReply{}; });
  CHECK_FALSE(second.start().ok());
}

TEST_CASE("server: a review whose parse would exceed the byte budget gets 503 and others pass", "[server]") {
  const Pki a = makePki();
  CertificateStore store;
  REQUIRE(store.update(a.leaf.certPem, a.leaf.keyPem).ok());
  ServerOptions options{{"127.0.0.1", 0}, "/mutate", 2};
  options.limits.maxInFlightBytes = 256 * 1024;
  std::atomic<int> handled{0};
  HttpsServer server(options, store, [&handled](const std::string&) {
    ++handled;
    return HttpReply{200, "application/json", "ok"};
  });
  auto port = server.start();
  REQUIRE(port.ok());
  // 80 KB x 4 is over the budget from the head on.
  RawTlsClient large(*port);
  REQUIRE(large.connected());
  CHECK(large.post(std::string(80 * 1024, ' ')) == "Service Unavailable\n");
  CHECK(large.lastHeaders().rfind("HTTP/1.1 503", 0) == 0);
  // Without Retry-After: the apiserver would retry it until its timeout instead of failing open.
  CHECK(large.lastHeaders().find("Retry-After") == std::string::npos);
  // 20 KB fits at x4, but as 10,000 empty objects its tree would not.
  std::string objects = "[{}";
  while (objects.size() < 20 * 1024) objects += ",{}";
  objects += "]";
  RawTlsClient tiny(*port);
  REQUIRE(tiny.connected());
  CHECK(tiny.post(objects) == "busy: too many bytes in flight\n");
  CHECK(tiny.lastHeaders().rfind("HTTP/1.1 503", 0) == 0);
  CHECK(tiny.lastHeaders().find("Retry-After") == std::string::npos);
  // An ordinary review is served, over the same connection too.
  CHECK(tiny.post(R"({"kind":"AdmissionReview","request":{"uid":"1"}})") == "ok");
  CHECK(handled == 1);
}

TEST_CASE("the webhook server and the review parser refuse the same body size", "[webhook][server]") {
  CHECK(restarter::webhook::webhookLimits().maxBodyBytes == restarter::webhook::kMaxAdmissionReviewBytes);
}

namespace {

// A client certificate (extendedKeyUsage clientAuth unless `serverOnly`) for `commonName`, with
// `dnsNames` as subjectAltNames, signed by `ca`: what the apiserver's webhook client presents.
certs::KeyedCertificate issueClientCertForTest(const certs::KeyedCertificate& ca, const std::string& commonName,
                                               const std::vector<std::string>& dnsNames = {},
                                               bool serverOnly = false) {
  BIO* caBio = BIO_new_mem_buf(ca.certPem.data(), static_cast<int>(ca.certPem.size()));
  X509* caCert = PEM_read_bio_X509(caBio, nullptr, nullptr, nullptr);
  BIO_free(caBio);
  BIO* keyBio = BIO_new_mem_buf(ca.keyPem.data(), static_cast<int>(ca.keyPem.size()));
  EVP_PKEY* caKey = PEM_read_bio_PrivateKey(keyBio, nullptr, nullptr, nullptr);
  BIO_free(keyBio);
  REQUIRE(caCert != nullptr);
  REQUIRE(caKey != nullptr);
  EVP_PKEY* key = EVP_EC_gen("P-256");
  REQUIRE(key != nullptr);
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 7);
  X509_gmtime_adj(X509_getm_notBefore(cert), -300);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(commonName.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert, X509_get_subject_name(caCert));
  X509V3_CTX v3;
  X509V3_set_ctx(&v3, caCert, cert, nullptr, nullptr, 0);
  std::vector<std::pair<int, std::string>> extensions = {
      {NID_basic_constraints, "critical,CA:FALSE"},
      {NID_key_usage, "critical,digitalSignature"},
      {NID_ext_key_usage, serverOnly ? "serverAuth" : "clientAuth"}};
  if (!dnsNames.empty()) {
    std::string san;
    for (const auto& dns : dnsNames) san += (san.empty() ? "DNS:" : ",DNS:") + dns;
    extensions.emplace_back(NID_subject_alt_name, san);
  }
  for (const auto& [nid, value] : extensions) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &v3, nid, value.c_str());
    REQUIRE(ext != nullptr);
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
  }
  REQUIRE(X509_sign(cert, caKey, EVP_sha256()) > 0);
  BIO* out = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(out, cert);
  char* data = nullptr;
  const long certLength = BIO_get_mem_data(out, &data);
  certs::KeyedCertificate issued{std::string(data, static_cast<std::size_t>(certLength)), {}};
  BIO_free(out);
  out = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr);
  const long keyLength = BIO_get_mem_data(out, &data);
  issued.keyPem.assign(data, static_cast<std::size_t>(keyLength));
  BIO_free(out);
  X509_free(cert);
  EVP_PKEY_free(key);
  EVP_PKEY_free(caKey);
  X509_free(caCert);
  return issued;
}

// Blocks SIGPIPE on this thread while it lives, and discards one raised meanwhile: writing to a
// connection the server refused (TLS 1.3 ends the handshake before the server has verified the
// client) raises it through OpenSSL's write.
class SigpipeBlockedForTest {
 public:
  SigpipeBlockedForTest() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &previous_);
  }
  ~SigpipeBlockedForTest() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    const timespec none{0, 0};
    while (sigtimedwait(&pipe, nullptr, &none) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeBlockedForTest(const SigpipeBlockedForTest&) = delete;
  SigpipeBlockedForTest& operator=(const SigpipeBlockedForTest&) = delete;

 private:
  sigset_t previous_{};
};

// POSTs over a fresh connection with `client` (cert, key) or none; the answer's body, or nullopt
// when the server refused the connection.
std::optional<std::string> postWithClientCert(int port, const certs::KeyedCertificate* client) {
  const SigpipeBlockedForTest noSigpipe;
  std::string certFile, keyFile;
  if (client != nullptr) {
    certFile = tempFile(client->certPem);
    keyFile = tempFile(client->keyPem);
  }
  httplib::SSLClient http("127.0.0.1", port, certFile, keyFile);
  http.enable_server_certificate_verification(false);
  auto response = http.Post("/mutate", "review", "application/json");
  http.stop();
  if (client != nullptr) {
    std::remove(certFile.c_str());
    std::remove(keyFile.c_str());
  }
  if (!response) return std::nullopt;
  return response->body;
}

}  // namespace

TEST_CASE("server: with client auth only certificates of the CA and allowed names get through", "[server]") {
  const Pki serving = makePki();
  const Pki apiserverPki = makePki();
  const Pki otherPki = makePki();
  CertificateStore store;
  REQUIRE(store.update(serving.leaf.certPem, serving.leaf.keyPem).ok());
  std::atomic<int> handled{0};
  std::mutex refusedMutex;
  std::vector<std::string> refused;
  ServerOptions options{{"127.0.0.1", 0}, "/mutate", 2};
  options.clientAuth = ClientAuth{apiserverPki.ca.certPem,
                                  {"kube-apiserver-webhook-client", "webhook-client.example"},
                                  [&](const char* reason) {
                                    std::lock_guard lock(refusedMutex);
                                    refused.emplace_back(reason);
                                  }};
  HttpsServer server(options, store, [&handled](const std::string& body) {
    ++handled;
    return HttpReply{200, "application/json", "echo:" + body};
  });
  auto port = server.start();
  REQUIRE(port.ok());

  const auto byName = issueClientCertForTest(apiserverPki.ca, "kube-apiserver-webhook-client");
  const auto bySan = issueClientCertForTest(apiserverPki.ca, "someone", {"webhook-client.example"});
  CHECK(postWithClientCert(*port, &byName) == std::optional<std::string>("echo:review"));
  CHECK(postWithClientCert(*port, &bySan) == std::optional<std::string>("echo:review"));
  CHECK(handled == 2);

  // No certificate, another CA's certificate with the allowed name, another identity of the right
  // CA, a wildcard, a certificate not for clients, a serving certificate: refused, never handled.
  CHECK_FALSE(postWithClientCert(*port, nullptr));
  const auto otherCa = issueClientCertForTest(otherPki.ca, "kube-apiserver-webhook-client");
  CHECK_FALSE(postWithClientCert(*port, &otherCa));
  const auto otherName = issueClientCertForTest(apiserverPki.ca, "system:serviceaccount:evil:pod");
  CHECK_FALSE(postWithClientCert(*port, &otherName));
  const auto wildcard = issueClientCertForTest(apiserverPki.ca, "x", {"*.example"});
  CHECK_FALSE(postWithClientCert(*port, &wildcard));
  const auto notForClients = issueClientCertForTest(apiserverPki.ca, "kube-apiserver-webhook-client", {}, true);
  CHECK_FALSE(postWithClientCert(*port, &notForClients));
  CHECK(handled == 2);
  server.stop();
  std::lock_guard lock(refusedMutex);
  CHECK(refused == std::vector<std::string>{"untrusted", "name", "name", "untrusted"});
}

TEST_CASE("server: client auth without any CA certificate does not start", "[server]") {
  const Pki serving = makePki();
  CertificateStore store;
  REQUIRE(store.update(serving.leaf.certPem, serving.leaf.keyPem).ok());
  ServerOptions options{{"127.0.0.1", 0}, "/mutate", 2};
  options.clientAuth = ClientAuth{"not a certificate", {}, {}};
  HttpsServer server(options, store, [](const std::string&) { return HttpReply{}; });
  CHECK_FALSE(server.start().ok());
}
