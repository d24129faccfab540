#pragma once
// The webhook's Prometheus metrics (served on /metrics). Names and labels are part of the
// user-facing contract (docs/operations.md "Metrics"). The HTTP servers' own metrics (connections,
// deadlines, refusals) are obs::HttpMetrics', prefix restarter_webhook.

#include "restarter/obs/metrics.hpp"

namespace restarter::webhook {

struct Metrics {
  // `registry` must outlive this object.
  explicit Metrics(obs::Registry& registry);

  // restarter_webhook_admissions_total{kind, operation, outcome}: AdmissionReviews answered;
  // outcome = patched | unchanged | skipped | skipped-too-large | failed | malformed.
  obs::Family<obs::Counter>& admissions;
  // restarter_webhook_admission_duration_seconds{outcome}: lookups included.
  obs::Family<obs::Histogram>& duration;
  // restarter_webhook_lookups_total: reference lookups (API GETs) made (fetch.hpp).
  obs::Family<obs::Counter>& lookups;
  // restarter_webhook_lookup_refusals_total{reason}: reviews answered without lookups (so without a
  // patch) because of a bound on lookups: per-review-cap | rate-limit | namespace-share (fetch.hpp
  // LookupLimits).
  obs::Family<obs::Counter>& lookupRefusals;
  // restarter_webhook_client_certificates_refused_total{reason}: handshakes refused for their
  // client certificate (server.hpp ClientAuth): untrusted | name.
  obs::Family<obs::Counter>& clientCertificatesRefused;
  // restarter_webhook_certificate_expiry_timestamp_seconds: of the serving certificate in use.
  obs::Family<obs::Gauge>& certificateExpiry;
  // restarter_webhook_certificate_checks_total{result}: ok | error.
  obs::Family<obs::Counter>& certificateChecks;
  // restarter_webhook_certificate_rotations_total{action}: rotation steps taken.
  obs::Family<obs::Counter>& rotations;
};

}  // namespace restarter::webhook
