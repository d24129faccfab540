#include "restarter/core/rotation.hpp"

#include <algorithm>
#include <cmath>

namespace restarter::core {

const char* rotationActionName(RotationAction action) noexcept {
  switch (action) {
    case RotationAction::Keep: return "keep";
    case RotationAction::Bootstrap: return "bootstrap";
    case RotationAction::StageNextCa: return "stage-next-ca";
    case RotationAction::PromoteNextCa: return "promote-next-ca";
    case RotationAction::IssueLeaf: return "issue-leaf";
  }
  return "unknown";
}

TimePoint renewalTime(const Validity& validity, const RotationPolicy& policy) {
  const auto lifetime = validity.notAfter - validity.notBefore;
  const auto fraction = std::clamp(policy.renewAtFraction, 0.0, 1.0);
  const auto offset = std::chrono::microseconds(static_cast<std::chrono::microseconds::rep>(
      std::floor(static_cast<double>(lifetime.count()) * fraction)));
  return validity.notBefore + offset;
}

RotationDecision decideRotation(const RotationState& state, TimePoint now, const RotationPolicy& policy) {
  if (!state.ca) return {RotationAction::Bootstrap, "no usable CA"};
  if (now >= state.ca->notAfter) return {RotationAction::Bootstrap, "the CA has expired"};
  if (state.nextCa) {
    const bool nextUsable = now < state.nextCa->notAfter;
    const TimePoint stagedAt = state.nextCaStagedAt.value_or(state.nextCa->notBefore);
    if (nextUsable && now >= stagedAt + policy.caPropagation) {
      return {RotationAction::PromoteNextCa, "the next CA has been published for the propagation time"};
    }
    if (!nextUsable) return {RotationAction::StageNextCa, "the staged next CA has expired"};
  } else if (now >= renewalTime(*state.ca, policy)) {
    return {RotationAction::StageNextCa, "the CA is due for renewal"};
  }
  if (!state.leaf) return {RotationAction::IssueLeaf, "no usable serving certificate"};
  if (now >= state.leaf->notAfter) return {RotationAction::IssueLeaf, "the serving certificate has expired"};
  if (now >= renewalTime(*state.leaf, policy)) {
    return {RotationAction::IssueLeaf, "the serving certificate is due for renewal"};
  }
  return {RotationAction::Keep, "certificates are current"};
}

namespace {

// "<name> <value>", e.g. "--validity 24h".
std::string named(const std::string& name, std::chrono::seconds value) {
  return name + " " + formatDuration(value);
}

// What is left of a lifetime after its renewal point (renewalTime's arithmetic).
std::chrono::microseconds renewalWindow(std::chrono::seconds lifetime, double renewAtFraction) {
  RotationPolicy policy;
  policy.renewAtFraction = renewAtFraction;
  const Validity validity{TimePoint{}, TimePoint{} + lifetime};
  return validity.notAfter - renewalTime(validity, policy);
}

// Range of one duration; true when it is usable.
bool checkRange(std::chrono::seconds duration, const std::string& name, std::vector<std::string>& problems) {
  if (duration <= std::chrono::seconds(0)) {
    problems.push_back(name + " must be positive");
    return false;
  }
  if (duration > kMaxCertificateValidity) {
    problems.push_back(named(name, duration) + " is more than " + formatDuration(kMaxCertificateValidity) +
                       " (100 years), the longest duration certificates are managed with");
    return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> checkRotationTimings(const RotationTimings& t, const RotationTimingNames& n) {
  std::vector<std::string> problems;
  bool usable = checkRange(t.validity, n.validity, problems);
  usable = checkRange(t.caValidity, n.caValidity, problems) && usable;
  usable = checkRange(t.caPropagation, n.caPropagation, problems) && usable;
  usable = checkRange(t.checkInterval, n.checkInterval, problems) && usable;
  if (!usable) return problems;
  // Each is at most kMaxCertificateValidity: the sums and doubles below cannot overflow.
  if (t.caValidity < 2 * t.validity) {
    problems.push_back(named(n.caValidity, t.caValidity) + " is less than twice " +
                       named(n.validity, t.validity) +
                       ": serving certificates would be cut short to their CA's end (need " + n.caValidity +
                       " >= 2 x " + n.validity + ")");
  }
  if (t.checkInterval > renewalWindow(t.validity, t.renewAtFraction)) {
    problems.push_back(named(n.checkInterval, t.checkInterval) + " is more than a third of " +
                       named(n.validity, t.validity) +
                       ": the serving certificate is renewed at 2/3 of its lifetime by the next check, which "
                       "could come after it expired (need " +
                       n.checkInterval + " <= " + n.validity + " / 3)");
  }
  if (t.caPropagation + 2 * t.checkInterval > renewalWindow(t.caValidity, t.renewAtFraction)) {
    problems.push_back(named(n.caPropagation, t.caPropagation) + " + 2 x " +
                       named(n.checkInterval, t.checkInterval) + " is more than a third of " +
                       named(n.caValidity, t.caValidity) +
                       ": a next CA is staged at 2/3 of the CA's lifetime and served " + n.caPropagation +
                       " later, each step up to one check late, so the CA would expire before it is replaced "
                       "(need " +
                       n.caPropagation + " + 2 x " + n.checkInterval + " <= " + n.caValidity + " / 3)");
  }
  return problems;
}

std::vector<std::string> checkIssueTimings(std::chrono::seconds validity, std::chrono::seconds caValidity,
                                           const RotationTimingNames& n) {
  std::vector<std::string> problems;
  bool usable = checkRange(validity, n.validity, problems);
  usable = checkRange(caValidity, n.caValidity, problems) && usable;
  if (usable && validity > caValidity) {
    problems.push_back(named(n.validity, validity) + " is more than " + named(n.caValidity, caValidity) +
                       ": a certificate cannot outlive the CA that signed it (need " + n.validity +
                       " <= " + n.caValidity + ")");
  }
  return problems;
}

}  // namespace restarter::core
