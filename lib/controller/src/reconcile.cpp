#include "restarter/controller/reconcile.hpp"

#include "restarter/kube/client.hpp"

namespace restarter::controller {

RetryDecision retryPolicy(const core::Error& error) {
  RetryDecision decision;
  if (error.kind == core::ErrorKind::InvalidInput) decision.retry = false;
  if (auto after = kube::retryAfter(error)) decision.atLeast = std::chrono::duration_cast<milliseconds>(*after);
  return decision;
}

}  // namespace restarter::controller
