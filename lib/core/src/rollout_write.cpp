#include "restarter/core/rollout_write.hpp"

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/json_patch.hpp"

namespace restarter::core {

using nlohmann::json;

json applyBody(std::string_view apiVersion, std::string_view kind, const json& workload,
               const AppliedAnnotations& sent) {
  json annotations = json::object();
  for (const auto& [key, value] : sent.templateAnnotations) annotations[key] = value;
  json metadataAnnotations = json::object();
  if (sent.lastRollout) metadataAnnotations[std::string(kLastRolloutAnnotation)] = *sent.lastRollout;
  // Not sent when empty: the apply then removes a record this manager wrote before (nothing is
  // tracked whose content is read).
  if (!sent.contentDigests.empty())
    metadataAnnotations[std::string(kContentDigestsAnnotation)] = sent.contentDigests;
  if (sent.baseline) metadataAnnotations[std::string(kBaselineAnnotation)] = *sent.baseline;
  if (sent.queuedSince) metadataAnnotations[std::string(kQueuedSinceAnnotation)] = *sent.queuedSince;
  return {{"apiVersion", std::string(apiVersion)},
          {"kind", std::string(kind)},
          {"metadata",
           {{"name", metadataString(workload, "name")},
            {"namespace", metadataString(workload, "namespace")},
            {"uid", metadataString(workload, "uid")},
            {"annotations", std::move(metadataAnnotations)}}},
          {"spec", {{"template", {{"metadata", {{"annotations", annotations}}}}}}}};
}

std::optional<std::string> metadataAnnotation(const json& workload, std::string_view key) {
  const json::json_pointer pointer("/metadata/annotations");
  if (!workload.is_object() || !workload.contains(pointer)) return std::nullopt;
  const json& annotations = workload.at(pointer);
  if (!annotations.is_object()) return std::nullopt;
  const auto it = annotations.find(std::string(key));
  if (it == annotations.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::optional<std::string> baselineToSend(const json& workload, const DesiredAnnotations& desired) {
  if (!desired.baseline.empty() || metadataAnnotation(workload, kBaselineAnnotation)) return desired.baseline;
  return std::nullopt;
}

AppliedAnnotations rolloutAnnotations(const json& workload, const DesiredAnnotations& desired,
                                      TimePoint rolledAt) {
  return AppliedAnnotations{desired.annotations, base::formatRfc3339(rolledAt), desired.contentDigests,
                            baselineToSend(workload, desired), std::nullopt};  // queued-since removed
}

Result<std::optional<json>> foreignLeftoverPatch(const json& applied, const DesiredAnnotations& desired,
                                                 std::vector<AnnotationChange>* removed) {
  auto current = templateAnnotations(applied);
  if (!current) return std::move(current).error();
  std::vector<Reference> refs;
  for (const ReferenceStatus& status : desired.references) refs.push_back(status.ref);
  std::vector<AnnotationChange> leftovers;
  for (AnnotationChange& change : diffAnnotations(*current, desired.annotations, refs)) {
    if (!change.after) leftovers.push_back(std::move(change));
  }
  if (leftovers.empty()) return std::optional<json>();
  auto patch = annotationPatch(applied, leftovers);
  if (!patch) return std::move(patch).error();
  // `test` first: if anyone changed the value meanwhile, the patch fails and the retry re-plans.
  json guarded = json::array();
  for (const AnnotationChange& change : leftovers) {
    guarded.push_back({{"op", "test"},
                       {"path", "/spec/template/metadata/annotations/" + escapeJsonPointerToken(change.key)},
                       {"value", *change.before}});
  }
  for (const json& op : *patch) guarded.push_back(op);
  if (removed != nullptr) *removed = std::move(leftovers);
  return std::optional<json>(std::move(guarded));
}

}  // namespace restarter::core
