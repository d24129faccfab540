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
RotationDecision decideRotation(const RotationState& state, TimePoint now,
                                const RotationPolicy& policy);

}  // namespace restarter::core
