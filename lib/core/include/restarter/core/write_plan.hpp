#pragma once
// One write plan: what restarter would write to one workload, and whether the apiserver would
// accept it. The controller, the webhook and explain-restart/status all plan here, so a write the
// controller refuses is shown refused by explain-restart and status too (docs/architecture.md,
// "Annotation size limits").
//
// A write is one of:
//   Template    pod-template annotation changes (a rollout), with the metadata records that go
//               with them: the content record, the baseline (emptied or kept) and, from the
//               controller, the last-rollout time;
//   RecordOnly  no template change, but the baseline record changes (core/baseline.hpp): the
//               baseline and the content record alone, which restarts nothing;
//   ContentRecord  no template or baseline change, but the content record must be rewritten
//               (DesiredAnnotations::recordRewrite: it holds digests not keyed with the current
//               key, or lacks the entry of a reference whose content is read): the content record
//               alone, which restarts nothing;
//   None        nothing to write.
// The apiserver limits the workload's `metadata.annotations` and its pod template's annotations
// separately (annotation_size.hpp); a write that would cross either limit is refused whole, so
// fits() checks both and callers make no write at all when it is false.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/core/annotation_size.hpp"
#include "restarter/core/annotations.hpp"
#include "restarter/core/json_patch.hpp"
#include "restarter/core/result.hpp"

namespace restarter::core {

// The bytes (keys plus values) of `workload`'s metadata annotations with string values: what the
// apiserver counts of them, once the bytes a trimmed copy lacks are added
// (WriteOptions::omittedAnnotationsBytes).
std::size_t metadataAnnotationsBytes(const nlohmann::json& workload);

// The reason of the Warning Event the controller records when it refuses a write that does not fit
// (and the webhook's outcome for the same), which explain-restart and status report.
inline constexpr std::string_view kAnnotationsTooLargeReason = "AnnotationsTooLarge";

enum class WriteKind { None, RecordOnly, ContentRecord, Template };

struct WriteOptions {
  // The controller stamps kLastRolloutAnnotation with every rollout; the webhook does not (a
  // workload being created or updated by its owner is not a restarter rollout).
  bool stampsRollout = false;
  // The bytes (keys plus values) of metadata annotations the workload has but its copy passed to
  // planWrite does not: the controller's cache trims a workload to the annotations it reads
  // (controller/slim.hpp), and the apiserver still counts the others.
  std::size_t omittedAnnotationsBytes = 0;
};

struct WritePlan {
  WriteKind kind = WriteKind::None;
  std::vector<AnnotationChange> changes;  // pod template changes (planAnnotationChanges)
  // The metadata records the write leaves ("" = none); the last-rollout stamp is not among them
  // (the caller stamps the time of the write) but is counted in metadataSize.
  std::vector<MetadataAnnotation> records;
  AnnotationsSize templateSize;  // pod template annotations before and after
  AnnotationsSize metadataSize;  // metadata annotations before and after (at most)

  bool fits() const { return templateSize.fits() && metadataSize.fits(); }
  // Why the apiserver would refuse the write, e.g. "the pod template's annotations would be
  // 262200 bytes (now 262100)" or the metadata's; empty when it fits.
  std::string refusal() const;
};

// The write that makes `workload` carry `desired`. The last-rollout stamp, whose time is not
// known yet, is counted at the longest RFC 3339 form restarter writes. InvalidInput when the
// workload's annotations have the wrong JSON type.
Result<WritePlan> planWrite(const nlohmann::json& workload, const DesiredAnnotations& desired,
                            WriteOptions options = {});

}  // namespace restarter::core
