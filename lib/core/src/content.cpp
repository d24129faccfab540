#include "restarter/core/content.hpp"

#include "record_entries.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <nlohmann/json.hpp>

namespace restarter::core {

using nlohmann::json;

namespace {

constexpr char kHex[] = "0123456789abcdef";

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// OpenSSL's HMAC implementation, fetched once for the process: a fetch searches the providers under
// a lock, and a digest is computed per key of every cached object, on the reflector threads and in
// the webhook's lookups alike. Thread-safe (a function-local static); never freed, as it lives as
// long as the process (reachable, so no leak report).
EVP_MAC* hmacAlgorithm() {
  static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  return mac;
}

// Feeds a SHA-256 context (unkeyed) or an HMAC-SHA256 context (keyed) with length-prefixed
// fields, so that no two different contents give the same byte stream ("ab"+"c" and "a"+"bc"
// differ by their prefixes).
class Hasher {
 public:
  Hasher() : md_(EVP_MD_CTX_new()) {
    ok_ = md_ != nullptr && EVP_DigestInit_ex(md_, EVP_sha256(), nullptr) == 1;
  }
  explicit Hasher(const DigestKey& key) {
    if (EVP_MAC* mac = hmacAlgorithm(); mac != nullptr) mac_ = EVP_MAC_CTX_new(mac);
    char digestName[] = "SHA256";
    const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digestName, 0),
                                 OSSL_PARAM_construct_end()};
    const auto* bytes = reinterpret_cast<const unsigned char*>(key.bytes().data());
    ok_ = mac_ != nullptr && EVP_MAC_init(mac_, bytes, key.bytes().size(), params) == 1;
  }
  ~Hasher() {
    EVP_MD_CTX_free(md_);
    EVP_MAC_CTX_free(mac_);
  }
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  void field(std::string_view bytes) {
    std::uint64_t length = bytes.size();
    unsigned char prefix[8];
    for (int i = 7; i >= 0; --i) {
      prefix[i] = static_cast<unsigned char>(length & 0xff);
      length >>= 8;
    }
    ok_ = ok_ && update(prefix, sizeof prefix) && update(bytes.data(), bytes.size());
  }

  std::optional<ContentDigest> finish() {
    unsigned char full[EVP_MAX_MD_SIZE];
    std::size_t length = 0;
    if (!ok_) return std::nullopt;
    if (mac_ != nullptr) {
      if (EVP_MAC_final(mac_, full, &length, sizeof full) != 1) return std::nullopt;
    } else {
      unsigned int mdLength = 0;
      if (EVP_DigestFinal_ex(md_, full, &mdLength) != 1) return std::nullopt;
      length = mdLength;
    }
    if (length < 16) return std::nullopt;
    ContentDigest out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = full[i];
    return out;
  }

 private:
  bool update(const void* data, std::size_t size) {
    if (mac_ != nullptr) return EVP_MAC_update(mac_, static_cast<const unsigned char*>(data), size) == 1;
    return EVP_DigestUpdate(md_, data, size) == 1;
  }

  EVP_MD_CTX* md_ = nullptr;
  EVP_MAC_CTX* mac_ = nullptr;
  bool ok_ = false;
};

// "h2." (or "h1.") + key id + "." + 32 hex digits: a keyed digest's text in the record.
constexpr std::string_view kObjectTag = "h2.";
constexpr std::string_view kContentTag = "h1.";
constexpr std::string_view kKeysTag = "k2.";
constexpr std::size_t kKeyIdSize = 8;

// Hashes the string map object[field] (absent or null: empty) as its name, its size and each entry.
Status hashMap(Hasher& hasher, const json& object, const char* field) {
  hasher.field(field);
  const auto it = object.find(field);
  if (it == object.end() || it->is_null()) {
    hasher.field("0");
    return okStatus();
  }
  if (!it->is_object()) {
    return makeError(ErrorKind::InvalidInput,
                     std::string(field) + ": expected an object, got " + it->type_name());
  }
  hasher.field(std::to_string(it->size()));
  for (const auto& [key, value] : it->items()) {  // nlohmann's object is ordered by key
    if (!value.is_string()) {
      // The key is a name, not content, but still say nothing about it beyond the type.
      return makeError(ErrorKind::InvalidInput,
                       std::string(field) + ": expected string values, got " + value.type_name());
    }
    hasher.field(key);
    hasher.field(value.get_ref<const std::string&>());
  }
  return okStatus();
}

}  // namespace

Result<ContentAwareness> parseContentAwareness(std::string_view text) {
  if (text == "off") return ContentAwareness::Off;
  if (text == "configmaps") return ContentAwareness::ConfigMaps;
  if (text == "all") return ContentAwareness::All;
  return makeError(ErrorKind::InvalidInput, "\"" + std::string(text) + "\" is not one of configmaps, all, off");
}

const char* contentAwarenessName(ContentAwareness awareness) noexcept {
  switch (awareness) {
    case ContentAwareness::Off: return "off";
    case ContentAwareness::ConfigMaps: return "configmaps";
    case ContentAwareness::All: return "all";
  }
  return "configmaps";
}

bool readsContent(ContentAwareness awareness, RefKind kind) noexcept {
  return awareness == ContentAwareness::All ||
         (awareness == ContentAwareness::ConfigMaps && kind == RefKind::ConfigMap);
}

std::string formatDigest(const ContentDigest& digest) {
  std::string out;
  out.reserve(digest.size() * 2);
  for (std::uint8_t byte : digest) {
    out.push_back(kHex[byte >> 4]);
    out.push_back(kHex[byte & 0x0f]);
  }
  return out;
}

std::optional<ContentDigest> parseDigest(std::string_view text) {
  ContentDigest out{};
  if (text.size() != out.size() * 2) return std::nullopt;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int high = hexValue(text[2 * i]);
    const int low = hexValue(text[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    out[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  return out;
}

namespace {

Result<ContentDigest> hashContent(Hasher& hasher, const json& object, RefKind kind) {
  if (!object.is_object()) {
    return makeError(ErrorKind::InvalidInput,
                     std::string("object: expected an object, got ") + object.type_name());
  }
  if (Status s = hashMap(hasher, object, "data"); !s) return std::move(s).error();
  if (Status s = hashMap(hasher, object, "binaryData"); !s) return std::move(s).error();
  if (kind == RefKind::Secret) {
    hasher.field("type");
    const auto type = object.find("type");
    if (type != object.end() && !type->is_null() && !type->is_string()) {
      return makeError(ErrorKind::InvalidInput,
                       std::string("type: expected a string, got ") + type->type_name());
    }
    hasher.field(type == object.end() || type->is_null() ? std::string_view()
                                                         : type->get_ref<const std::string&>());
  }
  auto digest = hasher.finish();
  if (!digest) return makeError(ErrorKind::Internal, "hashing the content failed");
  return *digest;
}

}  // namespace

std::optional<DigestKey> DigestKey::fromBytes(std::string_view bytes) {
  if (bytes.size() != kDigestKeySize) return std::nullopt;
  Hasher idHasher;
  idHasher.field("restarter digest key id");
  idHasher.field(bytes);
  const auto id = idHasher.finish();
  if (!id) return std::nullopt;
  DigestKey key;
  key.bytes_ = std::string(bytes);
  key.id_ = formatDigest(*id).substr(0, kKeyIdSize);
  return key;
}

DigestKey DigestKey::withPrevious(const DigestKey& previous) const {
  DigestKey out;
  out.bytes_ = bytes_;
  out.id_ = id_;
  if (previous.id_ != id_) {
    DigestKey bare;
    bare.bytes_ = previous.bytes_;
    bare.id_ = previous.id_;
    out.previous_ = std::make_shared<const DigestKey>(std::move(bare));
  }
  return out;
}

Result<ContentDigest> contentDigest(const json& object, RefKind kind) {
  Hasher hasher;
  return hashContent(hasher, object, kind);
}

Result<ContentDigest> keyedContentDigest(const json& object, RefKind kind, const DigestKey& key) {
  Hasher hasher(key);
  return hashContent(hasher, object, kind);
}

Result<ContentDigest> objectContentDigest(const json& object, RefKind kind, const DigestKey& key) {
  if (!object.is_object()) {
    return makeError(ErrorKind::InvalidInput,
                     std::string("object: expected an object, got ") + object.type_name());
  }
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) {
    return makeError(ErrorKind::InvalidInput, "metadata: expected an object");
  }
  Hasher hasher(key);
  // The object's identity first, each field length-prefixed: the same content in another object
  // (another namespace, name or uid) gives another digest.
  for (const char* field : {"namespace", "name", "uid"}) {
    const auto it = metadata->find(field);
    if (it == metadata->end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
      return makeError(ErrorKind::InvalidInput,
                       std::string("metadata.") + field + ": expected a non-empty string");
    }
    hasher.field(it->get_ref<const std::string&>());
  }
  return hashContent(hasher, object, kind);
}

std::string contentRecordKey(RefKind kind, std::string_view name) {
  std::string key(refKindName(kind));
  key += '/';
  key += name;
  return key;
}

ContentRecords parseContentRecords(std::string_view value) {
  ContentRecords out;
  // <kind>/<name>=<uid>/<rv>/<digest>
  detail::forEachRecordEntry(value, [&out](std::string_view key, std::string_view rest) {
    const std::size_t lastSlash = rest.rfind('/');
    if (lastSlash == std::string_view::npos) return;
    const std::string_view version = rest.substr(0, lastSlash);
    if (!detail::isVersionText(version)) return;
    std::string_view digestText = rest.substr(lastSlash + 1);
    std::string keyId;
    DigestScheme scheme = DigestScheme::Unkeyed;
    if (digestText.substr(0, kObjectTag.size()) == kObjectTag) scheme = DigestScheme::H2;
    if (digestText.substr(0, kContentTag.size()) == kContentTag) scheme = DigestScheme::H1;
    if (digestText.substr(0, kKeysTag.size()) == kKeysTag) scheme = DigestScheme::K2;
    if (scheme != DigestScheme::Unkeyed) {
      digestText.remove_prefix(kObjectTag.size());  // every tag has the same size
      if (digestText.size() <= kKeyIdSize || digestText[kKeyIdSize] != '.') return;
      keyId = std::string(digestText.substr(0, kKeyIdSize));
      if (!std::all_of(keyId.begin(), keyId.end(), [](char c) { return hexValue(c) >= 0; })) return;
      digestText.remove_prefix(kKeyIdSize + 1);
    }
    const auto digest = parseDigest(digestText);
    if (!digest) return;
    out.insert_or_assign(std::string(key),
                         ContentRecord{std::string(version), *digest, std::move(keyId), scheme});
  });
  return out;
}

std::string formatContentRecords(const ContentRecords& records) {
  std::string out;
  for (const auto& [key, record] : records) {
    if (!out.empty()) out += ',';
    out += key;
    out += '=';
    out += record.version;
    out += '/';
    if (record.scheme != DigestScheme::Unkeyed) {
      out += record.scheme == DigestScheme::H2   ? kObjectTag
             : record.scheme == DigestScheme::K2 ? kKeysTag
                                                 : kContentTag;
      out += record.keyId;
      out += '.';
    }
    out += formatDigest(record.digest);
  }
  return out;
}

TrackedValue decideTrackedValue(const std::optional<std::string>& templateValue,
                                const std::optional<ContentRecord>& recorded, const std::string& uid,
                                const std::string& resourceVersion, const std::optional<ContentDigest>& digest,
                                const std::string& keyId, const std::vector<OtherDigest>& others) {
  // `digest` is h2 under `keyId`, or unkeyed when there is no key (explain-restart without it).
  return decideTrackedValue(templateValue, recorded, uid, resourceVersion, digest, keyId,
                            keyId.empty() ? DigestScheme::Unkeyed : DigestScheme::H2, others);
}

TrackedValue decideTrackedValue(const std::optional<std::string>& templateValue,
                                const std::optional<ContentRecord>& recorded, const std::string& uid,
                                const std::string& resourceVersion, const std::optional<ContentDigest>& digest,
                                const std::string& keyId, DigestScheme scheme,
                                const std::vector<OtherDigest>& others) {
  if (keyId.empty()) scheme = DigestScheme::Unkeyed;
  TrackedValue out;
  out.value = uid + "/" + resourceVersion;
  if (digest) out.record = ContentRecord{out.value, *digest, keyId, scheme};
  if (!templateValue || *templateValue == out.value || !digest || !recorded) return out;
  // Another version (of the same object, or of one re-created under the same name), content
  // known: keep the template's version when the content recorded for exactly that version is the
  // content now. The pods see the same files and values either way.
  const std::string& held = *templateValue;
  // Not the legacy marker, not garbage.
  if (!detail::isVersionText(held) || recorded->version != held) return out;
  // Compared only with the digest of the entry's own scheme and key; none: cannot be compared.
  bool same = false;
  if (recorded->scheme == scheme && recorded->keyId == keyId) {
    same = recorded->digest == *digest;
  } else {
    same = std::any_of(others.begin(), others.end(), [&recorded](const OtherDigest& other) {
      return other.scheme == recorded->scheme && other.keyId == recorded->keyId &&
             other.digest == recorded->digest;
    });
  }
  if (!same) return out;
  out.value = held;
  out.metadataOnly = true;
  // The content at `held` is the content now, so its digest is `digest`: an entry of an older
  // scheme or key comes back as h2 under `keyId`.
  out.record = ContentRecord{held, *digest, keyId, scheme};
  return out;
}

bool recordNeedsRekey(const ContentRecords& records, const std::string& keyId) {
  return std::any_of(records.begin(), records.end(), [&keyId](const auto& entry) {
    const ContentRecord& record = entry.second;
    const bool current = record.scheme == DigestScheme::H2 || record.scheme == DigestScheme::K2;
    return record.scheme == DigestScheme::Unkeyed || (!keyId.empty() && (!current || record.keyId != keyId));
  });
}

std::uint64_t keyNameHash(std::string_view key) {
  Hasher hasher;
  hasher.field("restarter key name");
  hasher.field(key);
  const auto digest = hasher.finish();
  std::uint64_t out = 0;
  if (digest) {
    for (std::size_t i = 0; i < 8; ++i) out = (out << 8) | (*digest)[i];
  }
  return out;
}

std::optional<KeyDigests> objectKeyDigests(const json& object, const DigestKey& key) {
  if (!object.is_object()) return std::nullopt;
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return std::nullopt;
  std::string identity[3];
  std::size_t i = 0;
  for (const char* field : {"namespace", "name", "uid"}) {
    const auto it = metadata->find(field);
    if (it == metadata->end() || !it->is_string() || it->get_ref<const std::string&>().empty())
      return std::nullopt;
    identity[i++] = it->get_ref<const std::string&>();
  }
  KeyDigests out;
  for (const char* mapName : {"data", "binaryData"}) {
    const auto map = object.find(mapName);
    if (map == object.end() || map->is_null()) continue;
    if (!map->is_object()) return std::nullopt;
    if (out.size() + map->size() > kMaxKeyDigests) return std::nullopt;
    for (const auto& [name, value] : map->items()) {
      if (!value.is_string()) return std::nullopt;
      Hasher hasher(key);
      for (const std::string& part : identity) hasher.field(part);
      hasher.field(mapName);
      hasher.field(name);
      hasher.field(value.get_ref<const std::string&>());
      const auto digest = hasher.finish();
      if (!digest) return std::nullopt;
      KeyDigest entry{keyNameHash(name), 0};
      for (std::size_t b = 0; b < 8; ++b) entry.value = (entry.value << 8) | (*digest)[b];
      out.push_back(entry);
    }
  }
  std::sort(out.begin(), out.end(), [](const KeyDigest& a, const KeyDigest& b) { return a.name < b.name; });
  return out;
}

std::optional<ContentDigest> readKeysDigest(const KeyDigests& digests, const std::vector<std::string>& keys) {
  Hasher hasher;
  hasher.field("restarter read keys");
  hasher.field(std::to_string(keys.size()));
  for (const std::string& name : keys) {
    hasher.field(name);
    const std::uint64_t hash = keyNameHash(name);
    const auto it =
        std::lower_bound(digests.begin(), digests.end(), hash,
                         [](const KeyDigest& entry, std::uint64_t wanted) { return entry.name < wanted; });
    if (it == digests.end() || it->name != hash) {
      hasher.field("absent");
      continue;
    }
    char value[8];
    for (int b = 7; b >= 0; --b) value[7 - b] = static_cast<char>((it->value >> (8 * b)) & 0xff);
    hasher.field("present");
    hasher.field(std::string_view(value, sizeof value));
  }
  return hasher.finish();
}

}  // namespace restarter::core
