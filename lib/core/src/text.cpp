#include "restarter/core/text.hpp"

namespace restarter::core {

std::string truncateUtf8(std::string_view text, std::size_t maxBytes) {
  if (text.size() <= maxBytes) return std::string(text);
  std::size_t end = maxBytes;
  // text[end] is the first byte left out: while it continues a character, that character
  // started inside the prefix and must go too.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end));
}

}  // namespace restarter::core
