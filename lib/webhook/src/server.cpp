#include "restarter/webhook/server.hpp"

#include "restarter/webhook/admission.hpp"

#include <atomic>
#include <mutex>
#include <utility>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

namespace restarter::webhook {

// OpenSSL's deleters, named outside the anonymous namespace because CertificateStore::Snapshot,
// a member of an exported class, holds them (GCC's -Wsubobject-linkage in a unity batch).
namespace server_openssl {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct ChainFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};

}  // namespace server_openssl

namespace {

using server_openssl::BioFree;
using server_openssl::ChainFree;
using server_openssl::KeyFree;
using server_openssl::X509Free;

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
  std::unique_ptr<X509, server_openssl::X509Free> cert;
  std::unique_ptr<EVP_PKEY, server_openssl::KeyFree> key;
  std::unique_ptr<STACK_OF(X509), server_openssl::ChainFree> chain;
  std::string fingerprint;
  std::string certPem;
  std::string keyPem;
  mutable std::atomic<std::uint64_t> handshakes{0};
};

// A mutex, not std::atomic<std::shared_ptr>: libstdc++ 12 implements the latter with a lock bit
// that ThreadSanitizer cannot see, so every swap beside a handshake is reported as a data race
// (and the TSan build's halt_on_error ends the server). Held only to copy a pointer.
struct CertificateStore::Impl {
  mutable std::mutex mutex;
  std::shared_ptr<const Snapshot> current;   // guarded by mutex
  std::shared_ptr<const Snapshot> previous;  // guarded by mutex

  std::shared_ptr<const Snapshot> load(bool wantPrevious) const {
    std::lock_guard<std::mutex> lock(mutex);
    return wantPrevious ? previous : current;
  }
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
  std::shared_ptr<const Snapshot> replaced;  // released outside the lock
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    replaced = std::exchange(impl_->previous, std::exchange(impl_->current, std::move(snapshot)));
  }
  return core::okStatus();
}

std::shared_ptr<const CertificateStore::Snapshot> CertificateStore::current() const {
  return impl_->load(false);
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
  const auto snapshot = impl_->load(true);
  return snapshot ? snapshot->handshakes.load() : 0;
}

std::string CertificateStore::previousFingerprint() const {
  const auto snapshot = impl_->load(true);
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

http::Limits webhookLimits() {
  http::Limits limits;
  // One constant bounds a review, for the server (413 beyond) and the parser (admission.hpp).
  limits.maxBodyBytes = kMaxAdmissionReviewBytes;
  return limits;
}

namespace {

// Where a context's ClientAuth is found from the verify callback (asio uses the app data).
int clientAuthIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// OpenSSL has verified the chain and the names (X509_VERIFY_PARAM hosts); this only reports a
// refusal. Returning 0 fails the handshake.
int verifyClient(int preverifyOk, X509_STORE_CTX* storeCtx) {
  if (preverifyOk == 1) return 1;
  const auto* ssl =
      static_cast<const SSL*>(X509_STORE_CTX_get_ex_data(storeCtx, SSL_get_ex_data_X509_STORE_CTX_idx()));
  const auto* auth =
      ssl == nullptr
          ? nullptr
          : static_cast<const ClientAuth*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), clientAuthIndex()));
  if (auth != nullptr && auth->refused) {
    auth->refused(X509_STORE_CTX_get_error(storeCtx) == X509_V_ERR_HOSTNAME_MISMATCH ? "name" : "untrusted");
  }
  return 0;
}

// Requires a client certificate signed by `auth.caPem`, for a client (purpose), naming one of
// `auth.allowedNames` when any. The names are matched by OpenSSL's host check against the common
// name and every DNS subjectAltName, exactly (no wildcards in the certificate, no partial labels).
bool requireClientCertificates(SSL_CTX* ctx, const ClientAuth& auth) {
  X509_STORE* trusted = SSL_CTX_get_cert_store(ctx);
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(auth.caPem.data(), static_cast<int>(auth.caPem.size())));
  if (!bio) return false;
  int loaded = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    std::unique_ptr<X509, X509Free> owned(cert);
    if (X509_STORE_add_cert(trusted, cert) != 1) return false;
    ++loaded;
  }
  ERR_clear_error();  // the loop ends on "no start line"
  if (loaded == 0) return false;
  X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx);
  if (X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_SSL_CLIENT) != 1) return false;
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_ALWAYS_CHECK_SUBJECT | X509_CHECK_FLAG_NO_WILDCARDS);
  for (const std::string& name : auth.allowedNames) {
    if (X509_VERIFY_PARAM_add1_host(param, name.c_str(), name.size()) != 1) return false;
  }
  if (SSL_CTX_set_ex_data(ctx, clientAuthIndex(), const_cast<ClientAuth*>(&auth)) != 1) return false;
  // Sessions resumed from tickets keep the verified peer; OpenSSL requires a context id for that.
  static constexpr unsigned char kSessionContext[] = "restarter-webhook";
  if (SSL_CTX_set_session_id_context(ctx, kSessionContext, sizeof kSessionContext - 1) != 1) return false;
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, verifyClient);
  return true;
}

// The SSL_CTX policy: TLS 1.2 minimum (Kubernetes' apiserver speaks 1.2 and 1.3; 1.3 is
// negotiated when offered); for TLS 1.2 forward secrecy and AEAD only (Mozilla "intermediate"),
// TLS 1.3's suites are all good; no compression, no renegotiation; the certificate chosen per
// handshake from the store. (Asio sets SSL_MODE_RELEASE_BUFFERS on every connection, so an idle
// one holds no TLS record buffers.)
bool configureTls(SSL_CTX* ctx, const CertificateStore* store, const ClientAuth* clientAuth) {
  if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return false;
  if (SSL_CTX_set_cipher_list(ctx, "ECDHE+AESGCM:ECDHE+CHACHA20") != 1) return false;
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_cert_cb(ctx, selectCertificate, const_cast<CertificateStore*>(store));
  return clientAuth == nullptr || requireClientCertificates(ctx, *clientAuth);
}

// Charged as the body arrives: 7 bytes per body byte, what a review costs at its worst while it is
// answered. Measured on a review that is one large pod-template annotation (kuttl
// webhook-hostile-bodies): 6.0-6.5 bytes per body byte of peak RSS: the body, the JSON lexer's
// buffer (grown by doubling, so briefly twice), the tree's string, the handler's copy of the
// template annotations. With one client address's 28 MiB share of the 32 MiB budget the largest
// review answered is 4 MiB (the apiserver's are far smaller: etcd keeps objects under 1.5 MiB); a
// larger one gets 503 from its head and fails open. Reviews of many small values are charged more before parsing
// (parseCostBound).
constexpr std::size_t kBodyCostFactor = 7;

}  // namespace

struct HttpsServer::Impl {
  std::optional<ClientAuth> clientAuth;  // read by handshakes; lives as long as the server
  std::unique_ptr<http::Server> server;
};

HttpsServer::HttpsServer(ServerOptions options, const CertificateStore& certificates,
                         std::function<HttpReply(const std::string& body)> handler)
    : impl_(std::make_unique<Impl>()) {
  const CertificateStore* store = &certificates;
  http::ServerOptions http;
  http.host = options.address.host;
  http.port = options.address.port;
  http.limits = options.limits;
  http.workers = options.threads;
  // A review waiting behind 4 rounds of slow lookups would outlive the apiserver's timeout
  // anyway; 503 at once lets it fail open sooner.
  http.maxQueued = 4 * options.threads;
  http.observer = options.observer;
  impl_->clientAuth = std::move(options.clientAuth);
  const ClientAuth* clientAuth = impl_->clientAuth ? &*impl_->clientAuth : nullptr;
  http.tls =
      http::TlsOptions{[store, clientAuth](SSL_CTX* ctx) { return configureTls(ctx, store, clientAuth); }};
  http::Observer* observer = options.observer;
  http.routes.push_back(http::Route{
      "POST", options.path,
      [store, observer, handler = std::move(handler)](const http::Request& request) {
        if (!request.reserve(request.body.size() + parseCostBound(request.body))) {
          if (observer) observer->requestRejected(http::RejectReason::OverBudget);
          // No Retry-After: the apiserver would retry until its timeout; without, it fails open now.
          return http::Response{503, "text/plain; charset=utf-8", "busy: too many bytes in flight\n", false, 0};
        }
        const HttpReply reply = handler(request.body);
        http::Response response{reply.status, reply.contentType, reply.body, false, 0};
        // A connection still presenting a replaced certificate is asked to close after this
        // answer: the client reconnects and verifies the new certificate now, rather than whenever
        // the connection happens to end (a broken rotation shows at once, not hours later).
        // Nothing is dropped: this answer is delivered.
        const auto current = store->current();
        if (request.tls != nullptr && current &&
            SSL_get_certificate(const_cast<SSL*>(request.tls)) != current->cert.get()) {
          response.close = true;
        }
        return response;
      },
      http::Dispatch::Pool, kBodyCostFactor});
  impl_->server = std::make_unique<http::Server>(std::move(http));
}

HttpsServer::~HttpsServer() { stop(); }

core::Result<int> HttpsServer::start() { return impl_->server->start(); }

void HttpsServer::stop() { impl_->server->stop(); }

void HttpsServer::shutdown(std::chrono::milliseconds grace) { impl_->server->shutdown(grace); }

}  // namespace restarter::webhook
