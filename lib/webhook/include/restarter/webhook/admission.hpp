#pragma once
// restarter::webhook — the admission webhook (docs/architecture.md, "Two halves", "Data flow").
//
//   admission.hpp     this file: one AdmissionReview in, one AdmissionReview out (pure but for
//                     the injected reference fetcher)
//   fetch.hpp         the fresh, parallel, deadline-bounded metadata lookup of references
//   server.hpp        the HTTPS server with a hot-swappable serving certificate
//   certificates.hpp  managed certificates (Secret, caBundle, rotation) and --cert-dir files
//   mwc.hpp           the MutatingWebhookConfiguration install-mwc writes
//
// Never denies (docs/architecture.md, "Fail open"): every well-formed review gets `allowed: true`;
// when the annotations cannot be computed (a reference's state is unknown, the object is odd) the
// answer carries no patch and a warning, and the outcome says why so the server can log and count
// it. Only a body that is not an AdmissionReview with a request uid gets HTTP 400.

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "restarter/core/annotations.hpp"
#include "restarter/core/references.hpp"
#include "restarter/core/reloader.hpp"

namespace restarter::webhook {

// The path the webhook serves (docs/configuration.md "serve-webhook"); install-mwc registers it.
inline constexpr std::string_view kMutatePath = "/mutate";

// The largest AdmissionReview body handled: 8 MiB. A review holds the object and, on UPDATE, the
// old one, each at most etcd's 1.5 MiB request limit as stored, somewhat more as JSON; 8 MiB leaves
// room for both and the request's other fields. A larger body is malformed (HTTP 400). Nesting is
// limited to core::kMaxJsonDepth.
inline constexpr std::size_t kMaxAdmissionReviewBytes = std::size_t{8} << 20;

// The longest reason a "not annotated" warning shows whole (a longer one is cut; the log line has
// it whole): the warning stays within the 120 characters Kubernetes asks of admission warnings.
inline constexpr std::size_t kMaxWarningReason = 42;

// The states of the referenced objects of one namespace, keyed by (kind, name). Every reference
// asked for must be answered (unknown when the lookup failed or ran out of time).
using ReferenceStates = std::map<std::pair<core::RefKind, std::string>, core::ObjectState>;
using ReferenceFetcher =
    std::function<ReferenceStates(const std::string& namespace_, const std::vector<core::Reference>& refs)>;

enum class Outcome {
  Patched,          // allowed with a JSON Patch
  Unchanged,        // a managed workload whose annotations are already right: allowed, no patch
  Recorded,         // UPDATE of a running workload: no template change, but a patch of the baseline
                    // record in its metadata (opted in, or an object created after it): no restart
  Skipped,          // not ours (kind, operation, label): allowed, no patch
  SkippedTooLarge,  // the patch would make the pod template's annotations longer than the
                    // apiserver allows (core/annotation_size.hpp), so it would deny the request:
                    // allowed without a patch, with a warning
  Failed,           // allowed without a patch, with a warning (internal failure)
  Malformed,        // HTTP 400: not an AdmissionReview (or larger or deeper than the limits)
};
const char* outcomeName(Outcome outcome) noexcept;

struct AdmissionResult {
  int httpStatus = 200;
  std::string body;  // the AdmissionReview response (or a short error text for 400)
  Outcome outcome = Outcome::Skipped;
  std::string kind;  // of the admitted object, when known
  std::string namespace_;
  std::string name;  // may be empty on CREATE with generateName
  std::string operation;
  std::string detail;  // Failed / Malformed: why; Patched: the changes made; SkippedTooLarge:
                       // the sizes and the changes not made
};

struct AdmissionOptions {
  // serve-webhook --roll-on-opt-in: a running workload labeled by an UPDATE gets its template
  // annotations in that update (a rollout) instead of a baseline record (core::DesiredOptions).
  bool rollOnOptIn = false;
  // Which workloads are ours and what they track (core::workloadManagement: the enable label; with
  // --reloader-annotations also Reloader's annotations, core/reloader.hpp).
  core::SelectionOptions selection{};
};

// Answers one admission.k8s.io/v1 AdmissionReview. Never throws.
AdmissionResult handleAdmissionReview(std::string_view body, const ReferenceFetcher& fetch,
                                      const AdmissionOptions& options = {});

// An upper bound of the bytes handleAdmissionReview allocates at once for `body`: its parse into
// a JSON tree (nlohmann/json with std::map objects, on 64-bit libstdc++ and glibc malloc) and its
// answer, the body itself not included. Derived from one linear scan (no recursion, no
// allocation): every character may end up in a string of the tree and in the lexer's buffer (3
// bytes each), and every object, array, member, element and string costs its node and allocation
// overhead. The server charges it against its in-flight budget before parsing, so that the bodies
// that cost the most to parse (many tiny values) are refused with 503 instead of growing the
// process. Typical Kubernetes objects come out at 15-25 times their size. A body nested deeper
// than core::kMaxJsonDepth costs 0: the parser refuses it (400) by a scan, before building anything.
std::size_t parseCostBound(std::string_view body) noexcept;

// Metric label values for a result's kind and operation. Both come from the client, and anyone who
// reaches the port can send any string: values other than the kinds we manage and the admission
// operations (or empty) become "other", so no client can create unbounded label series.
std::string kindLabel(const AdmissionResult& result);
std::string operationLabel(const AdmissionResult& result);

}  // namespace restarter::webhook
