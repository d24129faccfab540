// libcurl implementation of the Transport seam.
//
// Connection reuse: libcurl keeps a connection cache per easy handle, and curl_easy_reset() keeps
// it. Each exchange borrows a handle from a small pool and returns it, so sequential requests (and
// up to kMaxIdleHandles concurrent ones) reuse kept-alive TCP/TLS connections. A watch holds its
// handle (its connection) for as long as it streams.

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>
#include <vector>

#include "restarter/kube/transport.hpp"

namespace restarter::kube {
namespace {

using core::ErrorKind;

constexpr std::size_t kMaxIdleHandles = 16;
// Kernel TCP keep-alive probes: idle 30 s, then every 15 s (client-go's dialer uses 30 s).
constexpr long kKeepIdleSeconds = 30;
constexpr long kKeepIntervalSeconds = 15;

struct EasyDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;

struct SlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

struct UrlDeleter {
  void operator()(CURLU* url) const { curl_url_cleanup(url); }
};
using UrlHandle = std::unique_ptr<CURLU, UrlDeleter>;

struct CurlString {
  char* value = nullptr;
  CurlString() = default;
  CurlString(const CurlString&) = delete;
  CurlString& operator=(const CurlString&) = delete;
  ~CurlString() { curl_free(value); }
};

void globalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// State of one exchange, seen by the callbacks.
struct Exchange {
  Response response;
  const ChunkHandler* onChunk = nullptr;  // streaming only
  std::stop_token stop;
  bool handlerStopped = false;
  CURL* handle = nullptr;
};

size_t onHeader(char* data, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  size_t bytes = size * count;
  std::string_view line(data, bytes);
  if (line.substr(0, 5) == "HTTP/") {
    exchange->response.headers.clear();  // a new response (after 100 Continue)
    return bytes;
  }
  auto colon = line.find(':');
  if (colon == std::string_view::npos) return bytes;
  std::string name = lower(std::string(line.substr(0, colon)));
  std::string_view value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' '))
    value.remove_suffix(1);
  exchange->response.headers[name] = std::string(value);
  return bytes;
}

size_t onWrite(char* data, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<Exchange*>(user);
  size_t bytes = size * count;
  if (exchange->onChunk != nullptr) {
    long status = 0;
    curl_easy_getinfo(exchange->handle, CURLINFO_RESPONSE_CODE, &status);
    if (status >= 200 && status < 300) {
      if (!(*exchange->onChunk)(std::string_view(data, bytes))) {
        exchange->handlerStopped = true;
        return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
      }
      return bytes;
    }
  }
  // Non-streamed bodies are bounded by the request timeout; cap them anyway.
  if (exchange->response.body.size() + bytes > kMaxResponseBodyBytes) return 0;
  exchange->response.body.append(data, bytes);
  return bytes;
}

int onProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* exchange = static_cast<Exchange*>(user);
  return exchange->stop.stop_requested() ? 1 : 0;  // non-zero aborts
}

class CurlTransport final : public Transport {
 public:
  CurlTransport(const ConnectionConfig& config, const TransportOptions& options, std::string urlBase,
                std::string connectTo, std::string hostHeader)
      : config_(config),
        options_(options),
        urlBase_(std::move(urlBase)),
        connectTo_(std::move(connectTo)),
        hostHeader_(std::move(hostHeader)) {}

  core::Result<Response> send(const Request& request) override { return perform(request, nullptr, {}); }

  core::Result<Response> stream(const Request& request, const ChunkHandler& onChunk,
                                std::stop_token stop) override {
    return perform(request, &onChunk, std::move(stop));
  }

 private:
  EasyHandle acquire() {
    {
      std::lock_guard lock(mutex_);
      if (!idle_.empty()) {
        EasyHandle handle = std::move(idle_.back());
        idle_.pop_back();
        return handle;
      }
    }
    return EasyHandle(curl_easy_init());
  }

  void release(EasyHandle handle) {
    std::lock_guard lock(mutex_);
    if (idle_.size() < kMaxIdleHandles) idle_.push_back(std::move(handle));
  }

  core::Result<Response> perform(const Request& request, const ChunkHandler* onChunk, std::stop_token stop) {
    EasyHandle handle = acquire();
    if (!handle) return core::makeError(ErrorKind::Internal, "curl_easy_init failed");
    CURL* h = handle.get();
    curl_easy_reset(h);  // keeps the connection cache

    Exchange exchange;
    exchange.onChunk = onChunk;
    exchange.stop = std::move(stop);
    exchange.handle = h;

    std::string url = urlBase_ + request.path;
    char errbuf[CURL_ERROR_SIZE] = {0};
    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, kKeepIdleSeconds);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, kKeepIntervalSeconds);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connectTimeout.count()));
    auto timeout = request.timeout.count() > 0 ? request.timeout
                   : onChunk != nullptr        ? std::chrono::milliseconds(0)
                                               : options_.requestTimeout;
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
    curl_easy_setopt(h, CURLOPT_USERAGENT, options_.userAgent.c_str());
    // gzip when offered, as kubectl, except for streams: the apiserver compresses a streaming
    // list (sendInitialEvents) as a series of gzip members, and libcurl's decoder stops after the
    // first with CURLE_WRITE_ERROR (seen with kube-apiserver 1.37 and curl 7.88).
    if (onChunk == nullptr) curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");

    // TLS. Blobs are copied by libcurl (CURL_BLOB_COPY).
    if (config_.insecureSkipTlsVerify) {
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (!config_.caPem.empty()) {
      curl_blob blob{const_cast<char*>(config_.caPem.data()), config_.caPem.size(), CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    }
    if (!request.clientCertPem.empty()) {
      curl_blob cert{const_cast<char*>(request.clientCertPem.data()), request.clientCertPem.size(),
                     CURL_BLOB_COPY};
      curl_blob key{const_cast<char*>(request.clientKeyPem.data()), request.clientKeyPem.size(),
                    CURL_BLOB_COPY};
      curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
      curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
      curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
      curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }
    Slist connectTo;
    if (!connectTo_.empty()) {
      connectTo.reset(curl_slist_append(nullptr, connectTo_.c_str()));
      curl_easy_setopt(h, CURLOPT_CONNECT_TO, connectTo.get());
    }
    if (!config_.proxyUrl.empty()) curl_easy_setopt(h, CURLOPT_PROXY, config_.proxyUrl.c_str());

    // Headers.
    Slist headers;
    auto add = [&](const std::string& line) {
      curl_slist* next = curl_slist_append(headers.get(), line.c_str());
      if (next != nullptr) {
        (void)headers.release();
        headers.reset(next);
      }
    };
    add("Expect:");  // no 100-continue round trip
    if (!hostHeader_.empty()) add("Host: " + hostHeader_);
    if (!request.bearerToken.empty()) add("Authorization: Bearer " + request.bearerToken);
    for (const auto& [name, value] : request.headers) add(name + ": " + value);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());

    if (request.method == "GET") {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
      if (!request.body.empty() || request.method != "DELETE") {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      }
    }

    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &exchange);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, onWrite);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &exchange);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, onProgress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &exchange);

    CURLcode rc = curl_easy_perform(h);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &exchange.response.status);
    long version = 0;
    curl_easy_getinfo(h, CURLINFO_HTTP_VERSION, &version);
    exchange.response.httpVersion = version == CURL_HTTP_VERSION_2_0   ? 2
                                    : version == CURL_HTTP_VERSION_1_1 ? 11
                                    : version == CURL_HTTP_VERSION_1_0 ? 10
                                                                       : 0;
    curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &exchange.response.newConnections);
    // Options point into this frame: clear them before the handle goes back to the pool.
    curl_easy_reset(h);
    release(std::move(handle));

    if (rc == CURLE_OK) return std::move(exchange.response);
    if ((rc == CURLE_WRITE_ERROR && exchange.handlerStopped) ||
        (rc == CURLE_ABORTED_BY_CALLBACK && exchange.stop.stop_requested())) {
      return std::move(exchange.response);  // the caller ended it
    }
    std::string detail = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc);
    std::string target = config_.server;
    switch (rc) {
      case CURLE_OPERATION_TIMEDOUT:
        return core::makeError(ErrorKind::Timeout,
                               request.method + " " + target + request.path + ": timed out: " + detail);
      case CURLE_URL_MALFORMAT:
      case CURLE_UNSUPPORTED_PROTOCOL:
        return core::makeError(ErrorKind::InvalidInput, "bad URL " + url + ": " + detail);
      default:
        return core::makeError(ErrorKind::Unavailable,
                               request.method + " " + target + request.path + ": " + detail);
    }
  }

  ConnectionConfig config_;
  TransportOptions options_;
  std::string urlBase_;
  std::string connectTo_;
  std::string hostHeader_;
  std::mutex mutex_;
  std::vector<EasyHandle> idle_;
};

core::Result<std::string> urlPart(CURLU* url, CURLUPart part, const std::string& server) {
  CurlString value;
  CURLUcode rc = curl_url_get(url, part, &value.value, 0);
  if (rc == CURLUE_NO_PORT) return std::string();
  if (rc != CURLUE_OK || value.value == nullptr)
    return core::makeError(ErrorKind::InvalidInput, "server URL \"" + server + "\" is malformed");
  return std::string(value.value);
}

}  // namespace

core::Result<std::unique_ptr<Transport>> makeCurlTransport(const ConnectionConfig& config,
                                                           const TransportOptions& options) {
  globalInit();
  UrlHandle url(curl_url());
  if (!url || curl_url_set(url.get(), CURLUPART_URL, config.server.c_str(), 0) != CURLUE_OK) {
    return core::makeError(ErrorKind::InvalidInput, "server URL \"" + config.server + "\" is malformed");
  }
  auto scheme = urlPart(url.get(), CURLUPART_SCHEME, config.server);
  auto host = urlPart(url.get(), CURLUPART_HOST, config.server);
  auto port = urlPart(url.get(), CURLUPART_PORT, config.server);
  auto path = urlPart(url.get(), CURLUPART_PATH, config.server);
  if (!scheme) return std::move(scheme).error();
  if (!host) return std::move(host).error();
  if (!port) return std::move(port).error();
  if (!path) return std::move(path).error();
  std::string portText = port->empty() ? (*scheme == "https" ? "443" : "80") : *port;
  std::string prefix = *path == "/" ? "" : *path;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();

  std::string urlBase;
  std::string connectTo;
  std::string hostHeader;
  if (!config.tlsServerName.empty() && *scheme == "https") {
    // tls-server-name: speak TLS as if to that name (SNI and certificate check) while connecting
    // to the real address, and keep the real Host header, as client-go does.
    urlBase = "https://" + config.tlsServerName + ":" + portText + prefix;
    std::string rawHost = *host;
    if (!rawHost.empty() && rawHost.front() == '[') rawHost = rawHost.substr(1, rawHost.size() - 2);
    connectTo = config.tlsServerName + ":" + portText + ":" +
                (rawHost.find(':') != std::string::npos ? "[" + rawHost + "]" : rawHost) + ":" + portText;
    hostHeader = *host + ":" + portText;
  } else {
    urlBase = *scheme + "://" + *host + ":" + portText + prefix;
  }
  return std::unique_ptr<Transport>(
      std::make_unique<CurlTransport>(config, options, urlBase, connectTo, hostHeader));
}

}  // namespace restarter::kube
