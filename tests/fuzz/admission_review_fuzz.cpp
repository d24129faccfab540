// Fuzz target: the webhook's AdmissionReview handling (lib/webhook/admission.hpp), i.e. the body
// the HTTPS server hands over, decoded and answered. Beyond "no crash", it checks the promises
// that the apiserver relies on (docs/architecture.md, "Fail open"):
//   - the answer is HTTP 200 or 400, and 400 exactly when the outcome is Malformed;
//   - a 200 answer is an AdmissionReview whose response echoes the request uid and is allowed;
//   - no exception reached the handler's last-resort catch (that catch exists for bugs only);
//   - a patch comes exactly with the outcomes Patched and Recorded, and a Recorded one (a
//     baseline written into the workload's metadata, docs/architecture.md "Restart only when pods
//     need it") leaves the pod template as it was;
//   - a patch decodes (base64), applies to the request's object (RFC 6902), and the patched
//     object, reviewed again with the same reference states, needs no further patch — what the
//     apiserver does with reinvocationPolicy: IfNeeded;
//   - never a denial by patch size: the patched object's pod template annotations are within the
//     apiserver's limit, and a review skipped for size carries one warning of at most 120
//     characters.
//   - no lookup is ever asked for a name no ConfigMap or Secret can have, or in a namespace that
//     cannot exist (core::isValidObjectName, isValidNamespaceName: docs/architecture.md, "Fresh
//     lookups").
// The reference states come from the names themselves (a pure function), so a run is reproducible.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "check.hpp"
#include "restarter/core/annotation_size.hpp"
#include "restarter/core/base64.hpp"
#include "restarter/core/references.hpp"
#include "restarter/webhook/admission.hpp"

namespace {

using nlohmann::json;
using restarter::webhook::Outcome;

// Present, absent, unknown or ignored, chosen by the name's bytes.
restarter::core::ObjectState stateOf(const std::string& name) {
  unsigned sum = 0;
  for (const char c : name) sum += static_cast<unsigned char>(c);
  switch (sum % 4) {
    case 0: return restarter::core::ObjectState::absent();
    // The name in the problem, as the API client puts it in its error messages.
    case 1: return restarter::core::ObjectState::unknown("fuzz: no answer for " + name);
    case 2: return restarter::core::ObjectState::present("uid-" + name, std::to_string(sum), true);
    default: return restarter::core::ObjectState::present("uid-" + name, std::to_string(sum), false);
  }
}

[[noreturn]] void fail(const char* what, const std::string& detail);

restarter::webhook::ReferenceStates fetch(const std::string& namespace_,
                                          const std::vector<restarter::core::Reference>& refs) {
  // The production fetcher would check both again; reaching it with either is the bug.
  if (!restarter::core::isValidNamespaceName(namespace_)) {
    fail("a lookup in an invalid namespace", restarter::core::shownName(namespace_));
  }
  for (const auto& ref : refs) {
    if (!restarter::core::isValidObjectName(ref.name)) {
      fail("a lookup of an invalid name", restarter::core::shownName(ref.name));
    }
  }
  restarter::webhook::ReferenceStates states;
  for (const auto& ref : refs) states.emplace(std::pair{ref.kind, ref.name}, stateOf(ref.name));
  return states;
}

[[noreturn]] void fail(const char* what, const std::string& detail) {
  restarter::fuzz::fail("admission_review_fuzz", what, detail);
}

std::string requestUid(const json& review) { return review["request"]["uid"].get<std::string>(); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const restarter::webhook::AdmissionResult result = restarter::webhook::handleAdmissionReview(body, fetch);

  if ((result.httpStatus == 400) != (result.outcome == Outcome::Malformed)) {
    fail("HTTP status and outcome disagree", std::to_string(result.httpStatus) + " " + result.detail);
  }
  if (result.httpStatus != 200 && result.httpStatus != 400) fail("unexpected HTTP status", result.detail);
  if (result.detail.rfind("unexpected input:", 0) == 0) fail("an exception escaped the handler", result.detail);
  if (result.httpStatus != 200) return 0;

  // The request parsed (else 400), so these lookups are safe.
  const json review = json::parse(body);
  const json answer = json::parse(result.body, nullptr, /*allow_exceptions=*/false);
  if (!answer.is_object() || !answer.contains("response") || !answer["response"].is_object()) {
    fail("the answer is not an AdmissionReview", result.body);
  }
  const json& response = answer["response"];
  if (response.value("allowed", false) != true) fail("not allowed", result.body);
  if (response.value("uid", std::string()) != requestUid(review)) fail("uid not echoed", result.body);
  if (answer.value("kind", std::string()) != "AdmissionReview") fail("wrong kind", result.body);

  if (result.outcome == Outcome::SkippedTooLarge) {
    const auto warnings = response.find("warnings");
    if (warnings == response.end() || !warnings->is_array() || warnings->size() != 1 ||
        !(*warnings)[0].is_string() || (*warnings)[0].get_ref<const std::string&>().size() > 120) {
      fail("a review skipped for size without one short warning", result.body);
    }
  }

  // Patched changes the pod template (a rollout); Recorded only the workload's metadata records.
  const bool hasPatch = response.contains("patch");
  if (hasPatch != (result.outcome == Outcome::Patched || result.outcome == Outcome::Recorded)) {
    fail("patch and outcome disagree", std::string(outcomeName(result.outcome)) + " " + result.body);
  }
  if (!hasPatch) return 0;
  if (response.value("patchType", std::string()) != "JSONPatch") fail("patchType", result.body);
  const std::optional<std::string> patchText =
      restarter::core::base64Decode(response["patch"].get<std::string>());
  if (!patchText) fail("the patch is not base64", result.body);
  const json patch = json::parse(*patchText, nullptr, /*allow_exceptions=*/false);
  if (!patch.is_array()) fail("the patch is not a JSON array", *patchText);

  json patched;
  try {
    patched = review["request"]["object"].patch(patch);
  } catch (const json::exception& e) {
    fail("the patch does not apply", std::string(e.what()) + " " + *patchText);
  }
  // A record restarts nothing: the pod template is left exactly as it came.
  if (result.outcome == Outcome::Recorded &&
      patched["spec"]["template"] != review["request"]["object"]["spec"]["template"]) {
    fail("a recorded baseline changed the pod template", *patchText);
  }
  if (const auto annotations = restarter::core::templateAnnotations(patched);
      annotations && restarter::core::annotationsBytes(*annotations) > restarter::core::kMaxAnnotationsBytes) {
    fail("the patch makes the annotations too large for the apiserver",
         std::to_string(restarter::core::annotationsBytes(*annotations)));
  }
  json again = review;
  again["request"]["object"] = patched;
  const auto second = restarter::webhook::handleAdmissionReview(again.dump(), fetch);
  if (second.outcome != Outcome::Unchanged) {
    fail("the patched object is not final",
         std::string(outcomeName(second.outcome)) + " " + second.detail + " after " + *patchText);
  }
  return 0;
}
