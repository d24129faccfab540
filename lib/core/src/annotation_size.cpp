#include "restarter/core/annotation_size.hpp"

namespace restarter::core {

std::size_t annotationsBytes(const AnnotationMap& annotations) {
  std::size_t total = 0;
  for (const auto& [key, value] : annotations) total += key.size() + value.size();
  return total;
}

AnnotationsSize annotationsSizeAfter(const AnnotationMap& current,
                                     const std::vector<AnnotationChange>& changes) {
  AnnotationsSize size;
  size.before = annotationsBytes(current);
  size.after = size.before;
  for (const AnnotationChange& change : changes) {
    // What the key holds now, not change.before: the result must be exact even for a change
    // planned against other annotations.
    if (const auto it = current.find(change.key); it != current.end()) {
      size.after -= it->first.size() + it->second.size();
    }
    if (change.after) size.after += change.key.size() + change.after->size();
  }
  return size;
}

}  // namespace restarter::core
