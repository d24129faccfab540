#pragma once
// Text helpers for strings that end up in JSON sent to the apiserver. nlohmann/json refuses to
// serialise invalid UTF-8 (it throws), so a length limit must never cut a character in two.

#include <cstddef>
#include <string>
#include <string_view>

namespace restarter::core {

// The longest prefix of `text` of at most `maxBytes` bytes that does not end inside a UTF-8
// sequence (continuation bytes 10xxxxxx are dropped back to the start of their character). Bytes
// that are not UTF-8 at all are kept as they are: this only promises not to break a valid text.
std::string truncateUtf8(std::string_view text, std::size_t maxBytes);

}  // namespace restarter::core
