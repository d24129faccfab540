#pragma once
// The apiserver's limit on annotations, and whether a planned change stays within it.
//
// The apiserver refuses any object whose annotations total more than 256 KiB, counting
// len(key) + len(value) in bytes over all of them (apimachinery's ValidateAnnotationsSize; the
// answer is 422 "Too long: must have at most 262144 bytes"). The limit applies separately to the
// workload's own `metadata.annotations` and to its pod template's; restarter only ever writes the
// pod template's, so only those are counted here. A write (the webhook's patch, the controller's
// apply) that would cross the limit is refused as a whole — for the webhook that refusal would deny
// the user's request — so callers check first and then make no write at all.

#include <cstddef>
#include <string>
#include <vector>

#include "restarter/core/annotations.hpp"

namespace restarter::core {

// 256 KiB, apimachinery's TotalAnnotationSizeLimitB. An object exactly at the limit is valid.
inline constexpr std::size_t kMaxAnnotationsBytes = std::size_t{256} << 10;

// The size the apiserver counts: the sum of the keys' and the values' lengths in bytes.
std::size_t annotationsBytes(const AnnotationMap& annotations);

struct AnnotationsSize {
  std::size_t before = 0;  // the annotations now
  std::size_t after = 0;   // once the changes are applied

  // Whether the annotations after the change are within kMaxAnnotationsBytes.
  bool fits() const { return after <= kMaxAnnotationsBytes; }
};

// The size of `current` before and after applying `changes`: each change sets its key to its
// `after` value or, without one, removes the key. Each key appears in at most one change (as
// planAnnotationChanges and diffAnnotations give them).
AnnotationsSize annotationsSizeAfter(const AnnotationMap& current,
                                     const std::vector<AnnotationChange>& changes);

}  // namespace restarter::core
