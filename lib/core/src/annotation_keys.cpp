#include "restarter/core/annotation_keys.hpp"

#include <array>

#include <openssl/evp.h>

#include "restarter/core/constants.hpp"

namespace restarter::core {

namespace {

bool isAlphanumeric(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool isNameChar(char c) noexcept { return isAlphanumeric(c) || c == '-' || c == '.' || c == '_'; }

// Lower-case hex of the SHA-256 of `data`. EVP_Digest with SHA-256 cannot fail for in-memory
// input short of memory exhaustion; should it, the digest stays zero, still deterministic.
std::string sha256Hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1) {
    length = 32;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(length * 2);
  for (unsigned int i = 0; i < length; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0x0f];
  }
  return out;
}

std::string_view prefixFor(RefKind kind) noexcept {
  return kind == RefKind::ConfigMap ? kConfigMapAnnotationPrefix : kSecretAnnotationPrefix;
}

}  // namespace

bool isValidQualifiedName(std::string_view name) noexcept {
  if (name.empty() || name.size() > kMaxQualifiedNameLength) return false;
  if (!isAlphanumeric(name.front()) || !isAlphanumeric(name.back())) return false;
  for (char c : name) {
    if (!isNameChar(c)) return false;
  }
  return true;
}

std::string annotationNameFor(std::string_view objectName) {
  if (isValidQualifiedName(objectName) && objectName.find('_') == std::string_view::npos) {
    return std::string(objectName);
  }

  const std::string hash = sha256Hex(objectName).substr(0, kMappedKeyHashDigits);
  constexpr std::size_t kPrefixBudget = kMaxQualifiedNameLength - kMappedKeyHashDigits - 1;
  std::string prefix;
  for (char c : objectName.substr(0, kPrefixBudget)) {
    prefix += (isAlphanumeric(c) || c == '-' || c == '.') ? c : '-';
  }
  const auto first = prefix.find_first_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
  // Nothing alphanumeric to keep: "h" stands in, so every mapped name has the '_' marker.
  if (first == std::string::npos) return "h_" + hash;
  const auto last = prefix.find_last_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789");
  return prefix.substr(first, last - first + 1) + "_" + hash;
}

std::string templateAnnotationKey(RefKind kind, std::string_view objectName) {
  std::string key(prefixFor(kind));
  key += '/';
  key += annotationNameFor(objectName);
  return key;
}

std::optional<TemplateKey> parseTemplateAnnotationKey(std::string_view key) {
  const auto slash = key.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view prefix = key.substr(0, slash);
  const std::string_view name = key.substr(slash + 1);
  RefKind kind;
  if (prefix == kConfigMapAnnotationPrefix) {
    kind = RefKind::ConfigMap;
  } else if (prefix == kSecretAnnotationPrefix) {
    kind = RefKind::Secret;
  } else {
    return std::nullopt;
  }
  return TemplateKey{kind, std::string(name), name.find('_') != std::string_view::npos};
}

}  // namespace restarter::core
