#include "restarter/core/expiry.hpp"

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/constants.hpp"

namespace restarter::core {

ExpiryDecision decideExpiry(const AnnotationMap& podAnnotations, TimePoint now) {
  ExpiryDecision decision;
  for (const auto& [key, value] : podAnnotations) {
    if (key.rfind(kExpiresAtAnnotationPrefix, 0) != 0) continue;
    std::string problem;
    auto time = base::parseRfc3339(value, &problem);
    if (!time) {
      decision.problems.push_back(ExpiryProblem{key, value, problem});
      continue;
    }
    // Annotations are visited in key order, so among equal times the first key wins: stable.
    if (!decision.expiresAt || *time < *decision.expiresAt) {
      decision.expiresAt = *time;
      decision.key = key;
    }
  }
  if (decision.expiresAt) {
    decision.action =
        *decision.expiresAt <= now ? ExpiryDecision::Action::EvictNow : ExpiryDecision::Action::CheckAt;
  }
  return decision;
}

}  // namespace restarter::core
