#include "restarter/webhook/metrics.hpp"

namespace restarter::webhook {

Metrics::Metrics(obs::Registry& registry)
    : admissions(registry.counter("restarter_webhook_admissions_total",
                                  "AdmissionReviews answered, by kind, operation and outcome "
                                  "(patched, unchanged, skipped, skipped-too-large, failed, malformed).",
                                  {"kind", "operation", "outcome"})),
      duration(registry.histogram("restarter_webhook_admission_duration_seconds",
                                  "Time to answer an AdmissionReview, lookups included.", {"outcome"})),
      certificateExpiry(registry.gauge("restarter_webhook_certificate_expiry_timestamp_seconds",
                                       "When the serving certificate in use expires (Unix time).")),
      certificateChecks(registry.counter("restarter_webhook_certificate_checks_total",
                                         "Certificate checks, by result (ok, error).", {"result"})),
      rotations(registry.counter("restarter_webhook_certificate_rotations_total",
                                 "Certificate rotation steps taken, by action.", {"action"})) {}

}  // namespace restarter::webhook
