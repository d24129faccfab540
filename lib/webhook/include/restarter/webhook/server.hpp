#pragma once
// The webhook's HTTPS server (cpp-httplib's SSLServer on OpenSSL 3) with a serving certificate that
// can be replaced while it runs.
//
// TLS: 1.2 minimum, 1.3 preferred (the highest version both sides speak wins; nothing above 1.3 is
// disabled); for TLS 1.2 only ECDHE with AEAD ciphers; no compression, no renegotiation.
//
// Hot swap: every handshake asks the CertificateStore for its current certificate (OpenSSL's
// certificate callback), so a new certificate is used from the next handshake on; connections
// already open keep their session and are never dropped, but their next answer carries
// "Connection: close" so that clients reconnect and verify the new certificate soon.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "restarter/core/result.hpp"
#include "restarter/obs/endpoints.hpp"

namespace restarter::webhook {

// The certificate the server presents. Thread-safe: update() from any thread, handshakes read the
// current one without blocking each other (an atomically swapped shared_ptr<const>).
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

struct ServerOptions {
  obs::BindAddress address{"0.0.0.0", 8443};
  std::string path;  // POST route, e.g. /mutate
  // Worker threads. An idle keep-alive connection holds one, so this bounds the connections served
  // at once; the apiserver opens a few per webhook.
  std::size_t threads = 16;
};

class HttpsServer {
 public:
  // `certificates` must outlive the server. `handler` runs on worker threads (thread-safe; must
  // not throw) with the request body.
  HttpsServer(ServerOptions options, const CertificateStore& certificates,
              std::function<HttpReply(const std::string& body)> handler);
  ~HttpsServer();  // stops
  HttpsServer(const HttpsServer&) = delete;
  HttpsServer& operator=(const HttpsServer&) = delete;

  // Binds and serves on a background thread; the bound port. Unavailable when it cannot bind.
  core::Result<int> start();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace restarter::webhook
