#include "restarter/kube/auth.hpp"

#include <unistd.h>

#include <mutex>

#include <nlohmann/json.hpp>

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/base64.hpp"
#include "restarter/core/json_parse.hpp"
#include "restarter/core/time.hpp"
#include "restarter/kube/files.hpp"

namespace restarter::kube {
namespace {

using core::ErrorKind;
using namespace std::chrono_literals;

// client-go re-reads a token file at most once a minute (transport/token_source.go).
constexpr auto kTokenFileRefresh = 60s;

// An RFC 3339 time (microseconds, years 0000-9999) as a wall time point of the clock (nanoseconds on
// libstdc++, about years 1678-2262): clamped instead of overflowing.
base::Clock::WallTime toClockTime(core::TimePoint when) {
  using Micros = std::chrono::microseconds;
  const auto max = std::chrono::floor<Micros>(base::Clock::WallTime::max().time_since_epoch());
  const auto min = std::chrono::ceil<Micros>(base::Clock::WallTime::min().time_since_epoch());
  const Micros since = when.time_since_epoch();
  if (since >= max) return base::Clock::WallTime::max();
  if (since <= min) return base::Clock::WallTime::min();
  return base::Clock::WallTime(std::chrono::duration_cast<base::Clock::WallTime::duration>(since));
}

std::string trimNewlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

class StaticAuthenticator final : public Authenticator {
 public:
  explicit StaticAuthenticator(Credential credential) : credential_(std::move(credential)) {}
  core::Result<Credential> credential() override { return credential_; }
  bool invalidate(const Credential&) override { return false; }

 private:
  Credential credential_;
};

// A token file that rotates (projected service-account tokens): re-read every minute and on 401.
class TokenFileAuthenticator final : public Authenticator {
 public:
  TokenFileAuthenticator(std::string path, Credential base, base::Clock& clock)
      : path_(std::move(path)), base_(std::move(base)), clock_(clock) {}

  core::Result<Credential> credential() override {
    std::lock_guard lock(mutex_);
    auto now = clock_.monotonicNow();
    if (token_.empty() || !readAt_ || now - *readAt_ >= kTokenFileRefresh) {
      auto text = readFile(path_);
      std::string token = text ? trimNewlines(*text) : std::string();
      if (token.empty()) {
        if (token_.empty()) {
          return core::makeError(ErrorKind::Unauthorized,
                                 "cannot read a token from tokenFile \"" + path_ + "\"");
        }
        // Keep the last good token (client-go does the same) and try again next time.
      } else {
        token_ = token;
        readAt_ = now;
      }
    }
    Credential credential = base_;
    credential.bearerToken = token_;
    return credential;
  }

  bool invalidate(const Credential& used) override {
    std::lock_guard lock(mutex_);
    if (used.bearerToken == token_) readAt_.reset();
    return true;
  }

 private:
  std::mutex mutex_;
  std::string path_;
  Credential base_;
  base::Clock& clock_;
  std::string token_;
  // When the token was last read; nullopt: read it at the next request. Monotonic (a period), and
  // optional because a monotonic zero is the host's boot, which may be less than a period ago.
  std::optional<base::Clock::MonotonicTime> readAt_;
};

// An exec credential plugin (client.authentication.k8s.io/v1 or v1beta1).
class ExecAuthenticator final : public Authenticator {
 public:
  ExecAuthenticator(const ConnectionConfig& config, Credential base, base::Clock& clock, ProcessRunner& runner)
      : exec_(*config.exec), base_(std::move(base)), clock_(clock), runner_(runner) {
    clusterInfo_ = nlohmann::json{{"server", config.server}};
    if (!config.tlsServerName.empty()) clusterInfo_["tls-server-name"] = config.tlsServerName;
    if (config.insecureSkipTlsVerify) clusterInfo_["insecure-skip-tls-verify"] = true;
    if (!config.caPem.empty()) clusterInfo_["certificate-authority-data"] = core::base64Encode(config.caPem);
    if (!config.proxyUrl.empty()) clusterInfo_["proxy-url"] = config.proxyUrl;
  }

  core::Result<Credential> credential() override {
    std::lock_guard lock(mutex_);
    // A credential without expirationTimestamp is cached until a 401 (client-go).
    if (cached_ && (!expiry_ || clock_.wallNow() < *expiry_)) return *cached_;
    auto fresh = runPlugin();
    if (!fresh) return fresh;
    cached_ = *fresh;
    return fresh;
  }

  bool invalidate(const Credential& used) override {
    std::lock_guard lock(mutex_);
    if (cached_ && cached_->bearerToken == used.bearerToken && cached_->clientCertPem == used.clientCertPem) {
      cached_.reset();
    }
    return true;
  }

 private:
  core::Result<Credential> runPlugin() {
    bool interactive = false;
    switch (exec_.interactiveMode) {
      case ExecConfig::InteractiveMode::Never: interactive = false; break;
      case ExecConfig::InteractiveMode::IfAvailable: interactive = stdinIsTerminal(); break;
      case ExecConfig::InteractiveMode::Always:
        if (!stdinIsTerminal()) {
          return core::makeError(
              ErrorKind::Unauthorized,
              "exec plugin \"" + exec_.command + "\" needs an interactive terminal (interactiveMode: Always)");
        }
        interactive = true;
        break;
    }
    nlohmann::json info = {
        {"apiVersion", exec_.apiVersion}, {"kind", "ExecCredential"}, {"spec", {{"interactive", interactive}}}};
    if (exec_.provideClusterInfo) info["spec"]["cluster"] = clusterInfo_;
    ProcessSpec spec;
    spec.command = exec_.command;
    spec.args = exec_.args;
    spec.env = exec_.env;
    spec.env.emplace_back("KUBERNETES_EXEC_INFO", info.dump());
    spec.inheritStdin = interactive;
    auto where = "exec plugin \"" + exec_.command + "\"";
    auto output = runner_.run(spec);
    if (!output) {
      core::Error error = std::move(output).error();
      if (!exec_.installHint.empty()) error.message += "; " + exec_.installHint;
      return std::move(error).withContext("running " + where);
    }
    if (output->exitCode != 0) {
      std::string err = output->err.substr(0, 1000);
      return core::makeError(ErrorKind::Unauthorized, where + " exited with " +
                                                          std::to_string(output->exitCode) +
                                                          (err.empty() ? "" : ": " + trimNewlines(err)));
    }
    return parse(output->out, where);
  }

  core::Result<Credential> parse(const std::string& out, const std::string& where) {
    auto bad = [&](const std::string& why) {
      return core::makeError(ErrorKind::Unauthorized, where + " returned " + why);
    };
    // An ExecCredential holds a token or a certificate and key: a few KB. 1 MiB is far above that
    // (the process output itself is cut at 16 MiB, process.hpp).
    constexpr std::size_t kMaxExecCredentialBytes = std::size_t{1} << 20;
    const auto parsed = core::parseJson(out, core::JsonLimits{kMaxExecCredentialBytes, core::kMaxJsonDepth});
    if (!parsed) return bad("output that cannot be read as JSON (" + parsed.error().message + ")");
    const nlohmann::json& doc = *parsed;
    if (!doc.is_object()) return bad("output that is not a JSON object");
    auto kind = doc.find("kind");
    if (kind == doc.end() || *kind != "ExecCredential") return bad("no kind ExecCredential");
    auto apiVersion = doc.find("apiVersion");
    if (apiVersion == doc.end() || *apiVersion != exec_.apiVersion)
      return bad("apiVersion other than " + exec_.apiVersion);
    auto status = doc.find("status");
    if (status == doc.end() || !status->is_object()) return bad("no status");
    Credential credential = base_;
    auto str = [&](const char* field) -> std::optional<std::string> {
      auto it = status->find(field);
      if (it == status->end() || it->is_null()) return std::string();
      if (!it->is_string()) return std::nullopt;
      return it->get<std::string>();
    };
    auto token = str("token");
    auto cert = str("clientCertificateData");
    auto key = str("clientKeyData");
    auto expiration = str("expirationTimestamp");
    if (!token || !cert || !key || !expiration) return bad("a status field that is not a string");
    if (cert->empty() != key->empty()) return bad("only one of clientCertificateData and clientKeyData");
    if (token->empty() && cert->empty()) return bad("neither a token nor a client certificate");
    if (!token->empty()) credential.bearerToken = *token;
    if (!cert->empty()) {
      // Plain PEM here, not base64 (ExecCredentialStatus).
      credential.clientCertPem = *cert;
      credential.clientKeyPem = *key;
    }
    expiry_.reset();
    if (!expiration->empty()) {
      std::string problem;
      auto when = base::parseRfc3339(*expiration, &problem);
      if (!when) return bad("an invalid expirationTimestamp: " + problem);
      expiry_ = toClockTime(*when);
    }
    return credential;
  }

  std::mutex mutex_;
  ExecConfig exec_;
  Credential base_;
  base::Clock& clock_;
  ProcessRunner& runner_;
  nlohmann::json clusterInfo_;
  std::optional<Credential> cached_;
  std::optional<base::Clock::WallTime> expiry_;  // the expirationTimestamp: wall time
};

}  // namespace

bool stdinIsTerminal() { return ::isatty(0) == 1; }

std::unique_ptr<Authenticator> makeAuthenticator(const ConnectionConfig& config, base::Clock& clock,
                                                 ProcessRunner& runner) {
  Credential base;
  base.clientCertPem = config.clientCertPem;
  base.clientKeyPem = config.clientKeyPem;
  // client-go's precedence: a static token wins over tokenFile; exec adds to (and its certificate
  // replaces) the static material.
  if (config.exec) return std::make_unique<ExecAuthenticator>(config, base, clock, runner);
  if (!config.token.empty()) {
    base.bearerToken = config.token;
    return std::make_unique<StaticAuthenticator>(base);
  }
  if (!config.tokenFile.empty()) return std::make_unique<TokenFileAuthenticator>(config.tokenFile, base, clock);
  return std::make_unique<StaticAuthenticator>(base);
}

}  // namespace restarter::kube
