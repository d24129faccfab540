#pragma once
// Content-aware restarts (docs/architecture.md, "Content-aware restarts"): what a ConfigMap's or
// Secret's content is, its fixed-size digest, the record of digests a workload carries on its own
// metadata, and the one decision of which `<uid>/<resourceVersion>` a tracked reference's template
// annotation holds.
//
// Content: `data` and `binaryData` (every key and value), and for a Secret its `type`. Nothing in
// `metadata` counts: a label, an annotation, managedFields or last-applied-configuration changes
// the resourceVersion but not what a pod sees.
//
// Keyed digests (docs/architecture.md, "Keyed digests"): the digest written anywhere is an
// HMAC-SHA256 under a 32-byte key restarter keeps in a Secret of its own (DigestKey), over the
// object's namespace, name and uid and then its content (h2), so a workload's metadata or a webhook
// answer never lets anyone test guesses of a Secret's content: equal contents in two objects never
// give equal digests, and no caller can make restarter hash a guess under a victim's identity. The
// h1 digest (the same HMAC over the content alone, which releases before this one wrote) and the
// plain SHA-256 (the unkeyed digest, written only by trees before keys, never released) are
// computed only to recognise old entries and are never written.
//
// The record: the workload metadata annotation `restarter.stackable.tech/content-digests` (not the
// pod template, so writing it restarts nothing), value a comma-separated list, sorted, of
//   <kind>/<name>=<uid>/<resourceVersion>/h2.<key id>.<digest>    per object (written)
//   <kind>/<name>=<uid>/<resourceVersion>/k2.<key id>.<digest>    the keys read (written)
//   <kind>/<name>=<uid>/<resourceVersion>/h1.<key id>.<digest>    content only (read, rewritten as h2)
//   <kind>/<name>=<uid>/<resourceVersion>/<digest>                unkeyed (read, never compared)
// e.g. `configmap/app=0b0e...-uid/41/h2.9f86d081.6c2f...`: "the object <kind>/<name> at
// <uid>/<resourceVersion> had content <digest>". The tag (`h2.`, `h1.`, or none) says which kind of
// digest an entry holds; an entry with a tag this release does not know is no entry. An entry only
// counts while the template still holds exactly that `<uid>/<resourceVersion>`, so a record someone
// else left stale never hides a change. An entry that does not parse is no entry: a broken record
// can cost a restart, never hide one.
//
// Pure: no I/O. The content is hashed and dropped; no function here puts content into an error
// message (they name fields and JSON types only).

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "restarter/core/references.hpp"
#include "restarter/core/result.hpp"

namespace restarter::core {

// Which kinds' content is read (serve-controller and serve-webhook --content-aware): both by
// default (All: a Secret rewritten with the same data, as External Secrets Operator does at every
// refresh, restarts nothing; the digests are keyed, so a record tells nothing of a Secret's data);
// ConfigMaps only, for clusters that keep Secret data away from restarter; Off reads nothing but
// metadata (every new resourceVersion rolls, as commons-operator).
enum class ContentAwareness { Off, ConfigMaps, All };
// "off", "configmaps", "all"; InvalidInput otherwise (the message lists the choices).
Result<ContentAwareness> parseContentAwareness(std::string_view text);
const char* contentAwarenessName(ContentAwareness awareness) noexcept;
bool readsContent(ContentAwareness awareness, RefKind kind) noexcept;

// The first 128 bits of the SHA-256 (unkeyed) or HMAC-SHA256 (keyed: h1, h2) of an object's content
// (see contentDigest). Fixed size, so a cache of 10,000 objects holds 160 KB per digest kept whatever
// their content.
using ContentDigest = std::array<std::uint8_t, 16>;

// The key of keyed digests: exactly kDigestKeySize bytes (random, made by the controller) and its
// id, 8 hex digits of the SHA-256 of a fixed label and the key (names the key in records, so
// entries under another key are told from changed content; says nothing about the key). An
// immutable value, safe to share between threads.
inline constexpr std::size_t kDigestKeySize = 32;
//
// During a rotation the key carries the one it replaced (previous(), kept in the key Secret's
// data key `previous` until no record uses it): digests are still computed under it, so that an
// entry written under it is compared under its own key (docs/architecture.md, "Keyed digests").
class DigestKey {
 public:
  // nullopt unless `bytes` has exactly kDigestKeySize bytes (or hashing fails).
  static std::optional<DigestKey> fromBytes(std::string_view bytes);
  const std::string& bytes() const noexcept { return bytes_; }
  const std::string& id() const noexcept { return id_; }
  // This key with `previous` (without its own previous) as the key it replaced; the same key
  // without a previous one when `previous` has this key's id.
  DigestKey withPrevious(const DigestKey& previous) const;
  // The key this one replaced, while a rotation is under way; nullptr otherwise.
  const DigestKey* previous() const noexcept { return previous_.get(); }

 private:
  std::string bytes_;
  std::string id_;
  std::shared_ptr<const DigestKey> previous_;  // immutable once set
};

// 32 lower-case hex digits.
std::string formatDigest(const ContentDigest& digest);
// The inverse; nullopt for anything but exactly 32 hex digits (either case).
std::optional<ContentDigest> parseDigest(std::string_view text);

// The digest of a ConfigMap's or Secret's content (`object` is the whole object as the API returns
// it): length-prefixed `data` entries, then `binaryData` entries, each in key order, then (Secrets
// only) `type`. Absent or null fields are empty. InvalidInput when a field has the wrong type
// (the message names the field and the JSON type, never a value).
Result<ContentDigest> contentDigest(const nlohmann::json& object, RefKind kind);
// The same bytes under HMAC-SHA256 with `key`: the h1 digest (content only), computed to compare
// the entries releases before this one wrote; never written.
Result<ContentDigest> keyedContentDigest(const nlohmann::json& object, RefKind kind, const DigestKey& key);
// The digest restarter writes (h2): HMAC-SHA256 with `key` of the length-prefixed
// `metadata.namespace`, `metadata.name` and `metadata.uid` of `object`, then the content bytes as
// above. InvalidInput when one of the three is not a non-empty string (an object the API returns
// always has them).
Result<ContentDigest> objectContentDigest(const nlohmann::json& object, RefKind kind, const DigestKey& key);

// Which kind of digest a record entry or a computed digest is (the record's tag): K2 is the digest
// of the keys a reference reads (readKeysDigest), the others of the whole content.
enum class DigestScheme : std::uint8_t { Unkeyed, H1, H2, K2 };

// Key-level digests (docs/architecture.md, "Key-level tracking"): per key of `data` and
// `binaryData`, 8 bytes naming the key (keyNameHash) and 8 bytes of the HMAC-SHA256 under the
// digest key of the object's namespace, name and uid, the map the key is in, the key and its
// value. Sorted by name. 16 bytes a key whatever the value's size: the controller's cache keeps
// them for objects of at most kMaxKeyDigests keys (an object with more is compared whole).
struct KeyDigest {
  std::uint64_t name = 0;
  std::uint64_t value = 0;
  bool operator==(const KeyDigest&) const = default;
};
using KeyDigests = std::vector<KeyDigest>;
inline constexpr std::size_t kMaxKeyDigests = 1024;
// The first 8 bytes of the SHA-256 of a fixed label and `key`.
std::uint64_t keyNameHash(std::string_view key);
// The key digests of a ConfigMap's or Secret's `data` and `binaryData` under `key`; nullopt when
// it has more than kMaxKeyDigests keys, a field has the wrong type or an identity field is missing.
std::optional<KeyDigests> objectKeyDigests(const nlohmann::json& object, const DigestKey& key);
// The K2 digest of what a reference reading `keys` (sorted, unique) sees of an object whose key
// digests are `digests`: the SHA-256 of a fixed label, the number of keys and, per key, its name
// and its value digest or an absent marker. The same keys with the same values give the same
// digest; a key read that appears or disappears changes it. Keyed through the value digests.
// nullopt only when hashing fails (the caller then compares the whole content).
std::optional<ContentDigest> readKeysDigest(const KeyDigests& digests, const std::vector<std::string>& keys);

// One entry of the record: the content `digest` the object had at `version` (`<uid>/<rv>`), of
// `scheme`, keyed with the key whose id is `keyId` (empty for Unkeyed).
struct ContentRecord {
  std::string version;
  ContentDigest digest{};
  std::string keyId;
  DigestScheme scheme = DigestScheme::H2;
  bool operator==(const ContentRecord&) const = default;
};
// By "<kind>/<name>" (refKindName, the object's name).
using ContentRecords = std::map<std::string, ContentRecord>;

// A digest of an object's content other than the one written: of another scheme or under another
// key, so that an entry of that scheme and key can still be compared (migration, rotation).
struct OtherDigest {
  ContentDigest digest{};
  std::string keyId;
  DigestScheme scheme = DigestScheme::H1;
  bool operator==(const OtherDigest&) const = default;
};

std::string contentRecordKey(RefKind kind, std::string_view name);
// Entries that do not parse are skipped (see the file comment). Never fails.
ContentRecords parseContentRecords(std::string_view value);
// The annotation value: entries sorted by key, joined by ",". Empty for no entries.
std::string formatContentRecords(const ContentRecords& records);

// The decision for a present, tracked (not ignored) object.
struct TrackedValue {
  std::string value;  // the template annotation value to hold: "<uid>/<resourceVersion>"
  // The template keeps an older version of the same object because the content at that version
  // (recorded) equals the content now: metadata changed, or content changed and changed back
  // before the controller acted; no restart either way.
  bool metadataOnly = false;
  // The entry the record should hold for this reference: nullopt when the content is not known
  // (content-aware off for the kind, or a digest that could not be computed).
  std::optional<ContentRecord> record;
};

// `scheme`: the scheme of `digest` (H2, or K2 for a reference reading some keys; Unkeyed when
// `keyId` is empty); the overload without it takes H2 (Unkeyed for an empty `keyId`).
// `templateValue`: what the pod template holds for the reference now (nullopt: nothing).
// `recorded`: the record's entry for the reference, if any. `uid`, `resourceVersion`: the object
// now. `digest`: its h2 digest now under the key `keyId` (empty `keyId`: its unkeyed digest, as
// explain-restart computes it without the key), nullopt when not read; `others`: its digests of
// other schemes or keys, which is how an entry of such a scheme and key is compared (migration from
// h1, a rotated key).
//
//   the template holds <uid>/<rv> of now           -> keep it
//   no template value, or not "<uid>/<rv>"          -> now (added: a restart)
//   other version, content not read                 -> now (as commons-operator: every version rolls)
//   other version, no entry for the template's
//     exact version (migration, stale record)       -> now (as commons-operator; records it)
//   other version, entry for the template's version
//     with the same digest as now                   -> keep the template's (metadata-only); also
//                                                      for another uid: an object deleted and
//                                                      re-created with the same content
//   other version, entry with another digest        -> now (the content changed)
//   other version, entry of a scheme and key
//     neither `digest` nor `others` has            -> now (cannot be compared)
// An entry is compared only with the digest of its own scheme and key: `digest` when they are
// `keyId`'s (h2, or unkeyed for an empty `keyId`), else the one of `others` that has them. Since
// an h2 digest covers the uid, an object deleted and re-created (another uid) never matches its
// predecessor's entry: it rolls. The record entry returned is always `digest` under `keyId`: an
// h1 entry, or one under the previous key, whose content still matches comes back as h2 under
// `keyId` for the same version (migration, rotation: no restart).
TrackedValue decideTrackedValue(const std::optional<std::string>& templateValue,
                                const std::optional<ContentRecord>& recorded, const std::string& uid,
                                const std::string& resourceVersion, const std::optional<ContentDigest>& digest,
                                const std::string& keyId, const std::vector<OtherDigest>& others);
TrackedValue decideTrackedValue(const std::optional<std::string>& templateValue,
                                const std::optional<ContentRecord>& recorded, const std::string& uid,
                                const std::string& resourceVersion, const std::optional<ContentDigest>& digest,
                                const std::string& keyId, DigestScheme scheme,
                                const std::vector<OtherDigest>& others);

// Whether the record holds an unkeyed entry, or (for a non-empty `keyId`) one that is not h2 under
// `keyId`: the controller then rewrites the record alone (docs/architecture.md, "Keyed digests").
bool recordNeedsRekey(const ContentRecords& records, const std::string& keyId);

}  // namespace restarter::core
