#pragma once
// The webhook's HTTPS server (restarter::http over OpenSSL 3) with a serving certificate that can
// be replaced while it runs.
//
// TLS: 1.2 minimum, 1.3 preferred (the highest version both sides speak wins; nothing above 1.3 is
// disabled); for TLS 1.2 only ECDHE with AEAD ciphers; no compression, no renegotiation.
//
// Hot swap: every handshake asks the CertificateStore for its current certificate (OpenSSL's
// certificate callback), so a new certificate is used from the next handshake on; connections
// already open keep their session and are never dropped, but their next answer carries
// "Connection: close" so that clients reconnect and verify the new certificate soon.
//
// Bounds (http::Limits; docs/configuration.md "serve-webhook"): connections never hold a thread;
// the handler runs on `threads` workers with 4 x `threads` requests queued at most (503 beyond: the
// apiserver fails open); each review is charged its body x 7 as it arrives (kBodyCostFactor in
// src/server.cpp: the body, the lexer's buffer, the tree's strings and the handler's copy of the
// template annotations) and tops that up to its body plus
// parseCostBound(body) before parsing, against the budget of bytes in flight: a review that does
// not fit gets 503 (without Retry-After, so the apiserver fails open at once instead of retrying
// until its timeout), so memory stays bounded whatever arrives. Fair admission (a hard connection
// cap, a first-request deadline, fair shares of the connections, the budget and the worker queue
// whatever the number of addresses, a minimum receive rate) is http::Limits' (docs/architecture.md,
// "Bounded servers"). HTTP/1.1 only:
// Beast speaks no HTTP/2, and no ALPN protocol is selected, so the apiserver uses HTTP/1.1.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "restarter/core/result.hpp"
#include "restarter/http/server.hpp"
#include "restarter/obs/endpoints.hpp"

namespace restarter::webhook {

// The certificate the server presents. Thread-safe: update() from any thread; handshakes and
// requests take a shared_ptr<const> copy of the current one under a mutex held only for the copy.
class CertificateStore {
 public:
  CertificateStore();
  ~CertificateStore();
  CertificateStore(const CertificateStore&) = delete;
  CertificateStore& operator=(const CertificateStore&) = delete;

  // Parses and installs a PEM certificate (the first one is the leaf; any more are sent as its
  // chain) and its PEM private key. InvalidInput, keeping the old one, when they do not parse or
  // do not belong together. The same pair as the current one changes nothing.
  core::Status update(std::string_view certPem, std::string_view keyPem);
  // The SHA-256 fingerprint (hex) of the current leaf; empty before the first update().
  std::string fingerprint() const;
  // TLS handshakes that presented the current certificate, and the one it replaced (0 if none).
  std::uint64_t handshakes() const;
  std::uint64_t previousHandshakes() const;
  std::string previousFingerprint() const;
  bool ready() const;

  struct Snapshot;  // OpenSSL objects, defined in server.cpp
  std::shared_ptr<const Snapshot> current() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct HttpReply {
  int status = 200;
  std::string contentType = "application/json";
  std::string body;
};

// The webhook's limits: http::Limits' defaults, which are chosen for it (each reason is given
// there), with the body bound set from kMaxAdmissionReviewBytes (admission.hpp), so the server
// and the parser refuse the same size: 128 connections, 16 KiB heads, 8 MiB bodies (an AdmissionReview holds the object and,
// on UPDATE, the old one: each at most etcd's 1.5 MiB), 32 MiB in flight (one review of 8 MiB at
// x4, or hundreds of ordinary ones; with it 16 parallel reviews of 7.9 MB keep the process under
// 64 MiB), deadlines of 10 s, idle 120 s.
http::Limits webhookLimits();

// Client-certificate authentication (serve-webhook --client-ca-file, --client-allowed-names;
// docs/architecture.md, "Authenticated callers"): every handshake must present a certificate
// that `caPem` signs (verified by OpenSSL: chain, validity, purpose) and, when `allowedNames` is
// not empty, whose subject common name or one of whose DNS subjectAltNames is one of them (exactly,
// no wildcards). Anything else fails the handshake, so no byte of a request is read: the apiserver
// is the only caller when it is given a certificate for webhooks (its admission configuration's
// kubeConfigFile). A handshake without a certificate counts as a failed handshake
// (http::CloseReason::HandshakeFailed); one whose certificate is refused also calls `refused`.
struct ClientAuth {
  std::string caPem;  // one or more PEM certificates
  std::vector<std::string> allowedNames{};
  // Called on an I/O thread with "untrusted" (no chain to caPem, expired, not for clients) or
  // "name" (not one of allowedNames). Must be thread-safe and must not throw.
  std::function<void(const char* reason)> refused{};
};

// serve-webhook --threads' default (ServiceOptions::threads).
inline constexpr std::size_t kDefaultThreads = 16;

struct ServerOptions {
  obs::BindAddress address{"0.0.0.0", 8443};
  std::string path;  // POST route, e.g. /mutate
  // Worker threads running the handler (which may wait for lookups up to --lookup-timeout).
  // Connections do not hold one.
  std::size_t threads = kDefaultThreads;
  http::Limits limits = webhookLimits();
  http::Observer* observer = nullptr;      // connection and rejection counts; must outlive the server
  std::optional<ClientAuth> clientAuth{};  // none: any client may connect (no certificate asked for)
};

class HttpsServer {
 public:
  // `certificates` must outlive the server. `handler` runs on worker threads (thread-safe; must
  // not throw) with the request body, which is an AdmissionReview's (parseCostBound is charged
  // for it).
  HttpsServer(ServerOptions options, const CertificateStore& certificates,
              std::function<HttpReply(const std::string& body)> handler);
  ~HttpsServer();  // stops
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  // Binds and serves on a background thread; the bound port. Unavailable when it cannot bind;
  // Internal ("cannot set up TLS") when ClientAuth::caPem holds no certificate.
  core::Result<int> start();
  void stop();
  // Answers the reviews under way, closes idle connections, takes no new ones; at most `grace`
  // (http::Server::shutdown).
  void shutdown(std::chrono::milliseconds grace);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace restarter::webhook
