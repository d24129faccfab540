#pragma once
// Certificate rotation decisions for the webhook (docs/architecture.md, "Managed certificates"):
// pure, so that every path through a rotation is unit-tested with plain times. Nothing here reads a
// clock (docs/architecture.md, "Injected time"): each check passes the wall-clock "now", so a machine
// that was suspended or migrated catches up at its next check instead of serving an expired
// certificate (commons-operator's monotonic-timer bug).
//
// The managed state is a CA, optionally a staged "next" CA, and a serving (leaf) certificate signed
// by the current CA. Rolling the CA keeps an overlap: the next CA is first added to the published
// caBundle (old and new trusted), and only after it has been published for `caPropagation` does
// the leaf switch to it. The old CA stays in the bundle until it expires.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "restarter/core/time.hpp"

namespace restarter::core {

// Validity window of one certificate.
struct Validity {
  TimePoint notBefore;
  TimePoint notAfter;
};

struct RotationPolicy {
  // Renew a certificate once this fraction of its lifetime has passed: at 2/3, a third of the
  // lifetime is left to retry (cert-controller renews 90 days ahead of 1 year; 2/3 is the same
  // order and scales to the short lifetimes used in tests).
  double renewAtFraction = 2.0 / 3.0;
  // How long a staged next CA must have been in the published caBundle before a leaf signed by it
  // is served: the apiserver reads webhook configurations through an informer, which sees the
  // update within a second or two; the margin covers a slow apiserver.
  std::chrono::seconds caPropagation{std::chrono::seconds(30)};
};

// What a periodic check finds.
struct RotationState {
  std::optional<Validity> ca;      // absent: no usable CA (missing, unreadable, not a CA)
  std::optional<Validity> nextCa;  // a staged next CA
  // Absent when missing or unusable: not signed by the current CA, key mismatch, wrong names.
  std::optional<Validity> leaf;
  // When the next CA was staged (its notBefore is backdated, so the caller records the time).
  std::optional<TimePoint> nextCaStagedAt;
};

enum class RotationAction {
  Keep,           // nothing to do
  Bootstrap,      // no usable CA: create CA and leaf (a new trust root; unavoidable at first start)
  StageNextCa,    // create a next CA and publish it alongside the current one
  PromoteNextCa,  // the next CA has been published long enough: make it current, issue a leaf
  IssueLeaf,      // issue a new leaf from the current CA
};

const char* rotationActionName(RotationAction action) noexcept;

struct RotationDecision {
  RotationAction action = RotationAction::Keep;
  std::string reason;  // for the log line
};

// The renewal time of a certificate: notBefore + renewAtFraction * lifetime.
TimePoint renewalTime(const Validity& validity, const RotationPolicy& policy);

// The one thing to do now. Called again after each action, until it says Keep (the caller loops,
// bounded). Precedence: bootstrap; promote a propagated next CA (which re-issues the leaf); stage a
// next CA when the CA is due; issue a leaf when it is missing, unusable, expired or due.
RotationDecision decideRotation(const RotationState& state, TimePoint now, const RotationPolicy& policy);

// The longest duration certificates are managed with (lifetimes, propagation, check interval).
// X.509 times end with the year 9999 and TimePoint arithmetic in microseconds with about 292,000
// years; 100 years stays far inside both from any date before 9899, and no certificate needs more.
inline constexpr std::chrono::seconds kMaxCertificateValidity{std::chrono::hours(24 * 36500)};

// The durations managed certificates are rotated with (serve-webhook's flags), and the names the
// caller knows them by, for the messages (e.g. "--validity").
struct RotationTimings {
  std::chrono::seconds validity{0};       // the serving certificate's lifetime
  std::chrono::seconds caValidity{0};     // the CA's lifetime
  std::chrono::seconds caPropagation{0};  // RotationPolicy::caPropagation
  std::chrono::seconds checkInterval{0};  // time between two checks (decideRotation calls)
  double renewAtFraction = RotationPolicy{}.renewAtFraction;
};
struct RotationTimingNames {
  std::string validity = "validity";
  std::string caValidity = "CA validity";
  std::string caPropagation = "CA propagation";
  std::string checkInterval = "check interval";
};

// Every relation between the durations that decideRotation, called once per check interval,
// needs to keep a valid certificate served; one message per relation that does not hold (empty:
// all hold), each naming the durations with their values and what must hold. A check may come up
// to one interval after the moment it is due (another replica, a restart or a failed check leaves
// the checks in no fixed phase with the certificates), so:
//   - each duration is positive and at most kMaxCertificateValidity;
//   - CA validity >= 2 x validity (serve-webhook's rule from the start; the decisions would work
//     without it): a serving certificate's validity is cut to its CA's end, and a CA that lives at
//     least two serving lifetimes keeps most serving certificates at the lifetime asked for;
//   - check interval <= validity - renewal point (a third, at 2/3): a check must fall between the
//     serving certificate's renewal point and its expiry;
//   - CA propagation + 2 x check interval <= CA validity - renewal point: the next CA is staged by
//     the first check after the CA's renewal point and promoted by the first check after it has
//     been published for the propagation time, and that must happen before the current CA
//     expires (otherwise the check finds "the CA has expired" and bootstraps a new trust root the
//     apiserver has never seen: every admission fails open until it propagates).
// The renewal points are renewalTime's, so the limits agree with the decisions to the microsecond.
std::vector<std::string> checkRotationTimings(const RotationTimings& timings,
                                              const RotationTimingNames& names = {});

// For certificates issued once and never rotated (gen-certs): each lifetime positive and at most
// kMaxCertificateValidity, and the serving certificate's no longer than the CA's (it would be cut
// to the CA's end without a word).
std::vector<std::string> checkIssueTimings(std::chrono::seconds validity, std::chrono::seconds caValidity,
                                           const RotationTimingNames& names = {});

}  // namespace restarter::core
