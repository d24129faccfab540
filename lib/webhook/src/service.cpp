#include "restarter/webhook/service.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "restarter/base/clock.hpp"
#include "restarter/base/rfc3339.hpp"
#include "restarter/core/time.hpp"
#include "restarter/webhook/admission.hpp"
#include "restarter/webhook/fetch.hpp"
#include "restarter/webhook/metrics.hpp"
#include "restarter/webhook/server.hpp"

namespace restarter::webhook {

namespace {

double secondsSinceEpoch(core::TimePoint t) { return static_cast<double>(t.time_since_epoch().count()) / 1e6; }

// Lookups beyond each review's first run on a pool as large as the HTTPS worker pool (so at most
// 2 x threads lookups at once, never a thread per reference); kMaxQueuedLookups more may wait,
// each only until its review's deadline. A lookup refused when even the queue is full is
// unknown: no patch, a warning, a log line, a "failed" count (docs/architecture.md, "Fail open").
constexpr std::size_t kMaxQueuedLookups = 1024;

}  // namespace

struct Service::Impl {
  Impl(ServiceOptions serviceOptions, kube::Client& apiClient, kube::Client& lookupClient, obs::Logger& logger,
       obs::Registry& registry, obs::HttpMetrics& http, base::Clock& wallClock)
      : options(std::move(serviceOptions)),
        client(apiClient),
        log(logger),
        metrics(registry),
        clock(wallClock),
        fileMode(!options.certDir.empty()),
        lookups(options.threads, kMaxQueuedLookups),
        budget(options.lookupLimits),
        fetcher(makeFetcher(apiGetter(lookupClient, options.contentAware, digestKey), lookups,
                            options.lookupTimeout, &budget, &metrics)),
        server(serverOptions(options, http, metrics), store,
               [this](const std::string& body) { return handle(body); }) {}

  static ServerOptions serverOptions(const ServiceOptions& options, obs::HttpMetrics& http, Metrics& metrics) {
    ServerOptions out{options.address, std::string(kMutatePath), options.threads, webhookLimits(),
                      &http.server("webhook")};
    if (!options.clientCaPem.empty()) {
      out.clientAuth = ClientAuth{
          options.clientCaPem, options.clientAllowedNames,
          [&metrics](const char* reason) { metrics.clientCertificatesRefused.with({reason}).inc(); }};
    }
    return out;
  }

  core::TimePoint wallNow() const {
    return std::chrono::time_point_cast<std::chrono::microseconds>(clock.wallNow());
  }
  std::string secret() const { return options.managed.secretNamespace + "/" + options.managed.secretName; }

  // One certificate check (logged, counted). Returns whether the store holds a certificate.
  bool checkOnce() {
    if (fileMode) {
      auto reloaded = reloadCertificateFiles(options.certDir, store, files);
      if (!reloaded) {
        metrics.certificateChecks.with({"error"}).inc();
        log.warn("cannot load the certificate files; keeping the current certificate",
                 {{"dir", options.certDir}, {"error", reloaded.error().describe()}});
      } else {
        metrics.certificateChecks.with({"ok"}).inc();
        if (*reloaded) {
          auto info = certs::inspect(files.certPem);
          if (info) metrics.certificateExpiry.with().set(secondsSinceEpoch(info->front().notAfter));
          log.info("serving certificate loaded",
                   {{"dir", options.certDir},
                    {"sha256", store.fingerprint()},
                    {"notAfter", info ? base::formatRfc3339(info->front().notAfter) : "?"}});
        }
      }
      return store.ready();
    }
    const ManagedOptions& managed = options.managed;
    auto report = checkManagedCertificates(client, managed, store, wallNow());
    if (!report) {
      metrics.certificateChecks.with({"error"}).inc();
      log.warn("certificate check failed; keeping the current certificate",
               {{"secret", secret()}, {"error", report.error().describe()}});
      return store.ready();
    }
    metrics.certificateChecks.with({"ok"}).inc();
    metrics.certificateExpiry.with().set(secondsSinceEpoch(report->leafNotAfter));
    for (const auto& action : report->actions) {
      metrics.rotations.with({action.substr(0, action.find(':'))}).inc();
      log.info("certificate rotation", {{"secret", secret()}, {"step", action}});
    }
    if (report->secretWritten) {
      log.info("certificates stored", {{"secret", secret()},
                                       {"sha256", report->fingerprint},
                                       {"notAfter", base::formatRfc3339(report->leafNotAfter)}});
    }
    if (report->bundlePublished) {
      log.info("CA bundle published", {{"configuration", managed.configurationName}});
    }
    if (report->configurationApplied) {
      log.info("webhook configuration applied", {{"configuration", managed.configurationName}});
    }
    if (!report->publishProblem.empty()) {
      log.warn("cannot publish the CA bundle",
               {{"configuration", managed.configurationName}, {"error", report->publishProblem}});
    }
    return true;
  }

  // Says when the serving certificate changed and how many handshakes the old one served, so that
  // a rotation can be seen to have been used.
  bool checkCertificates() {
    const std::string before = store.fingerprint();
    const bool ready = checkOnce();
    if (!before.empty() && store.fingerprint() != before) {
      log.info("serving certificate replaced",
               {{"previous", store.previousFingerprint()},
                {"previousHandshakes", std::to_string(store.previousHandshakes())},
                {"sha256", store.fingerprint()}});
    }
    return ready;
  }

  // Reads the digest key (never creates it: the controller does). Until one is read, lookups of
  // the kinds whose content is read are unknown (no patch: fail open). A failure keeps the key
  // held; it is logged while there is none, and once when the key changes.
  void refreshDigestKey() {
    if (options.contentAware == core::ContentAwareness::Off) return;
    auto key = kube::readDigestKey(client, options.digestKey.namespace_, options.digestKey.name);
    const auto held = digestKey.get();
    const std::string secret = options.digestKey.namespace_ + "/" + options.digestKey.name;
    if (!key) {
      if (held == nullptr) {
        log.warn("digest key not available yet: reviews referencing what --content-aware reads are not patched",
                 {{"secret", secret}, {"error", key.error().describe()}});
      }
      return;
    }
    // The previous key counts too: during a rotation (docs/architecture.md, "Keyed digests") the
    // record entries under it are compared under it, and once it is dropped it is not kept here.
    const auto previousId = [](const core::DigestKey& k) {
      return k.previous() ? k.previous()->id() : std::string();
    };
    if (held != nullptr && held->id() == key->id() && previousId(*held) == previousId(*key)) return;
    log.info("digest key loaded",
             {{"secret", secret}, {"keyId", key->id()}, {"previousKeyId", previousId(*key)}});
    digestKey.set(std::move(*key));
  }

  bool awaitingDigestKey() const {
    return options.contentAware != core::ContentAwareness::Off && digestKey.get() == nullptr;
  }

  // The admission handler: runs on the HTTPS workers.
  HttpReply handle(const std::string& body) {
    const auto started = base::systemClock().monotonicNow();
    const AdmissionResult result =
        handleAdmissionReview(body, fetcher, AdmissionOptions{options.rollOnOptIn, options.selection});
    const double seconds = std::chrono::duration<double>(base::systemClock().monotonicNow() - started).count();
    const std::string outcome = outcomeName(result.outcome);
    metrics.admissions.with({kindLabel(result), operationLabel(result), outcome}).inc();
    metrics.duration.with({outcome}).observe(seconds);
    const obs::Fields fields = {
        {"kind", result.kind},    {"namespace", result.namespace_},
        {"name", result.name},    {"operation", result.operation},
        {"outcome", outcome},     {"ms", std::to_string(static_cast<long>(seconds * 1000))},
        {"detail", result.detail}};
    switch (result.outcome) {
      case Outcome::Patched: log.info("admission patched", fields); break;
      case Outcome::Recorded: log.info("admission recorded a baseline", fields); break;
      case Outcome::Failed: log.warn("admission not patched", fields); break;
      case Outcome::SkippedTooLarge:
        log.warn("admission not patched: the annotations would be too large", fields);
        break;
      case Outcome::Malformed: log.warn("malformed admission request", fields); break;
      default: log.debug("admission passed", fields); break;
    }
    return HttpReply{result.httpStatus,
                     result.httpStatus == 200 ? "application/json" : "text/plain; charset=utf-8", result.body};
  }

  const ServiceOptions options;
  kube::Client& client;
  obs::Logger& log;
  Metrics metrics;
  base::Clock& clock;
  const bool fileMode;
  CertificateStore store;           // thread-safe (certificates.hpp); checks write, handshakes read
  FileState files;                  // the check loop's only
  kube::DigestKeyHolder digestKey;  // thread-safe (digest_key.hpp); the check loop writes, lookups read
  LookupPool lookups;
  LookupBudget budget;  // thread-safe (fetch.hpp)
  const ReferenceFetcher fetcher;
  HttpsServer server;  // last: stopped (and destroyed) before what its handler uses
  int port = 0;
  std::atomic<bool> serving{false};
};

Service::Service(ServiceOptions options, kube::Client& client, kube::Client& lookupClient, obs::Logger& logger,
                 obs::Registry& registry, obs::HttpMetrics& http, base::Clock& clock)
    : impl_(std::make_unique<Impl>(std::move(options), client, lookupClient, logger, registry, http, clock)) {}

Service::~Service() = default;

core::Status Service::start(std::stop_token stop) {
  // The first check must give a certificate; retry (bounded only by a signal) until it does.
  while (!impl_->checkCertificates()) {
    if (!impl_->clock.waitFor(std::chrono::seconds(2), stop)) return core::okStatus();
  }
  impl_->refreshDigestKey();
  auto port = impl_->server.start();
  if (!port) {
    impl_->log.error("cannot serve the webhook", {{"error", port.error().describe()}});
    return std::move(port).error();
  }
  impl_->port = *port;
  impl_->serving = true;
  return core::okStatus();
}

bool Service::ready() const { return impl_->serving.load() && impl_->store.ready(); }

core::Status Service::run(std::stop_token stop) {
  Impl& self = *impl_;
  self.log.info("webhook serving", {{"address", self.options.address.host},
                                    {"port", std::to_string(self.port)},
                                    {"path", std::string(kMutatePath)},
                                    {"certificates", self.fileMode ? "files " + self.options.certDir
                                                                   : "secret " + self.secret()}});
  // Periodic wall-clock checks until a signal. While the digest key is missing (a fresh install:
  // the controller makes it as it starts) it is read again after 1 s, doubling up to the interval,
  // so reviews are patched again soon after it exists.
  const auto interval = std::chrono::duration_cast<std::chrono::milliseconds>(self.options.certCheckInterval);
  std::chrono::milliseconds keyRetry{1000};
  while (self.clock.waitFor(self.awaitingDigestKey() ? std::min(keyRetry, interval) : interval, stop)) {
    keyRetry = self.awaitingDigestKey() ? std::min(keyRetry * 2, interval) : std::chrono::milliseconds{1000};
    self.checkCertificates();
    self.refreshDigestKey();
  }
  // Not ready from here on (the runtime's /readyz also says so once a signal came); the reviews
  // under way are answered, each on a connection that then closes.
  self.serving = false;
  self.log.info("stopping", {{"grace", std::to_string(self.options.shutdownGrace.count()) + "ms"}});
  self.server.shutdown(self.options.shutdownGrace);
  self.log.info("stopped");
  return core::okStatus();
}

}  // namespace restarter::webhook
