#pragma once
// JSON Patch (RFC 6902) for the webhook: turns the planned annotation changes into operations on
// the admitted workload object, under `/spec/template/metadata/annotations`.
//
// The parents may be missing on the admitted object: when `metadata` (or `annotations`) of the
// template is absent, one `add` creates it with every added key at once (RFC 6902 `add` needs the
// parent to exist). Keys are JSON Pointer tokens, so '~' becomes "~0" and '/' becomes "~1"
// (RFC 6901 section 3): `configmap.restarter.stackable.tech/app` is addressed as
// `.../annotations/configmap.restarter.stackable.tech~1app`.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "restarter/core/annotations.hpp"
#include "restarter/core/result.hpp"

namespace restarter::core {

// RFC 6901 escaping of one reference token.
std::string escapeJsonPointerToken(std::string_view token);

// The patch (a JSON array, possibly empty) applying `changes` to `workload`.
// InvalidInput when the workload has no `spec.template` object, or a parent on the path has the
// wrong JSON type.
Result<nlohmann::json> annotationPatch(const nlohmann::json& workload,
                                       const std::vector<AnnotationChange>& changes);

// The operations that make the workload's metadata annotation kContentDigestsAnnotation hold
// `record` (empty: not there), under `/metadata/annotations`; empty when it holds it already. The
// webhook adds them to a patch only together with template changes ("Content-aware restarts").
// InvalidInput when `metadata` or its annotations have the wrong JSON type.
Result<nlohmann::json> contentRecordPatch(const nlohmann::json& workload, const std::string& record);

// One metadata annotation a patch should leave behind: `value`, or none when empty.
struct MetadataAnnotation {
  std::string key;
  std::string value;
};
// The operations that make the workload's metadata annotations hold `wanted` (each absent when its
// value is empty), under `/metadata/annotations`; empty when they hold them already. The content
// record and the baseline record (baseline.hpp) are written this way. InvalidInput when `metadata`
// or its annotations have the wrong JSON type.
Result<nlohmann::json> metadataAnnotationsPatch(const nlohmann::json& workload,
                                                const std::vector<MetadataAnnotation>& wanted);

}  // namespace restarter::core
