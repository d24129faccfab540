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
  const auto offset = std::chrono::microseconds(
      static_cast<std::chrono::microseconds::rep>(std::floor(static_cast<double>(lifetime.count()) * fraction)));
  return validity.notBefore + offset;
}

RotationDecision decideRotation(const RotationState& state, TimePoint now,
                                const RotationPolicy& policy) {
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

}  // namespace restarter::core
