#pragma once
// Credentials per request: a bearer token and/or a client certificate, from a static value, a token
// file (re-read every minute, client-go's period, and after a 401, so a rotated service-account
// token is picked up), or an exec credential plugin (cached until its expirationTimestamp, run again
// after a 401). Thread-safe: one Authenticator serves every request of a Client.

#include <memory>
#include <string>

#include "restarter/base/clock.hpp"
#include "restarter/core/result.hpp"
#include "restarter/kube/config.hpp"
#include "restarter/kube/process.hpp"

namespace restarter::kube {

struct Credential {
  std::string bearerToken;
  std::string clientCertPem;
  std::string clientKeyPem;
};

class Authenticator {
 public:
  virtual ~Authenticator() = default;
  virtual core::Result<Credential> credential() = 0;
  // The server answered 401 to a request made with `used`: drop cached credentials (unless they
  // already changed since) so that the next credential() fetches fresh ones. Returns true when a
  // retry may help (something can be refetched).
  virtual bool invalidate(const Credential& used) = 0;
};

// Picks the credential source from `config`. `clock` and `runner` must outlive the result.
// With an exec stanza and provideClusterInfo, KUBERNETES_EXEC_INFO carries `spec.cluster` (server,
// tls-server-name, insecure-skip-tls-verify, certificate-authority-data, proxy-url) from `config`.
std::unique_ptr<Authenticator> makeAuthenticator(const ConnectionConfig& config, base::Clock& clock,
                                                 ProcessRunner& runner);

// Whether the process has an interactive terminal on stdin (for interactiveMode).
bool stdinIsTerminal();

}  // namespace restarter::kube
