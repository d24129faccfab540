#pragma once
// The webhook as a running service (serve-webhook), as controller::Controller is the controller:
// the certificates (managed in a Secret, or files from a directory), their periodic checks with
// logs and metrics, the lookup pool, and the HTTPS server answering AdmissionReviews, each answer
// logged and counted. cli maps flags to ServiceOptions and hands start/ready/run to the shared
// runtime (lib/runtime), which owns signals and the health and metrics endpoints.

#include <atomic>
#include <chrono>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "restarter/base/clock.hpp"
#include "restarter/core/content.hpp"
#include "restarter/core/reloader.hpp"
#include "restarter/core/result.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/digest_key.hpp"
#include "restarter/obs/endpoints.hpp"
#include "restarter/obs/http_metrics.hpp"
#include "restarter/obs/log.hpp"
#include "restarter/obs/metrics.hpp"
#include "restarter/webhook/certificates.hpp"
#include "restarter/webhook/fetch.hpp"
#include "restarter/webhook/server.hpp"

namespace restarter::webhook {

// What serve-webhook's flags set (cli/serve_webhook.hpp binds them to these fields, so each default
// is written here and nowhere else) and what the program derives from them (managed, clientCaPem).
struct ServiceOptions {
  obs::BindAddress address{"0.0.0.0", 8443};
  std::string certDir;     // non-empty: serve tls.crt and tls.key from it, reloaded when they change
  ManagedOptions managed;  // without certDir: the managed certificates (and configuration)
  std::chrono::seconds certCheckInterval{10};
  std::chrono::milliseconds lookupTimeout{std::chrono::seconds(3)};
  std::size_t threads = kDefaultThreads;  // HTTPS workers, and as many lookup threads
  // What the lookups of any one review, and of all reviews per second, may cost (fetch.hpp).
  LookupLimits lookupLimits{};
  // --client-ca-file (its content) and --client-allowed-names: only clients with such a
  // certificate may connect (server.hpp ClientAuth); empty caPem: any client.
  std::string clientCaPem{};
  std::vector<std::string> clientAllowedNames{};
  // The kinds whose content the lookups read (content-aware restarts; fetch.hpp apiGetter).
  core::ContentAwareness contentAware = core::ContentAwareness::All;
  // The Secret holding the key of content digests (kube/digest_key.hpp), which the webhook only
  // reads: at start and at every certificate check, so a re-created key is picked up
  // (docs/architecture.md, "Keyed digests").
  kube::DigestKeySecret digestKey{};
  // Which workloads are ours and what they track (core/reloader.hpp; --reloader-annotations).
  core::SelectionOptions selection{};
  // --roll-on-opt-in (AdmissionOptions).
  bool rollOnOptIn = false;
  // On stop, how long reviews under way may take to be answered before the server closes what is
  // left (docs/architecture.md, "Shutdown"). The apiserver gives up on a review after the
  // configuration's timeoutSeconds (5 s in ours, 30 s at most), and the Deployments allow 30 s
  // between SIGTERM and SIGKILL, 5 s of which the preStop pause takes.
  std::chrono::milliseconds shutdownGrace{std::chrono::seconds(10)};
};

class Service {
 public:
  // Every reference must outlive the service. `client` reads and writes the certificates' Secret
  // and the configuration; `lookupClient` reads the referenced ConfigMaps and Secrets (its
  // requests should end at lookupTimeout). The HTTPS server counts its connections in `http` as
  // server "webhook". Starts the lookup threads.
  Service(ServiceOptions options, kube::Client& client, kube::Client& lookupClient, obs::Logger& logger,
          obs::Registry& registry, obs::HttpMetrics& http, base::Clock& clock);
  ~Service();
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // Checks the certificates until there is one (every 2 s; ends early, OK, on stop), then binds
  // the HTTPS server. Unavailable when it cannot bind (logged).
  core::Status start(std::stop_token stop);
  // Serving, with a certificate (for /readyz).
  bool ready() const;
  // Logs "webhook serving", checks the certificates every certCheckInterval (wall clock) until
  // stop, then shuts the HTTPS server down gracefully (reviews under way answered, at most
  // shutdownGrace). Returns OK.
  core::Status run(std::stop_token stop);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace restarter::webhook
