#include "restarter/cache/key_view.hpp"

#include <algorithm>
#include <array>
#include <cstddef>

namespace restarter::cache {
namespace {

// The pieces a key's string is made of, in order: "<namespace>", "/", "<name>" (or "<name>" alone).
using Pieces = std::array<std::string_view, 3>;

Pieces piecesOf(const KeyView& key) noexcept {
  if (key.namespace_.empty()) return {key.name, {}, {}};
  return {key.namespace_, "/", key.name};
}

// A reader over the pieces as one string: the current piece and the offset in it.
struct Cursor {
  const Pieces& pieces;
  std::size_t piece = 0;
  std::size_t offset = 0;

  // Skips finished and empty pieces; false when the whole string has been read.
  bool more() noexcept {
    while (piece < pieces.size() && offset == pieces[piece].size()) {
      ++piece;
      offset = 0;
    }
    return piece < pieces.size();
  }
  std::string_view rest() const noexcept { return pieces[piece].substr(offset); }
};

const nlohmann::json* metadataField(const nlohmann::json& object, const char* field) noexcept {
  if (!object.is_object()) return nullptr;
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return nullptr;
  auto value = metadata->find(field);
  return value == metadata->end() || !value->is_string() ? nullptr : &*value;
}

std::string_view stringView(const nlohmann::json* value) noexcept {
  return value == nullptr ? std::string_view() : std::string_view(value->get_ref<const std::string&>());
}

}  // namespace

KeyView splitKey(std::string_view key) noexcept {
  const std::size_t slash = key.find('/');
  if (slash == std::string_view::npos) return {{}, key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

KeyView keyViewOf(const nlohmann::json& object) noexcept {
  return {stringView(metadataField(object, "namespace")), stringView(metadataField(object, "name"))};
}

std::strong_ordering compareKeys(const KeyView& a, const KeyView& b) noexcept {
  const Pieces piecesA = piecesOf(a);
  const Pieces piecesB = piecesOf(b);
  Cursor left{piecesA};
  Cursor right{piecesB};
  while (true) {
    const bool leftMore = left.more();
    const bool rightMore = right.more();
    if (!leftMore || !rightMore) return leftMore <=> rightMore;  // the shorter string sorts first
    const std::string_view x = left.rest();
    const std::string_view y = right.rest();
    const std::size_t n = std::min(x.size(), y.size());
    if (const int c = x.substr(0, n).compare(y.substr(0, n)); c != 0) return c <=> 0;
    left.offset += n;
    right.offset += n;
  }
}

}  // namespace restarter::cache
