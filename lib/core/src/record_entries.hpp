#pragma once
// The shape both of restarter's metadata records share (content.hpp's content record,
// baseline.hpp's baseline): a comma-separated list of `<kind>/<name>=<rest>` entries. Private to
// core. Never fails: an entry without `=`, with another kind or with an empty name is skipped.

#include <string_view>

#include "restarter/core/references.hpp"

namespace restarter::core::detail {

// Calls fn(key, rest) for each entry whose key is "configmap/<name>" or "secret/<name>".
template <class Fn>
void forEachRecordEntry(std::string_view value, Fn&& fn) {
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view entry = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    const std::size_t equals = entry.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view key = entry.substr(0, equals);
    const std::size_t kindSlash = key.find('/');
    if (kindSlash == std::string_view::npos || kindSlash + 1 == key.size()) continue;
    const std::string_view kind = key.substr(0, kindSlash);
    if (kind != refKindName(RefKind::ConfigMap) && kind != refKindName(RefKind::Secret)) continue;
    fn(key, entry.substr(equals + 1));
  }
}

// "<uid>/<resourceVersion>": both parts non-empty, exactly one slash.
inline bool isVersionText(std::string_view value) {
  const std::size_t slash = value.find('/');
  return slash != std::string_view::npos && slash != 0 && slash + 1 != value.size() &&
         value.find('/', slash + 1) == std::string_view::npos;
}

}  // namespace restarter::core::detail
