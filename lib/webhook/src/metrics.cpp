#include "restarter/webhook/metrics.hpp"

namespace restarter::webhook {

Metrics::Metrics(obs::Registry& registry)
    : admissions(registry.counter("restarter_webhook_admissions_total",
                                  "AdmissionReviews answered, by kind, operation and outcome "
                                  "(patched, unchanged, skipped, skipped-too-large, failed, malformed).",
                                  {"kind", "operation", "outcome"})),
      duration(registry.histogram("restarter_webhook_admission_duration_seconds",
                                  "Time to answer an AdmissionReview, lookups included.", {"outcome"})),
      lookups(registry.counter("restarter_webhook_lookups_total",
                               "Reference lookups (API GETs of ConfigMaps and Secrets) made.")),
      lookupRefusals(registry.counter("restarter_webhook_lookup_refusals_total",
                                      "AdmissionReviews answered without lookups, so without a patch, by the "
                                      "bound that refused them (per-review-cap, rate-limit, namespace-share).",
                                      {"reason"})),
      clientCertificatesRefused(registry.counter(
          "restarter_webhook_client_certificates_refused_total",
          "TLS handshakes refused for their client certificate (untrusted, name); with --client-ca-file.",
          {"reason"})),
      certificateExpiry(registry.gauge("restarter_webhook_certificate_expiry_timestamp_seconds",
                                       "When the serving certificate in use expires (Unix time).")),
      certificateChecks(registry.counter("restarter_webhook_certificate_checks_total",
                                         "Certificate checks, by result (ok, error).", {"result"})),
      rotations(registry.counter("restarter_webhook_certificate_rotations_total",
                                 "Certificate rotation steps taken, by action.", {"action"})) {}

}  // namespace restarter::webhook
