#include "restarter/controller/predicates.hpp"

#include "restarter/core/json_access.hpp"
#include "restarter/core/rollout.hpp"

namespace restarter::controller {

using nlohmann::json;

namespace {

// The workload's spec.template.metadata.annotations (null when absent).
json templateAnnotationsOf(const json& object) {
  if (!object.is_object()) return nullptr;
  const json::json_pointer pointer("/spec/template/metadata/annotations");
  return object.contains(pointer) ? object.at(pointer) : json(nullptr);
}

}  // namespace

bool sameMetadata(const json& before, const json& after, std::string_view field) {
  const json* a = core::valueAt(before, {"metadata", field});
  const json* b = core::valueAt(after, {"metadata", field});
  return a == nullptr || b == nullptr ? a == b : *a == *b;
}

bool workloadChanged(const cache::PackedPtr& beforePacked, const cache::PackedPtr& afterPacked) {
  const json before = beforePacked->unpack();
  const json after = afterPacked->unpack();
  return !sameMetadata(before, after, "generation") || !sameMetadata(before, after, "annotations") ||
         !sameMetadata(before, after, "uid") || templateAnnotationsOf(before) != templateAnnotationsOf(after);
}

bool rolloutFinished(core::WorkloadKind kind, const cache::PackedPtr& beforePacked,
                     const cache::PackedPtr& afterPacked) {
  return !core::rolloutProgressOf(beforePacked->unpack(), kind).finished &&
         core::rolloutProgressOf(afterPacked->unpack(), kind).finished;
}

bool rollInputChanged(const cache::PackedPtr& beforePacked, const cache::PackedPtr& afterPacked) {
  json before = beforePacked->unpack();
  json after = afterPacked->unpack();
  for (json* object : {&before, &after}) {
    if (object->is_object() && object->contains("metadata") && (*object)["metadata"].is_object()) {
      (*object)["metadata"].erase("resourceVersion");
    }
  }
  return before != after;
}

bool podChanged(const cache::ObjectPtr& before, const cache::ObjectPtr& after) {
  return !sameMetadata(*before, *after, "annotations") || !sameMetadata(*before, *after, "uid");
}

}  // namespace restarter::controller
