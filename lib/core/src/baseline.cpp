#include "restarter/core/baseline.hpp"

#include <nlohmann/json.hpp>

#include "record_entries.hpp"
#include "restarter/core/annotation_keys.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/references.hpp"

namespace restarter::core {

using nlohmann::json;

namespace {

const json* metadataAnnotations(const json& workload) {
  if (!workload.is_object()) return nullptr;
  const auto metadata = workload.find("metadata");
  if (metadata == workload.end() || !metadata->is_object()) return nullptr;
  const auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return nullptr;
  return &*annotations;
}

}  // namespace

BaselineRecords parseBaseline(std::string_view value) {
  BaselineRecords out;
  detail::forEachRecordEntry(value, [&out](std::string_view key, std::string_view version) {
    if (detail::isVersionText(version) || version == kBaselineAbsent)
      out.insert_or_assign(std::string(key), std::string(version));
  });
  return out;
}

std::string formatBaseline(const BaselineRecords& records) {
  std::string out;
  for (const auto& [key, version] : records) {
    if (!out.empty()) out += ',';
    out += key;
    out += '=';
    out += version;
  }
  return out;
}

BaselineRecords recordedBaseline(const json& workload) {
  const json* annotations = metadataAnnotations(workload);
  if (annotations == nullptr) return {};
  const auto it = annotations->find(std::string(kBaselineAnnotation));
  if (it == annotations->end() || !it->is_string()) return {};
  return parseBaseline(it->get_ref<const std::string&>());
}

bool hasRestarterRecord(const json& workload) {
  if (const json* annotations = metadataAnnotations(workload)) {
    for (std::string_view key : {kBaselineAnnotation, kContentDigestsAnnotation, kLastRolloutAnnotation}) {
      if (annotations->contains(std::string(key))) return true;
    }
  }
  if (!workload.is_object()) return false;
  const json::json_pointer pointer("/spec/template/metadata/annotations");
  if (!workload.contains(pointer)) return false;
  const json& annotations = workload.at(pointer);
  if (!annotations.is_object()) return false;
  for (const auto& item : annotations.items()) {
    if (parseTemplateAnnotationKey(item.key())) return true;
  }
  return false;
}

}  // namespace restarter::core
