#pragma once
// The transport seam: one HTTP exchange with the apiserver. The Client builds requests (paths,
// query, headers, body, credentials) and interprets answers; a Transport only moves bytes. The
// production implementation is libcurl (makeCurlTransport); unit tests script a fake.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "restarter/core/result.hpp"
#include "restarter/kube/config.hpp"
#include "restarter/kube/errors.hpp"

namespace restarter::kube {

struct Request {
  std::string method = "GET";
  std::string path;  // absolute path with query, e.g. "/api/v1/namespaces/x/configmaps?limit=500"
  std::vector<std::pair<std::string, std::string>> headers;  // besides Authorization
  std::string body;
  std::chrono::milliseconds timeout{0};  // whole exchange; 0: the transport's default
  // Credentials for this request (auth.hpp): the transport adds "Authorization: Bearer" and uses
  // the client certificate for TLS.
  std::string bearerToken;
  std::string clientCertPem;
  std::string clientKeyPem;
};

// The largest non-streamed answer body accepted: 1 GiB. A list page holds up to 500 objects
// (ListOptions::limit), each up to etcd's 1.5 MiB, so a legitimate page can be hundreds of MiB; a
// larger body ends the exchange with an error instead of exhausting memory. Answers are parsed
// within this size and core::kMaxJsonDepth (core/json_parse.hpp).
inline constexpr std::size_t kMaxResponseBodyBytes = std::size_t{1} << 30;

struct Response {
  long status = 0;
  HeaderMap headers;  // lower-case names
  std::string body;   // for streamed 2xx answers: empty (the data went to the handler)
  // Diagnostics of the libcurl transport (fakes leave them 0): the HTTP version used (11 for
  // HTTP/1.1, 2 for HTTP/2) and how many new connections the exchange opened (0: reused).
  int httpVersion = 0;
  long newConnections = 0;
};

// Receives a streamed body chunk by chunk (arbitrary boundaries). Return false to stop.
using ChunkHandler = std::function<bool(std::string_view chunk)>;

class Transport {
 public:
  virtual ~Transport() = default;
  // One exchange. Errors only for transport failures: Unavailable (connect, TLS, reset), Timeout;
  // any HTTP status is a Response. Thread-safe.
  virtual core::Result<Response> send(const Request& request) = 0;
  // Like send, but a 2xx body goes to `onChunk` as it arrives (watch). Returns when the server
  // ends the body, `onChunk` returns false, or `stop` is requested (then an OK Response). Non-2xx
  // bodies are collected into Response::body instead. Thread-safe.
  virtual core::Result<Response> stream(const Request& request, const ChunkHandler& onChunk,
                                        std::stop_token stop) = 0;
};

struct TransportOptions {
  std::chrono::milliseconds connectTimeout{std::chrono::seconds(10)};
  std::chrono::milliseconds requestTimeout{std::chrono::seconds(60)};  // for send(); stream: none
  std::string userAgent = "restarter";
};

// libcurl: a pool of easy handles (each keeps its connection alive for reuse), TCP keep-alive,
// HTTP/2 over TLS when the server offers it (ALPN), HTTP/1.1 otherwise. TLS settings from
// `config`: CA (else the system store), insecure-skip-tls-verify, tls-server-name (SNI and
// verified name; connected to the real host), proxy-url. Fails only on a malformed server URL.
core::Result<std::unique_ptr<Transport>> makeCurlTransport(const ConnectionConfig& config,
                                                           const TransportOptions& options);

}  // namespace restarter::kube
