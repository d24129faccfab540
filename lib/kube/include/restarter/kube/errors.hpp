#pragma once
// Typed API errors: how an HTTP answer of the apiserver (status code, Retry-After header and the
// `metav1.Status` body) becomes a core::Error. One place interprets errors; callers pick a policy
// from `Error::kind` (retry, relist, report, give up).
//
//   HTTP / Status.reason                     ErrorKind
//   400, 422 (BadRequest, Invalid)           InvalidInput
//   401                                      Unauthorized
//   403                                      Forbidden
//   404                                      NotFound
//   409 + reason AlreadyExists               AlreadyExists
//   409 otherwise (Conflict)                 Conflict
//   410 (Gone, Expired)                      Gone   (watch/list continue: relist)
//   429                                      TooManyRequests (Retry-After kept, see below)
//   408, 504, reason Timeout/ServerTimeout   Timeout
//   other 5xx                                Unavailable
//   anything else                            Internal
//
// core::Error has no slot for a retry delay, so the delay the server asked for (Retry-After header,
// or `details.retryAfterSeconds`) travels as one context line "retry-after-seconds=<n>";
// `retryAfter()` reads it back. The message is "<reason>: <Status.message> (HTTP <code>)".

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "restarter/core/result.hpp"

namespace restarter::kube {

inline constexpr std::string_view kRetryAfterContextPrefix = "retry-after-seconds=";

// Headers are keyed by lower-case name.
using HeaderMap = std::map<std::string, std::string>;

// The error for a non-2xx answer. `body` may be anything (a Status, HTML from a proxy, nothing):
// it never throws and never crashes.
core::Error errorFromResponse(long httpStatus, const HeaderMap& headers, std::string_view body);

// The error for a watch stream's ERROR event (its object is a metav1.Status).
core::Error errorFromStatusObject(std::string_view statusJson);

// The delay the server asked for, if it asked.
std::optional<std::chrono::seconds> retryAfter(const core::Error& error);

}  // namespace restarter::kube
