#pragma once
// Bounded parsing of JSON that restarter did not write itself (AdmissionReviews, API answers and
// errors, watch events, exec credential plugins): the one way lib/ turns such bytes into
// nlohmann::json. Every parse of outside input goes through parseJson.
//
// Why a depth limit: nlohmann's parser is iterative, but copying, comparing, serialising and
// MessagePack-encoding a tree recurse once per level, so a tree nested 100,000 levels deep (600 KB
// of `{"a":`) overflows the stack when anything copies it, and costs far more memory than its
// text. The limit is checked by a linear, non-recursive scan of the text *before* any tree is
// built, so a too-deep text costs no memory at all.
//
// Why a size limit: a text is held once as bytes and once as a tree (several times its size);
// each caller states the largest text its peer can legitimately send.

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/core/result.hpp"

namespace restarter::core {

// The deepest nesting of arrays and objects accepted. What restarter reads is shallow: the deepest
// path of an apps/v1 workload (a pod template's affinity term's label selector's expression's
// values) is ~15 levels, ~20 with the AdmissionReview or watch-event wrapper and managedFields,
// and the apiserver decodes these kinds into fixed Go structs, so no stored object is deeper.
// 512 is 25 times that. The other side: the recursive operations above need at most ~1.5 KB of
// stack per level (measured: a MessagePack round trip with ASan+UBSan, as the fuzz build runs;
// a copy ~1.1 KB there and at -O0, ~150 bytes at -O2), so 512 levels need at most ~750 KB, a tenth
// of the 8 MiB default thread stack every parse runs on. yaml-cpp, which reads kubeconfigs, stops
// at 500 levels too.
inline constexpr std::size_t kMaxJsonDepth = 512;

struct JsonLimits {
  std::size_t maxBytes = 0;              // the text's length in bytes
  std::size_t maxDepth = kMaxJsonDepth;  // nesting of arrays and objects: "1" is 0, "[]" 1, "[{}]" 2
};

// The nesting depth of arrays and objects in `text`, counting brackets outside strings; stops
// scanning as soon as it exceeds `stopAbove` (and then returns a value above it). Linear, constant
// memory, never recursive. For a valid JSON text it is the text's depth; for any other text it is
// at least the depth nlohmann's parser reaches before it fails (both read strings alike up to the
// first byte the parser rejects), so it bounds what a parse can build.
std::size_t jsonNestingDepth(std::string_view text, std::size_t stopAbove);

// Parses one JSON text (RFC 8259; no comments). InvalidInput when the text is longer than
// limits.maxBytes or nests deeper than limits.maxDepth (both checked before anything is built), or
// is not JSON; the message says which and, for the limits, the numbers. Throws nothing but
// std::bad_alloc.
Result<nlohmann::json> parseJson(std::string_view text, const JsonLimits& limits);

// Decides, while parsing, whether a member of an object is kept: `path` holds the keys from the
// root to the member, the member's own key last (`{"a":{"b":1}}` asks about {"a"}, then {"a","b"}).
// Only members reached through objects alone are asked about: a member of an object inside an
// array is kept with its array, and nothing inside a member not kept is asked about. A member not
// kept is never built (its text is still checked: the parse fails if it is not JSON).
using JsonMemberFilter = std::function<bool(const std::vector<std::string>& path)>;

// As parseJson above, keeping only the members `keep` accepts: for a caller that reads a few parts
// of a large document, so the rest costs no memory.
Result<nlohmann::json> parseJson(std::string_view text, const JsonLimits& limits, const JsonMemberFilter& keep);

}  // namespace restarter::core
