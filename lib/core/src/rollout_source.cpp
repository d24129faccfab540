#include "restarter/core/rollout_source.hpp"

#include <string_view>
#include <utility>

#include "restarter/core/json_access.hpp"

namespace restarter::core {

namespace {

PodTemplateSource unsupported(std::string problem) {
  return {TemplateSource::Unsupported, {}, std::move(problem)};
}

// A text for a log line: at most 100 bytes of `text` (a workloadRef's fields are user input).
std::string clipped(const std::string& text) { return text.size() <= 100 ? text : text.substr(0, 100) + "..."; }

// spec.workloadRef (an object): an apps Deployment named in the Rollout's namespace, else why not.
PodTemplateSource fromWorkloadRef(const nlohmann::json& ref) {
  if (!ref.is_object()) return unsupported("spec.workloadRef is not an object");
  const std::string apiVersion = stringAt(ref, {"apiVersion"});
  const std::string kind = stringAt(ref, {"kind"});
  const std::string name = stringAt(ref, {"name"});
  if (kind != "Deployment" || apiVersion.rfind("apps/", 0) != 0) {
    return unsupported("spec.workloadRef names \"" + clipped(apiVersion) + "\" \"" + clipped(kind) +
                       "\": restarter follows only an apps Deployment");
  }
  if (name.empty()) return unsupported("spec.workloadRef names no Deployment (no name)");
  // Argo Rollouts has no namespace in an ObjectRef (the CRD prunes one): a reference always
  // resolves in the Rollout's namespace. Said here in case a schema lets one through.
  if (ref.contains("namespace")) {
    return unsupported(
        "spec.workloadRef.namespace: a workloadRef resolves in the Rollout's own namespace only");
  }
  return {TemplateSource::WorkloadRef, name, {}};
}

}  // namespace

PodTemplateSource podTemplateSourceOf(const nlohmann::json& workload, WorkloadKind kind) {
  if (kind != WorkloadKind::Rollout || !workload.is_object()) return {};
  const nlohmann::json* ref = valueAt(workload, {"spec", "workloadRef"});
  if (ref != nullptr && !ref->is_null()) return fromWorkloadRef(*ref);
  const nlohmann::json* podTemplate = valueAt(workload, {"spec", "template"});
  if (podTemplate != nullptr && podTemplate->is_object()) return {};
  return {TemplateSource::Missing, {}, "the Rollout has neither spec.template nor spec.workloadRef"};
}

}  // namespace restarter::core
