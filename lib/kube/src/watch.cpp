#include "restarter/kube/watch.hpp"

#include "restarter/core/json_parse.hpp"

namespace restarter::kube {

const char* watchEventTypeName(WatchEvent::Type type) noexcept {
  switch (type) {
    case WatchEvent::Type::Added: return "ADDED";
    case WatchEvent::Type::Modified: return "MODIFIED";
    case WatchEvent::Type::Deleted: return "DELETED";
    case WatchEvent::Type::Bookmark: return "BOOKMARK";
    case WatchEvent::Type::Error: return "ERROR";
  }
  return "?";
}

core::Result<WatchEvent> decodeWatchLine(std::string_view line) {
  auto parsed = core::parseJson(line, core::JsonLimits{WatchDecoder::kMaxLineBytes, core::kMaxJsonDepth});
  if (!parsed) {
    return core::makeError(core::ErrorKind::InvalidInput, "watch event: " + parsed.error().message);
  }
  nlohmann::json& doc = *parsed;
  if (!doc.is_object()) {
    return core::makeError(core::ErrorKind::InvalidInput, "watch event is not a JSON object");
  }
  auto type = doc.find("type");
  auto object = doc.find("object");
  if (type == doc.end() || !type->is_string()) {
    return core::makeError(core::ErrorKind::InvalidInput, "watch event has no string \"type\"");
  }
  if (object == doc.end() || !object->is_object()) {
    return core::makeError(core::ErrorKind::InvalidInput, "watch event has no \"object\" object");
  }
  const auto& name = type->get_ref<const std::string&>();
  WatchEvent event;
  if (name == "ADDED")
    event.type = WatchEvent::Type::Added;
  else if (name == "MODIFIED")
    event.type = WatchEvent::Type::Modified;
  else if (name == "DELETED")
    event.type = WatchEvent::Type::Deleted;
  else if (name == "BOOKMARK")
    event.type = WatchEvent::Type::Bookmark;
  else if (name == "ERROR")
    event.type = WatchEvent::Type::Error;
  else
    return core::makeError(core::ErrorKind::InvalidInput,
                           "watch event has unknown type \"" + name.substr(0, 64) + "\"");
  event.object = std::move(*object);
  return event;
}

core::Status WatchDecoder::feed(std::string_view chunk, const std::function<bool(WatchEvent&&)>& onEvent) {
  if (failed_) return core::makeError(core::ErrorKind::Internal, "watch decoder already failed");
  std::size_t start = 0;
  while (start < chunk.size()) {
    std::size_t newline = chunk.find('\n', start);
    if (newline == std::string_view::npos) {
      pending_.append(chunk.substr(start));
      if (pending_.size() > kMaxLineBytes) {
        failed_ = true;
        return core::makeError(core::ErrorKind::InvalidInput, "watch event line exceeds 64 MiB");
      }
      break;
    }
    std::string_view piece = chunk.substr(start, newline - start);
    start = newline + 1;
    std::string line;
    std::string_view view = piece;
    if (!pending_.empty()) {
      pending_.append(piece);
      line.swap(pending_);
      view = line;
    }
    if (view.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // blank line
    auto event = decodeWatchLine(view);
    if (!event.ok()) {
      failed_ = true;
      return std::move(event).error();
    }
    if (!onEvent(std::move(event).value())) return core::okStatus();
  }
  return core::okStatus();
}

core::Status WatchDecoder::finish() const {
  if (pending_.find_first_not_of(" \t\r\n") != std::string::npos) {
    return core::makeError(
        core::ErrorKind::InvalidInput,
        "watch stream ended in the middle of an event (" + std::to_string(pending_.size()) + " bytes pending)");
  }
  return core::okStatus();
}

}  // namespace restarter::kube
