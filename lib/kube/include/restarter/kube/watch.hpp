#pragma once
// Watch stream decoding: the apiserver sends one JSON object per line, {"type":..., "object":...}.
// The decoder takes chunks of any size, yields whole events, and reports malformed lines, unknown
// types and a stream that ends in the middle of an object as errors (never exceptions).

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "restarter/core/result.hpp"

namespace restarter::kube {

struct WatchEvent {
  enum class Type { Added, Modified, Deleted, Bookmark, Error };
  Type type = Type::Added;
  nlohmann::json object;  // for Error: the metav1.Status
};

const char* watchEventTypeName(WatchEvent::Type type) noexcept;

class WatchDecoder {
 public:
  // One line longer than this is an error (a broken or hostile server must not exhaust memory).
  static constexpr std::size_t kMaxLineBytes = std::size_t{64} << 20;

  // Feeds a chunk; calls `onEvent` for each complete event. Stops at the first error (and after
  // it, every feed fails). `onEvent` returning false stops early (no error).
  core::Status feed(std::string_view chunk, const std::function<bool(WatchEvent&&)>& onEvent);
  // The stream ended: an error if a partial line is pending.
  core::Status finish() const;

 private:
  std::string pending_;
  bool failed_ = false;
};

// Decodes one line (one event). Exposed for tests and fuzzing.
core::Result<WatchEvent> decodeWatchLine(std::string_view line);

}  // namespace restarter::kube
