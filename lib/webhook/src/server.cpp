#include "restarter/webhook/server.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <atomic>
#include <thread>

#include <httplib.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace restarter::webhook {

namespace {

struct X509Free { void operator()(X509* x) const { X509_free(x); } };
struct KeyFree { void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); } };
struct BioFree { void operator()(BIO* b) const { BIO_free(b); } };
struct ChainFree { void operator()(STACK_OF(X509)* s) const { sk_X509_pop_free(s, X509_free); } };

using BioPtr = std::unique_ptr<BIO, BioFree>;

BioPtr memoryBio(std::string_view pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::string hex(const unsigned char* data, unsigned int size) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < size; ++i) {
    out += digits[data[i] >> 4];
    out += digits[data[i] & 0xf];
  }
  return out;
}

}  // namespace

struct CertificateStore::Snapshot {
  std::unique_ptr<X509, X509Free> cert;
  std::unique_ptr<EVP_PKEY, KeyFree> key;
  std::unique_ptr<STACK_OF(X509), ChainFree> chain;
  std::string fingerprint;
  std::string certPem;
  std::string keyPem;
  mutable std::atomic<std::uint64_t> handshakes{0};
};

struct CertificateStore::Impl {
  std::atomic<std::shared_ptr<const Snapshot>> current;
  std::atomic<std::shared_ptr<const Snapshot>> previous;
};

CertificateStore::CertificateStore() : impl_(std::make_unique<Impl>()) {}
CertificateStore::~CertificateStore() = default;

core::Status CertificateStore::update(std::string_view certPem, std::string_view keyPem) {
  auto bad = [](const std::string& what) {
    ERR_clear_error();
    return core::makeError(core::ErrorKind::InvalidInput, what);
  };
  // The same pair again (each periodic check hands it over): keep the snapshot and its counts.
  if (const auto now = current(); now && now->certPem == certPem && now->keyPem == keyPem) {
    return core::okStatus();
  }
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->certPem = std::string(certPem);
  snapshot->keyPem = std::string(keyPem);
  BioPtr certBio = memoryBio(certPem);
  if (!certBio) return bad("out of memory");
  snapshot->cert.reset(PEM_read_bio_X509(certBio.get(), nullptr, nullptr, nullptr));
  if (!snapshot->cert) return bad("the serving certificate is not a PEM certificate");
  snapshot->chain.reset(sk_X509_new_null());
  while (X509* extra = PEM_read_bio_X509(certBio.get(), nullptr, nullptr, nullptr)) {
    sk_X509_push(snapshot->chain.get(), extra);
  }
  ERR_clear_error();  // the loop ends on "no start line"
  BioPtr keyBio = memoryBio(keyPem);
  if (!keyBio) return bad("out of memory");
  snapshot->key.reset(PEM_read_bio_PrivateKey(keyBio.get(), nullptr, nullptr, nullptr));
  if (!snapshot->key) return bad("the serving key is not a PEM private key");
  if (X509_check_private_key(snapshot->cert.get(), snapshot->key.get()) != 1) {
    return bad("the serving key does not belong to the serving certificate");
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (X509_digest(snapshot->cert.get(), EVP_sha256(), digest, &length) == 1) {
    snapshot->fingerprint = hex(digest, length);
  }
  impl_->previous.store(impl_->current.exchange(std::move(snapshot)));
  return core::okStatus();
}

std::shared_ptr<const CertificateStore::Snapshot> CertificateStore::current() const {
  return impl_->current.load();
}

std::string CertificateStore::fingerprint() const {
  const auto snapshot = current();
  return snapshot ? snapshot->fingerprint : std::string();
}

bool CertificateStore::ready() const { return current() != nullptr; }

std::uint64_t CertificateStore::handshakes() const {
  const auto snapshot = current();
  return snapshot ? snapshot->handshakes.load() : 0;
}

std::uint64_t CertificateStore::previousHandshakes() const {
  const auto snapshot = impl_->previous.load();
  return snapshot ? snapshot->handshakes.load() : 0;
}

std::string CertificateStore::previousFingerprint() const {
  const auto snapshot = impl_->previous.load();
  return snapshot ? snapshot->fingerprint : std::string();
}

namespace {

// OpenSSL's certificate callback: runs during each handshake, before the certificate is sent.
// Returns 1 on success, 0 to fail the handshake (no certificate yet).
int selectCertificate(SSL* ssl, void* arg) {
  const auto* store = static_cast<const CertificateStore*>(arg);
  const auto snapshot = store->current();
  if (!snapshot) return 0;
  snapshot->handshakes.fetch_add(1, std::memory_order_relaxed);
  // SSL_use_cert_and_key takes its own references; override=1 replaces what the SSL inherited.
  return SSL_use_cert_and_key(ssl, snapshot->cert.get(), snapshot->key.get(), snapshot->chain.get(), 1);
}

}  // namespace

struct HttpsServer::Impl {
  ServerOptions options;
  const CertificateStore& certificates;
  std::function<HttpReply(const std::string&)> handler;
  std::unique_ptr<httplib::SSLServer> server;
  std::thread thread;
  std::atomic<bool> listenReturned{false};

  Impl(ServerOptions o, const CertificateStore& c, std::function<HttpReply(const std::string&)> h)
      : options(std::move(o)), certificates(c), handler(std::move(h)) {}
};

HttpsServer::HttpsServer(ServerOptions options, const CertificateStore& certificates,
                         std::function<HttpReply(const std::string& body)> handler)
    : impl_(std::make_unique<Impl>(std::move(options), certificates, std::move(handler))) {
  const CertificateStore* store = &impl_->certificates;
  impl_->server = std::make_unique<httplib::SSLServer>([store](SSL_CTX& ctx) {
    // TLS 1.2 minimum (Kubernetes' apiserver speaks 1.2 and 1.3); 1.3 is negotiated when offered.
    if (SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION) != 1) return false;
    // TLS 1.2 ciphers: forward secrecy and AEAD only (Mozilla "intermediate"); TLS 1.3's are all good.
    if (SSL_CTX_set_cipher_list(&ctx, "ECDHE+AESGCM:ECDHE+CHACHA20") != 1) return false;
    SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                  SSL_OP_CIPHER_SERVER_PREFERENCE);
    SSL_CTX_set_cert_cb(&ctx, selectCertificate, const_cast<CertificateStore*>(store));
    return true;
  });
  httplib::SSLServer& server = *impl_->server;
  // Keep only SO_REUSEADDR: httplib's default SO_REUSEPORT would let a second process bind the
  // same port and silently take half the connections (as in lib/obs).
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    // No Nagle: httplib writes the headers and the body separately (two TLS records); with
    // Nagle and the peer's delayed ACK the second waits ~40 ms. Accepted sockets inherit it.
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  });
  const std::size_t threads = impl_->options.threads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // The apiserver reuses connections; let it send many reviews over one.
  server.set_keep_alive_max_count(10000);
  // An AdmissionReview holds the object and, on UPDATE, the old one: each at most etcd's 1.5 MiB.
  server.set_payload_max_length(8u << 20);
  Impl* impl = impl_.get();
  server.Post(impl_->options.path, [impl](const httplib::Request& req, httplib::Response& res) {
    const HttpReply reply = impl->handler(req.body);
    res.status = reply.status;
    res.set_content(reply.body, reply.contentType.c_str());
    // A connection still presenting a replaced certificate is asked to close after this answer:
    // the client reconnects and verifies the new certificate now, rather than whenever the
    // connection happens to end (a broken rotation shows at once, not hours later). Nothing is
    // dropped: this answer is delivered.
    const auto current = impl->certificates.current();
    if (req.ssl != nullptr && current &&
        SSL_get_certificate(const_cast<SSL*>(req.ssl)) != current->cert.get()) {
      res.set_header("Connection", "close");
    }
  });
}

HttpsServer::~HttpsServer() { stop(); }

core::Result<int> HttpsServer::start() {
  if (!impl_->server->is_valid()) {
    return core::makeError(core::ErrorKind::Internal, "cannot set up TLS");
  }
  const std::string host = impl_->options.address.host.empty() ? "0.0.0.0" : impl_->options.address.host;
  int port = impl_->options.address.port;
  if (port == 0) {
    port = impl_->server->bind_to_any_port(host);
    if (port < 0) port = 0;
  } else if (!impl_->server->bind_to_port(host, port)) {
    port = 0;
  }
  if (port == 0) {
    return core::makeError(core::ErrorKind::Unavailable, "cannot listen on " + host + ":" +
                                                             std::to_string(impl_->options.address.port));
  }
  impl_->listenReturned = false;
  impl_->thread = std::thread([impl = impl_.get()] {
    impl->server->listen_after_bind();
    impl->listenReturned = true;
  });
  // As in lib/obs: stop() is a no-op until the listen loop runs, so wait for it to run.
  while (!impl_->server->is_running() && !impl_->listenReturned) std::this_thread::yield();
  return port;
}

void HttpsServer::stop() {
  if (!impl_->thread.joinable()) return;
  impl_->server->stop();
  impl_->thread.join();
}

}  // namespace restarter::webhook
