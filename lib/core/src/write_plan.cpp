#include "restarter/core/write_plan.hpp"

#include <map>

#include "restarter/base/rfc3339.hpp"
#include "restarter/core/baseline.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/core/time.hpp"

namespace restarter::core {

using nlohmann::json;

namespace {

// The longest last-rollout value restarter writes: an RFC 3339 time with microseconds.
std::size_t lastRolloutValueBytes() {
  static const std::size_t bytes = base::formatRfc3339(TimePoint{} + std::chrono::microseconds{1}).size();
  return bytes;
}

// The metadata annotations' size once `records` are set (an empty value removes the key), with
// `omitted` bytes the copy `workload` lacks.
AnnotationsSize metadataSizeAfter(const json& workload, const std::vector<MetadataAnnotation>& records,
                                  std::size_t omitted) {
  AnnotationsSize size;
  size.before = metadataAnnotationsBytes(workload) + omitted;
  size.after = size.before;
  const json* annotations = valueAt(workload, {"metadata", "annotations"});
  for (const MetadataAnnotation& record : records) {
    if (annotations != nullptr && annotations->is_object()) {
      if (const auto it = annotations->find(record.key); it != annotations->end() && it->is_string()) {
        size.after -= record.key.size() + it->get_ref<const std::string&>().size();
      }
    }
    if (!record.value.empty()) size.after += record.key.size() + record.value.size();
  }
  return size;
}

std::string describeSize(std::string_view what, const AnnotationsSize& size) {
  return std::string(what) + " would be " + std::to_string(size.after) + " bytes (now " +
         std::to_string(size.before) + ")";
}

}  // namespace

std::size_t metadataAnnotationsBytes(const json& workload) {
  std::size_t total = 0;
  if (const json* annotations = valueAt(workload, {"metadata", "annotations"});
      annotations != nullptr && annotations->is_object()) {
    for (const auto& [key, value] : annotations->items()) {
      if (value.is_string()) total += key.size() + value.get_ref<const std::string&>().size();
    }
  }
  return total;
}

std::string WritePlan::refusal() const {
  std::string why;
  if (!templateSize.fits()) why = describeSize("the pod template's annotations", templateSize);
  if (!metadataSize.fits()) {
    why += (why.empty() ? "" : " and ") + describeSize("the workload's metadata annotations", metadataSize);
  }
  if (!why.empty()) why += ", over the apiserver's limit of " + std::to_string(kMaxAnnotationsBytes);
  return why;
}

Result<WritePlan> planWrite(const json& workload, const DesiredAnnotations& desired, WriteOptions options) {
  WritePlan plan;
  auto changes = planAnnotationChanges(workload, desired);
  if (!changes) return std::move(changes).error();
  auto current = templateAnnotations(workload);
  if (!current) return std::move(current).error();
  plan.templateSize = annotationsSizeAfter(*current, *changes);
  plan.changes = std::move(*changes);
  if (!plan.changes.empty()) {
    plan.kind = WriteKind::Template;
    // The content record goes with the template change it describes (docs/architecture.md,
    // "Content-aware restarts"); a rollout empties the baseline.
    plan.records = {{std::string(kContentDigestsAnnotation), desired.contentDigests},
                    {std::string(kBaselineAnnotation), desired.baseline}};
  } else if (recordedBaseline(workload) != parseBaseline(desired.baseline)) {
    plan.kind = WriteKind::RecordOnly;
    plan.records = {{std::string(kBaselineAnnotation), desired.baseline},
                    {std::string(kContentDigestsAnnotation), desired.contentDigests}};
  } else if (desired.recordRewrite != RecordRewrite::None) {
    plan.kind = WriteKind::ContentRecord;
    plan.records = {{std::string(kContentDigestsAnnotation), desired.contentDigests}};
  }
  std::vector<MetadataAnnotation> written = plan.records;
  if (plan.kind == WriteKind::Template && options.stampsRollout) {
    written.push_back({std::string(kLastRolloutAnnotation), std::string(lastRolloutValueBytes(), '0')});
  }
  plan.metadataSize = metadataSizeAfter(workload, written, options.omittedAnnotationsBytes);
  return plan;
}

}  // namespace restarter::core
