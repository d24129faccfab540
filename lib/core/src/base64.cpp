#include "restarter/core/base64.hpp"

#include <cstdint>

namespace restarter::core {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// The 6-bit value of an alphabet character, or -1.
int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool isSkipped(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

std::string base64Encode(std::string_view data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  auto byte = [&](std::size_t at) { return std::uint32_t{static_cast<unsigned char>(data[at])}; };
  for (; i + 2 < data.size(); i += 3) {
    const std::uint32_t n = (byte(i) << 16) | (byte(i + 1) << 8) | byte(i + 2);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i < data.size()) {
    const bool two = i + 1 < data.size();
    const std::uint32_t n = (byte(i) << 16) | (two ? byte(i + 1) << 8 : std::uint32_t{0});
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += two ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64Decode(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t buffer = 0;
  std::size_t count = 0;    // characters read, padding included
  std::size_t padding = 0;  // "=" read
  for (char c : text) {
    if (isSkipped(c)) continue;
    ++count;
    if (c == '=') {
      // Only the last one or two characters of a quartet: "xx==" or "xxx=".
      if (++padding > 2 || (count - 1) % 4 < 2) return std::nullopt;
      continue;
    }
    const int value = sextet(c);
    if (value < 0 || padding > 0) return std::nullopt;  // not base64, or data after padding
    buffer = (buffer << 6) | static_cast<std::uint32_t>(value);
    if (count % 4 == 0) {
      out += static_cast<char>((buffer >> 16) & 0xFF);
      out += static_cast<char>((buffer >> 8) & 0xFF);
      out += static_cast<char>(buffer & 0xFF);
      buffer = 0;
    }
  }
  if (count % 4 != 0) return std::nullopt;  // unpadded, or cut short
  if (padding == 2) {                       // "xx==": 12 bits read, one byte
    out += static_cast<char>((buffer >> 4) & 0xFF);
  } else if (padding == 1) {  // "xxx=": 18 bits read, two bytes
    out += static_cast<char>((buffer >> 10) & 0xFF);
    out += static_cast<char>((buffer >> 2) & 0xFF);
  }
  return out;
}

}  // namespace restarter::core
