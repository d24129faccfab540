#include "base64.hpp"

#include <cstdint>

namespace restarter::kube {

std::optional<std::string> base64Decode(std::string_view text) {
  std::string out;
  std::uint32_t buffer = 0;
  int bits = 0;
  bool padding = false;
  for (char c : text) {
    int value = -1;
    if (c >= 'A' && c <= 'Z')
      value = c - 'A';
    else if (c >= 'a' && c <= 'z')
      value = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      value = c - '0' + 52;
    else if (c == '+')
      value = 62;
    else if (c == '/')
      value = 63;
    else if (c == '=') {
      padding = true;
      continue;
    } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
      continue;
    else
      return std::nullopt;
    if (padding) return std::nullopt;  // data after padding
    buffer = (buffer << 6) | static_cast<std::uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  if (bits >= 6) return std::nullopt;  // a dangling sextet is not valid base64
  return out;
}

std::string base64Encode(std::string_view data) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    std::uint32_t n = (std::uint32_t{static_cast<unsigned char>(data[i])} << 16) |
                      (std::uint32_t{static_cast<unsigned char>(data[i + 1])} << 8) |
                      std::uint32_t{static_cast<unsigned char>(data[i + 2])};
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (i < data.size()) {
    std::uint32_t n = std::uint32_t{static_cast<unsigned char>(data[i])} << 16;
    if (i + 1 < data.size()) n |= std::uint32_t{static_cast<unsigned char>(data[i + 1])} << 8;
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < data.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace restarter::kube
