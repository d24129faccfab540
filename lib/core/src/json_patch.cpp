#include "restarter/core/json_patch.hpp"

#include <nlohmann/json.hpp>

#include "json_access.hpp"
#include "restarter/core/constants.hpp"

namespace restarter::core {

using nlohmann::json;
namespace d = detail;

std::string escapeJsonPointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

Result<json> annotationPatch(const json& workload, const std::vector<AnnotationChange>& changes) {
  json patch = json::array();
  if (changes.empty()) return patch;

  auto spec = d::optionalObject(workload, "spec", "");
  if (!spec) return std::move(spec).error();
  if (*spec == nullptr) return makeError(ErrorKind::InvalidInput, "spec: missing");
  auto podTemplate = d::optionalObject(**spec, "template", "spec");
  if (!podTemplate) return std::move(podTemplate).error();
  if (*podTemplate == nullptr) return makeError(ErrorKind::InvalidInput, "spec.template: missing");
  auto metadata = d::optionalObject(**podTemplate, "metadata", "spec.template");
  if (!metadata) return std::move(metadata).error();
  const json* annotations = nullptr;
  if (*metadata != nullptr) {
    auto found = d::optionalObject(**metadata, "annotations", "spec.template.metadata");
    if (!found) return std::move(found).error();
    annotations = *found;
  }

  if (annotations == nullptr) {
    // Create the missing parent with every added value at once; removals have nothing to remove.
    json added = json::object();
    for (const AnnotationChange& change : changes) {
      if (change.after) added[change.key] = *change.after;
    }
    if (added.empty()) return patch;
    if (*metadata == nullptr) {
      patch.push_back(
          {{"op", "add"}, {"path", "/spec/template/metadata"}, {"value", {{"annotations", std::move(added)}}}});
    } else {
      patch.push_back(
          {{"op", "add"}, {"path", "/spec/template/metadata/annotations"}, {"value", std::move(added)}});
    }
    return patch;
  }

  const std::string base = "/spec/template/metadata/annotations/";
  for (const AnnotationChange& change : changes) {
    const std::string path = base + escapeJsonPointerToken(change.key);
    const bool exists = annotations->contains(change.key);
    if (change.after) {
      // `add` replaces an existing member too (RFC 6902 4.1), so it is right either way.
      patch.push_back({{"op", "add"}, {"path", path}, {"value", *change.after}});
    } else if (exists) {
      patch.push_back({{"op", "remove"}, {"path", path}});
    }
  }
  return patch;
}

Result<json> metadataAnnotationsPatch(const json& workload, const std::vector<MetadataAnnotation>& wanted) {
  json patch = json::array();
  if (!workload.is_object()) return d::wrongType("workload", "an object", workload);
  auto metadata = d::optionalObject(workload, "metadata", "");
  if (!metadata) return std::move(metadata).error();
  const json* annotations = nullptr;
  if (*metadata != nullptr) {
    auto found = d::optionalObject(**metadata, "annotations", "metadata");
    if (!found) return std::move(found).error();
    annotations = *found;
  }
  if (annotations == nullptr) {
    // RFC 6902 `add` needs the parent: one operation creates it with every value at once.
    json values = json::object();
    for (const MetadataAnnotation& item : wanted) {
      if (!item.value.empty()) values[item.key] = item.value;
    }
    if (values.empty()) return patch;
    if (*metadata == nullptr) {
      patch.push_back({{"op", "add"}, {"path", "/metadata"}, {"value", {{"annotations", std::move(values)}}}});
    } else {
      patch.push_back({{"op", "add"}, {"path", "/metadata/annotations"}, {"value", std::move(values)}});
    }
    return patch;
  }
  for (const MetadataAnnotation& item : wanted) {
    const std::string path = "/metadata/annotations/" + escapeJsonPointerToken(item.key);
    const auto current = annotations->find(item.key);
    if (item.value.empty()) {
      if (current != annotations->end()) patch.push_back({{"op", "remove"}, {"path", path}});
      continue;
    }
    if (current != annotations->end() && current->is_string() &&
        current->get_ref<const std::string&>() == item.value) {
      continue;
    }
    patch.push_back({{"op", "add"}, {"path", path}, {"value", item.value}});
  }
  return patch;
}

Result<json> contentRecordPatch(const json& workload, const std::string& record) {
  return metadataAnnotationsPatch(workload, {{std::string(kContentDigestsAnnotation), record}});
}

}  // namespace restarter::core
