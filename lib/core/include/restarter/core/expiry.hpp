#pragma once
// Pod expiry: a pod annotated `restarter.stackable.tech/expires-at.<tag>: <RFC 3339 time>` is
// evicted at the earliest such time (secret-operator writes these for short-lived credentials).
// Pure: the caller passes "now"; nothing here reads a clock.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "restarter/core/annotations.hpp"
#include "restarter/core/time.hpp"

namespace restarter::core {

struct ExpiryProblem {
  std::string key;
  std::string value;
  std::string reason;
};

struct ExpiryDecision {
  enum class Action {
    None,      // no valid expires-at annotation: nothing to do
    EvictNow,  // the earliest time has passed (or is exactly now)
    CheckAt,   // come back at `expiresAt`
  };
  Action action = Action::None;
  std::optional<TimePoint> expiresAt;   // the earliest valid time
  std::string key;                      // the annotation that holds it
  std::vector<ExpiryProblem> problems;  // unparseable values, skipped (not fatal)
};

// Decides from a pod's annotations (all of them; only expires-at ones are read) at time `now`.
ExpiryDecision decideExpiry(const AnnotationMap& podAnnotations, TimePoint now);

}  // namespace restarter::core
