#pragma once
// The webhook's fresh lookup of referenced ConfigMaps and Secrets (design.md invariant 2): every
// admission reads the referenced objects from the API, metadata only, all at once, and waits at
// most until a deadline shorter than the webhook's timeout. A cache is never consulted: right
// after start, or when a watch lags, a cache would answer "absent" for an object that exists and
// the webhook would write a wrong annotation.
//
//   found     -> ObjectState::present(uid, resourceVersion, ignore label)
//   NotFound  -> ObjectState::absent()
//   any other error, or no answer by the deadline -> ObjectState::unknown(why): no patch.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "restarter/core/annotations.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/webhook/admission.hpp"

namespace restarter::webhook {

// Reads one object's state. Must be thread-safe and must not throw; it should itself give up
// around the deadline (the production one uses a client whose request timeout is the deadline).
using ObjectGetter =
    std::function<core::ObjectState(core::RefKind kind, const std::string& namespace_, const std::string& name)>;

// Looks every reference up in parallel (the first on the calling thread, the others on their own
// threads) and waits until `timeout` has passed at most. A lookup still running then is unknown;
// its thread is left to finish on its own (it owns everything it touches).
ReferenceStates fetchReferences(const ObjectGetter& get, const std::string& namespace_,
                                const std::vector<core::Reference>& refs,
                                std::chrono::milliseconds timeout);

// The production getter: a metadata-only GET through `client` (which must outlive every call,
// including those still running after their deadline).
ObjectGetter apiGetter(kube::Client& client);

// A ReferenceFetcher for handleAdmissionReview over `get` with `timeout`.
ReferenceFetcher makeFetcher(ObjectGetter get, std::chrono::milliseconds timeout);

}  // namespace restarter::webhook
