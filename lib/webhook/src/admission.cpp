#include "restarter/webhook/admission.hpp"

#include <exception>

#include <nlohmann/json.hpp>

#include "restarter/certs/certs.hpp"
#include "restarter/core/annotation_size.hpp"
#include "restarter/core/base64.hpp"
#include "restarter/core/baseline.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/json_parse.hpp"
#include "restarter/core/json_patch.hpp"
#include "restarter/core/reloader.hpp"
#include "restarter/core/rollout_source.hpp"
#include "restarter/core/text.hpp"
#include "restarter/core/workload_kinds.hpp"
#include "restarter/core/write_plan.hpp"

namespace restarter::webhook {

using nlohmann::json;

const char* outcomeName(Outcome outcome) noexcept {
  switch (outcome) {
    case Outcome::Patched: return "patched";
    case Outcome::Unchanged: return "unchanged";
    case Outcome::Recorded: return "recorded";
    case Outcome::Skipped: return "skipped";
    case Outcome::SkippedTooLarge: return "skipped-too-large";
    case Outcome::Failed: return "failed";
    case Outcome::Malformed: return "malformed";
  }
  return "unknown";
}

namespace {

// What handle() reads of a review, by path; every other member is dropped while parsing, so that
// an UPDATE's oldObject, the userInfo, the object's status, managedFields and all of its spec but
// the pod template cost no memory. Whatever handle() or the lib/core functions it hands the
// object to start reading must be kept here.
//   apiVersion, kind, request.{uid, kind, operation, namespace, name}
//   request.object.metadata.{name, namespace, labels, annotations} (annotations: the ignore rules)
//   request.object.spec.template (references and the current template annotations)
//   request.object.spec.workloadRef (an Argo Rollout's other template source, rollout_source.hpp)
bool reviewMemberWanted(const std::vector<std::string>& path) {
  const std::string& key = path.back();
  switch (path.size()) {
    case 1: return key == "apiVersion" || key == "kind" || key == "request";
    case 2:
      return path[0] != "request" || key == "uid" || key == "kind" || key == "operation" ||
             key == "namespace" || key == "name" || key == "object";
    case 3: return path[0] != "request" || path[1] != "object" || key == "metadata" || key == "spec";
    case 4:
      if (path[0] != "request" || path[1] != "object") return true;
      if (path[2] == "metadata") {
        return key == "name" || key == "namespace" || key == "labels" || key == "annotations";
      }
      // path[2] is "spec", the only other member kept at depth 3.
      return key == "template" || key == "workloadRef";
    default: return true;
  }
}

// The review parsed within the limits, with only what handle() reads (reviewMemberWanted).
core::Result<json> parseReview(std::string_view body) {
  return core::parseJson(body, core::JsonLimits{kMaxAdmissionReviewBytes, core::kMaxJsonDepth},
                         reviewMemberWanted);
}

// The controller's predicate (core/reloader.hpp): the enable label, or with
// --reloader-annotations Reloader's annotations.
bool enabled(const json& object, const core::SelectionOptions& selection) {
  return core::workloadManagement(object, selection).by != core::ManagedBy::None;
}

// The kinds we manage (core::kManagedKinds, the same set the controller reconciles), by group,
// version and kind. A field of another type than string means "not ours" (json::value() would
// throw on it).
bool managedKind(const json& kind) {
  if (!kind.is_object()) return false;
  const core::ManagedKind* row = core::findManagedKind(core::stringAt(kind, {"kind"}));
  return row != nullptr && core::stringAt(kind, {"group"}) == row->group &&
         core::stringAt(kind, {"version"}) == row->version;
}

json reviewResponse(const std::string& uid) {
  return json{{"apiVersion", "admission.k8s.io/v1"},
              {"kind", "AdmissionReview"},
              {"response", {{"uid", uid}, {"allowed", true}}}};
}

AdmissionResult answer(AdmissionResult result, const json& review) {
  result.body = review.dump();
  return result;
}

AdmissionResult malformed(AdmissionResult result, std::string problem) {
  result.httpStatus = 400;
  result.outcome = Outcome::Malformed;
  result.detail = std::move(problem);
  result.body = result.detail + "\n";
  return result;
}

// `reason`: why, for the warning, when shorter than `problem` (which the log line shows whole).
AdmissionResult failed(AdmissionResult result, json review, const std::string& problem,
                       const std::string& reason = {}) {
  result.outcome = Outcome::Failed;
  result.detail = problem;
  // A warning is shown to the client (kubectl prints it). Kubernetes asks admission webhooks to
  // keep each within 120 characters, so: what happened, why (cut when longer; the whole reason is
  // in the log line), and what it costs: 34 + at most kMaxWarningReason + 44 characters. The
  // reasons the webhook itself gives (a lookup bound, fetch.hpp) fit whole.
  review["response"]["warnings"] =
      json::array({"restarter webhook: not annotated (" +
                   core::truncateUtf8(reason.empty() ? problem : reason, kMaxWarningReason) +
                   "); the controller will, restarting pods once"});
  return answer(std::move(result), review);
}

// Why a reference's state is unknown, when that is why `problem` (desiredAnnotations' error) is:
// the state's own problem, without the reference that the error names first, so the warning
// shows the reason rather than the start of the reference's name. Empty otherwise.
std::string unknownReason(const ReferenceStates& states, const std::string& problem) {
  for (const auto& [ref, state] : states) {
    if (state.presence == core::Presence::Unknown && !state.problem.empty() &&
        problem.find(state.problem) != std::string::npos) {
      return state.problem;
    }
  }
  return {};
}

// The write would make the pod template's or the workload's own metadata annotations longer than
// the apiserver accepts (core/write_plan.hpp), so the apiserver would refuse the whole request:
// the webhook would deny what it must only annotate. Allowed without a patch instead; the
// controller comes to the same decision and records it as an Event. The warning says why and what
// it costs in at most 120 characters (the sizes have at most 7 digits: the body is at most 8 MiB).
AdmissionResult tooLarge(AdmissionResult result, json review, const core::WritePlan& plan) {
  result.outcome = Outcome::SkippedTooLarge;
  result.detail = plan.refusal() + "; not made: ";
  if (plan.kind == core::WriteKind::Template) {
    for (std::size_t i = 0; i < plan.changes.size(); ++i) {
      result.detail += (i == 0 ? "" : "; ") + plan.changes[i].describe();
    }
  } else {
    result.detail += "baseline " + (plan.records.front().value.empty() ? "none" : plan.records.front().value);
  }
  const bool templateOver = !plan.templateSize.fits();
  const core::AnnotationsSize& size = templateOver ? plan.templateSize : plan.metadataSize;
  review["response"]["warnings"] = json::array(
      {std::string("restarter webhook: annotations not set (") + (templateOver ? "template" : "metadata") +
       " annotations " + std::to_string(size.after) + " > " + std::to_string(core::kMaxAnnotationsBytes) +
       " bytes); config changes won't restart pods"});
  return answer(std::move(result), review);
}

// Patch operations that make the object's metadata annotations hold `records`, appended to `patch`.
core::Status appendRecords(json& patch, const json& object,
                           const std::vector<core::MetadataAnnotation>& records) {
  auto record = core::metadataAnnotationsPatch(object, records);
  if (!record) return std::move(record).error();
  for (json& op : *record) patch.push_back(std::move(op));
  return core::okStatus();
}

// No template change: allowed, and when the baseline record changes (a running workload opted in,
// an object created after its workload), the baseline and its content record are written into the
// object's metadata, which restarts nothing.
AdmissionResult recordOnly(AdmissionResult result, json review, const json& object,
                           const core::DesiredAnnotations& desired, const core::WritePlan& plan) {
  result.outcome = Outcome::Unchanged;
  json patch = json::array();
  if (auto s = appendRecords(patch, object, plan.records); !s)
    return failed(std::move(result), review, s.error().describe());
  if (patch.empty()) return answer(std::move(result), review);
  review["response"]["patchType"] = "JSONPatch";
  review["response"]["patch"] = core::base64Encode(patch.dump());
  result.outcome = Outcome::Recorded;
  result.detail = std::string(desired.optingIn ? "opted in: " : "") + "baseline " +
                  (desired.baseline.empty() ? "removed" : desired.baseline) + ", no restart";
  return answer(std::move(result), review);
}

AdmissionResult handle(std::string_view body, const ReferenceFetcher& fetch, const AdmissionOptions& options) {
  AdmissionResult result;
  const auto parsed = parseReview(body);
  if (!parsed) return malformed(std::move(result), "the body cannot be parsed: " + parsed.error().message);
  const json& review = *parsed;
  if (!review.is_object()) return malformed(std::move(result), "the body is not a JSON object");
  const auto request = review.find("request");
  if (core::stringAt(review, {"kind"}) != "AdmissionReview" || request == review.end() ||
      !request->is_object() || core::stringAt(*request, {"uid"}).empty()) {
    return malformed(std::move(result), "not an AdmissionReview with a request uid");
  }
  const json& req = *request;
  json out = reviewResponse(core::stringAt(req, {"uid"}));
  // admission.k8s.io/v1 only (install-mwc registers admissionReviewVersions [v1]); answer in the
  // version asked so an apiserver that sends v1beta1 anyway still gets a parsable answer.
  if (const auto version = core::stringAt(review, {"apiVersion"}); !version.empty())
    out["apiVersion"] = version;
  result.operation = core::stringAt(req, {"operation"});
  result.namespace_ = core::stringAt(req, {"namespace"});
  result.name = core::stringAt(req, {"name"});
  // find(), never value(): value() returns a copy, and copying is recursive.
  const auto requestKind = req.find("kind");
  result.kind = core::stringAt(req, {"kind", "kind"});
  const auto object = req.find("object");
  if (requestKind == req.end() || !managedKind(*requestKind) ||
      (result.operation != "CREATE" && result.operation != "UPDATE") || object == req.end() ||
      !object->is_object() || !enabled(*object, options.selection)) {
    result.outcome = Outcome::Skipped;
    return answer(std::move(result), out);
  }
  if (result.namespace_.empty()) result.namespace_ = core::metadataString(*object, "namespace");
  if (result.namespace_.empty()) return failed(std::move(result), out, "the request has no namespace");
  // No namespace of that name can exist, and it would be a path segment of every lookup URL.
  if (!core::isValidNamespaceName(result.namespace_)) {
    result.namespace_ = core::shownName(result.namespace_);
    return failed(std::move(result), out, "the request's namespace is not a valid namespace name");
  }

  // An Argo Rollout whose pod template is its workloadRef's (Argo refuses one whose own template
  // has annotations), or that has none: allowed as it is; the referenced Deployment is admitted
  // on its own (docs/behaviour.md, "Argo Rollouts").
  if (const core::ManagedKind* row = core::findManagedKind(result.kind); row != nullptr) {
    const core::PodTemplateSource source = core::podTemplateSourceOf(*object, row->kind);
    if (source.source != core::TemplateSource::Own) {
      result.outcome = Outcome::Skipped;
      result.detail = source.source == core::TemplateSource::WorkloadRef
                          ? "the pod template is the workloadRef Deployment " + source.name + "'s"
                          : source.problem;
      return answer(std::move(result), out);
    }
  }
  const auto spec = object->find("spec");
  if (spec == object->end() || !spec->is_object() || !spec->contains("template")) {
    return failed(std::move(result), out, "the object has no spec.template");
  }
  // The pod template's references and, under Reloader's annotations, the reload lists' names.
  auto refs = core::trackedReferences(*object, options.selection);
  if (!refs) return failed(std::move(result), out, refs.error().describe());
  const ReferenceStates states = refs->empty() ? ReferenceStates{} : fetch(result.namespace_, *refs);
  const core::ObjectLookup lookup = [&states](core::RefKind kind, const std::string& name) {
    const auto it = states.find({kind, name});
    return it != states.end() ? it->second : core::ObjectState::unknown("not looked up");
  };
  // On CREATE no pod runs yet: every present object goes into the template (generation 1 either
  // way). On UPDATE pods may run: the baseline rules apply (docs/architecture.md, "Restart only
  // when pods need it"), e.g. a running workload labeled by this very update is recorded, not rolled.
  core::DesiredOptions desiredOptions;
  desiredOptions.podsRunning = result.operation == "UPDATE";
  desiredOptions.rollOnOptIn = options.rollOnOptIn;
  desiredOptions.selection = options.selection;
  auto desired = core::desiredAnnotations(*object, lookup, desiredOptions);
  if (!desired) {
    const std::string problem = desired.error().describe();
    return failed(std::move(result), out, problem, unknownReason(states, problem));
  }
  auto plan = core::planWrite(*object, *desired);
  if (!plan) return failed(std::move(result), out, plan.error().describe());
  // A content record under an old key is the controller's to rewrite (it holds the key's
  // migration, docs/architecture.md "Keyed digests"); alone it is no reason to patch a request.
  if (plan->kind == core::WriteKind::None || plan->kind == core::WriteKind::ContentRecord) {
    result.outcome = Outcome::Unchanged;
    return answer(std::move(result), out);
  }
  if (!plan->fits()) return tooLarge(std::move(result), std::move(out), *plan);
  if (plan->kind == core::WriteKind::RecordOnly)
    return recordOnly(std::move(result), std::move(out), *object, *desired, *plan);
  auto patch = core::annotationPatch(*object, plan->changes);
  if (!patch) return failed(std::move(result), out, patch.error().describe());
  // The content record goes with the template change it describes (docs/architecture.md,
  // "Content-aware restarts"); a rollout empties the baseline.
  if (auto s = appendRecords(*patch, *object, plan->records); !s)
    return failed(std::move(result), out, s.error().describe());
  out["response"]["patchType"] = "JSONPatch";
  out["response"]["patch"] = core::base64Encode(patch->dump());
  result.outcome = Outcome::Patched;
  for (const auto& change : plan->changes) {
    result.detail += (result.detail.empty() ? "" : "; ") + change.describe();
  }
  return answer(std::move(result), out);
}

}  // namespace

std::string kindLabel(const AdmissionResult& result) {
  const std::string& k = result.kind;
  return k.empty() || core::findManagedKind(k) != nullptr ? k : "other";
}

std::string operationLabel(const AdmissionResult& result) {
  const std::string& o = result.operation;
  return o.empty() || o == "CREATE" || o == "UPDATE" || o == "DELETE" || o == "CONNECT" ? o : "other";
}

std::size_t parseCostBound(std::string_view body) noexcept {
  // Bytes per token, a chunk being its request rounded up to 16 plus 8 of header (at least 32):
  //   '{'  the std::map (48 -> 64) and the parser's stack slot (8, doubled when it grows): 80
  //   '['  the std::vector (24 -> 32), its first element (16, up to 48 while it grows) and the
  //        stack slot: 96
  //   ':'  a member's tree node (32 + a 32-byte key + a 16-byte value -> 96) and a long key's own
  //        chunk overhead (24): 120
  //   ','  one more element of an array (48 while growing); in an object the ':' counts already
  //   '"'  a string value's std::string (32 -> 48) and its chunk overhead (24), per string: 72
  constexpr std::size_t kObject = 80, kArray = 96, kMember = 120, kElement = 48, kString = 72;
  std::size_t cost = 3 * body.size();  // string bytes: the tree, plus the lexer's buffer (2x)
  bool inString = false;
  bool escaped = false;
  std::size_t depth = 0;
  for (const char c : body) {
    if (inString) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        inString = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        inString = true;
        cost += kString;
        break;
      case '{':
      case '[':
        // Deeper than the parser allows: refused by its scan before anything is built.
        if (++depth > core::kMaxJsonDepth) return 0;
        cost += c == '{' ? kObject : kArray;
        break;
      case '}':
      case ']':
        if (depth > 0) --depth;
        break;
      case ':': cost += kMember; break;
      case ',': cost += kElement; break;
      default: break;
    }
  }
  return cost;
}

AdmissionResult handleAdmissionReview(std::string_view body, const ReferenceFetcher& fetch,
                                      const AdmissionOptions& options) {
  try {
    return handle(body, fetch, options);
  } catch (const std::exception& e) {
    // Only a bug gets here (a JSON type error on input we did not anticipate). A request with a
    // uid is still allowed (docs/architecture.md, "Fail open"); anything else is malformed.
    AdmissionResult result;
    const std::string problem = std::string("unexpected input: ") + e.what();
    const auto review = parseReview(body);
    if (review && review->is_object()) {
      const auto request = review->find("request");
      if (request != review->end() && request->is_object()) {
        if (std::string uid = core::stringAt(*request, {"uid"}); !uid.empty()) {
          return failed(std::move(result), reviewResponse(uid), problem);
        }
      }
    }
    return malformed(std::move(result), problem);
  }
}

}  // namespace restarter::webhook
