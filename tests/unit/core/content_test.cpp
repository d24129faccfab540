#include "restarter/core/content.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include "restarter/testing/builders.hpp"

#include "restarter/core/annotations.hpp"
#include "restarter/core/constants.hpp"

using namespace restarter::core;
using nlohmann::json;

namespace {

json configMap(const json& data, const json& labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", "app"}, {"uid", "u1"}, {"resourceVersion", "1"}, {"labels", labels}}},
          {"data", data}};
}

ContentDigest digestOf(const json& object, RefKind kind = RefKind::ConfigMap) {
  auto digest = contentDigest(object, kind);
  REQUIRE(digest);
  return *digest;
}

const ContentDigest kA = *parseDigest("00112233445566778899aabbccddeeff");
const ContentDigest kB = *parseDigest("ffeeddccbbaa99887766554433221100");

}  // namespace

TEST_CASE("the content digest ignores metadata and changes with every data byte") {
  const ContentDigest base = digestOf(configMap({{"k", "v"}}));
  json relabeled = configMap({{"k", "v"}}, {{"team", "x"}});
  relabeled["metadata"]["resourceVersion"] = "2";
  relabeled["metadata"]["annotations"] = {{"kubectl.kubernetes.io/last-applied-configuration", "{}"}};
  relabeled["metadata"]["managedFields"] = json::array({{{"manager", "helm"}}});
  CHECK(digestOf(relabeled) == base);
  CHECK(digestOf(configMap({{"k", "w"}})) != base);
  CHECK(digestOf(configMap({{"K", "v"}})) != base);
  CHECK(digestOf(configMap({{"k", "v"}, {"l", ""}})) != base);
  // Length prefixes: moving a byte between key and value, or between entries, is a change.
  CHECK(digestOf(configMap({{"ab", "c"}})) != digestOf(configMap({{"a", "bc"}})));
  CHECK(digestOf(configMap({{"a", "b"}, {"c", "d"}})) != digestOf(configMap({{"a", "bcd"}})));
}

TEST_CASE("data and binaryData are distinct and absent equals empty") {
  json inData = configMap({{"k", "dg=="}});
  json inBinary = configMap(nullptr);
  inBinary["binaryData"] = {{"k", "dg=="}};
  CHECK(digestOf(inData) != digestOf(inBinary));
  json none = configMap(nullptr);
  none.erase("data");
  CHECK(digestOf(none) == digestOf(configMap(json::object())));
}

TEST_CASE("a Secret's type is content and a ConfigMap has none") {
  json secret = {
      {"kind", "Secret"}, {"metadata", {{"name", "s"}}}, {"data", {{"k", "dg=="}}}, {"type", "Opaque"}};
  json other = secret;
  other["type"] = "kubernetes.io/tls";
  CHECK(digestOf(secret, RefKind::Secret) != digestOf(other, RefKind::Secret));
  CHECK(digestOf(secret, RefKind::ConfigMap) == digestOf(other, RefKind::ConfigMap));
}

TEST_CASE("malformed content is an error that names no content") {
  auto badValue = contentDigest(configMap({{"secretkey", 42}}), RefKind::ConfigMap);
  REQUIRE_FALSE(badValue);
  CHECK(badValue.error().kind == ErrorKind::InvalidInput);
  CHECK(badValue.error().describe().find("secretkey") == std::string::npos);
  json badData = configMap(nullptr);
  badData["data"] = "s3cr3t";
  auto notObject = contentDigest(badData, RefKind::Secret);
  REQUIRE_FALSE(notObject);
  CHECK(notObject.error().describe().find("s3cr3t") == std::string::npos);
  json badType = configMap(nullptr);
  badType["type"] = json::array();
  CHECK_FALSE(contentDigest(badType, RefKind::Secret));
  CHECK_FALSE(contentDigest(json::array(), RefKind::ConfigMap));
}

TEST_CASE("digests format as 32 hex digits and parse back") {
  CHECK(formatDigest(kA) == "00112233445566778899aabbccddeeff");
  CHECK(parseDigest("00112233445566778899AABBCCDDEEFF") == kA);
  CHECK_FALSE(parseDigest(""));
  CHECK_FALSE(parseDigest("00112233445566778899aabbccddeef"));
  CHECK_FALSE(parseDigest("00112233445566778899aabbccddeeff0"));
  CHECK_FALSE(parseDigest("g0112233445566778899aabbccddeeff"));
}

TEST_CASE("content records round trip sorted") {
  ContentRecords records;
  records["secret/b"] = {"u2/7", kB, "", DigestScheme::Unkeyed};
  records["configmap/a"] = {"u1/41", kA, "", DigestScheme::Unkeyed};
  const std::string text = formatContentRecords(records);
  CHECK(text ==
        "configmap/a=u1/41/00112233445566778899aabbccddeeff,secret/b=u2/7/ffeeddccbbaa99887766554433221100");
  CHECK(parseContentRecords(text) == records);
  CHECK(formatContentRecords({}).empty());
  CHECK(parseContentRecords("").empty());
}

TEST_CASE("entries of a content record that do not parse are skipped") {
  const std::string good = "configmap/a=u1/41/00112233445566778899aabbccddeeff";
  for (const std::string bad :
       {"x", "=", "configmap/a", "configmap/=u1/41/00112233445566778899aabbccddeeff",
        "pod/a=u1/41/00112233445566778899aabbccddeeff", "configmap/a=u1/00112233445566778899aabbccddeeff",
        "configmap/a=/41/00112233445566778899aabbccddeeff", "configmap/a=u1//00112233445566778899aabbccddeeff",
        "configmap/a=u1/4/1/00112233445566778899aabbccddeeff", "configmap/a=u1/41/short", ",,,"}) {
    INFO(bad);
    const ContentRecords parsed = parseContentRecords(bad + "," + good);
    REQUIRE(parsed.size() == 1);
    CHECK(parsed.at("configmap/a") == ContentRecord{"u1/41", kA, "", DigestScheme::Unkeyed});
  }
}

// Every combination of: what the template holds (nothing, the current version, an older version
// of the same object, a version of another uid, a foreign value), what is recorded (nothing, the
// template's version with the current digest, with another digest, another version), and whether
// the content is known.
TEST_CASE("decideTrackedValue over every combination of uid and version and content change") {
  const std::string uid = "u1";
  const std::string rv = "57";
  const std::string now = "u1/57";
  const std::optional<ContentDigest> known = kA;
  const std::optional<ContentDigest> unread;

  SECTION("nothing in the template: the current version, recorded when known") {
    for (const auto& recorded :
         {std::optional<ContentRecord>(), std::optional<ContentRecord>({"u1/41", kA, ""})}) {
      TrackedValue v = decideTrackedValue(std::nullopt, recorded, uid, rv, known, "", {});
      CHECK(v.value == now);
      CHECK_FALSE(v.metadataOnly);
      CHECK(v.record == ContentRecord{now, kA, "", DigestScheme::Unkeyed});
      TrackedValue u = decideTrackedValue(std::nullopt, recorded, uid, rv, unread, "", {});
      CHECK(u.value == now);
      CHECK_FALSE(u.record);
    }
  }
  SECTION("the template holds the current version: unchanged, recorded lazily") {
    TrackedValue v = decideTrackedValue(now, std::nullopt, uid, rv, known, "", {});
    CHECK(v.value == now);
    CHECK_FALSE(v.metadataOnly);
    CHECK(v.record == ContentRecord{now, kA, "", DigestScheme::Unkeyed});
    CHECK_FALSE(decideTrackedValue(now, std::nullopt, uid, rv, unread, "", {}).record);
  }
  SECTION("same uid, older version, same content recorded for exactly that version: kept") {
    TrackedValue v = decideTrackedValue("u1/41", ContentRecord{"u1/41", kA, "", DigestScheme::Unkeyed}, uid, rv,
                                        known, "", {});
    CHECK(v.value == "u1/41");
    CHECK(v.metadataOnly);
    CHECK(v.record == ContentRecord{"u1/41", kA, "", DigestScheme::Unkeyed});
  }
  SECTION("same uid, older version, another digest recorded: the content changed") {
    TrackedValue v = decideTrackedValue("u1/41", ContentRecord{"u1/41", kB, "", DigestScheme::Unkeyed}, uid, rv,
                                        known, "", {});
    CHECK(v.value == now);
    CHECK_FALSE(v.metadataOnly);
    CHECK(v.record == ContentRecord{now, kA, "", DigestScheme::Unkeyed});
  }
  SECTION("same uid, older version, the record is for another version: as commons-operator") {
    for (const std::string other : {"u1/40", "u1/57", "u0/41", "u1/410"}) {
      INFO(other);
      TrackedValue v = decideTrackedValue("u1/41", ContentRecord{other, kA, "", DigestScheme::Unkeyed}, uid, rv,
                                          known, "", {});
      CHECK(v.value == now);
      CHECK_FALSE(v.metadataOnly);
      CHECK(v.record == ContentRecord{now, kA, "", DigestScheme::Unkeyed});
    }
  }
  SECTION("same uid, older version, nothing recorded (migration): as commons-operator") {
    TrackedValue v = decideTrackedValue("u1/41", std::nullopt, uid, rv, known, "", {});
    CHECK(v.value == now);
    CHECK_FALSE(v.metadataOnly);
    CHECK(v.record == ContentRecord{now, kA, "", DigestScheme::Unkeyed});
  }
  SECTION("same uid, older version, content not read (content-aware off): every version rolls") {
    TrackedValue v = decideTrackedValue("u1/41", ContentRecord{"u1/41", kA, "", DigestScheme::Unkeyed}, uid, rv,
                                        unread, "", {});
    CHECK(v.value == now);
    CHECK_FALSE(v.metadataOnly);
    CHECK_FALSE(v.record);
  }
  SECTION(
      "another uid (deleted and re-created) with the content recorded for the template's version keeps it") {
    TrackedValue same = decideTrackedValue("u0/41", ContentRecord{"u0/41", kA, "", DigestScheme::Unkeyed}, uid,
                                           rv, known, "", {});
    CHECK(same.value == "u0/41");
    CHECK(same.metadataOnly);
    CHECK(same.record == ContentRecord{"u0/41", kA, "", DigestScheme::Unkeyed});
    // Other content, content not read, or no entry for exactly that version: a restart.
    for (const auto& [recorded, digest] :
         {std::pair{std::optional<ContentRecord>(ContentRecord{"u0/41", kB, "", DigestScheme::Unkeyed}), known},
          std::pair{std::optional<ContentRecord>(ContentRecord{"u0/41", kA, "", DigestScheme::Unkeyed}),
                    unread},
          std::pair{std::optional<ContentRecord>(ContentRecord{"u0/40", kA, "", DigestScheme::Unkeyed}), known},
          std::pair{std::optional<ContentRecord>(), known}}) {
      TrackedValue v = decideTrackedValue("u0/41", recorded, uid, rv, digest, "", {});
      CHECK(v.value == now);
      CHECK_FALSE(v.metadataOnly);
    }
  }
  SECTION("a value that is not <uid>/<rv> (legacy marker, garbage) is replaced") {
    for (const std::string odd : {"changes-ignored", "", "u1", "u1/"}) {
      INFO(odd);
      TrackedValue v =
          decideTrackedValue(odd, ContentRecord{odd, kA, "", DigestScheme::Unkeyed}, uid, rv, known, "", {});
      CHECK(v.value == now);
      CHECK_FALSE(v.metadataOnly);
    }
  }
}

namespace {

// "web" (restarter/testing/builders.hpp) in namespace default, identity only, mounting ConfigMap cm and
// Secret s; `workloadAnnotations` (null: none) as its metadata annotations.
json mountingStatefulSet(const json& templateAnnotations, const json& workloadAnnotations = nullptr) {
  json sts = restarter::testing::statefulSet(
      {{"apiVersion", nullptr},
       {"kind", nullptr},
       {"metadata",
        {{"namespace", "default"}, {"uid", nullptr}, {"resourceVersion", nullptr}, {"generation", nullptr}}}});
  sts["spec"] = {{"template",
                  {{"metadata", {{"annotations", templateAnnotations}}},
                   {"spec",
                    {{"volumes",
                      {{{"name", "a"}, {"configMap", {{"name", "cm"}}}},
                       {{"name", "b"}, {"secret", {{"secretName", "s"}}}}}},
                     {"containers", {{{"name", "c"}}}}}}}}};
  if (!workloadAnnotations.is_null()) sts["metadata"]["annotations"] = workloadAnnotations;
  return sts;
}

const std::string kCm = "configmap.restarter.stackable.tech/cm";
const std::string kSecret = "secret.restarter.stackable.tech/s";
const std::string kRecord(kContentDigestsAnnotation);

}  // namespace

TEST_CASE("desiredAnnotations keeps a version whose content is unchanged and records digests") {
  const json recorded = {
      {kRecord, "configmap/cm=cu/1/" + formatDigest(kA) + ",secret/s=su/5/" + formatDigest(kB)}};
  const json sts = mountingStatefulSet({{kCm, "cu/1"}, {kSecret, "su/5"}}, recorded);

  SECTION("metadata-only changes of both: nothing to change") {
    auto desired = desiredAnnotations(sts, [](RefKind kind, const std::string&) {
      return kind == RefKind::ConfigMap ? ObjectState::present("cu", "2", false, kA)
                                        : ObjectState::present("su", "9", false, kB);
    });
    REQUIRE(desired);
    CHECK(desired->annotations == AnnotationMap{{kCm, "cu/1"}, {kSecret, "su/5"}});
    CHECK(desired->references.at(0).metadataOnly);
    CHECK(desired->references.at(1).metadataOnly);
    CHECK(desired->contentDigests == recorded[kRecord]);
    auto changes = planAnnotationChanges(sts, *desired);
    REQUIRE(changes);
    CHECK(changes->empty());
  }
  SECTION("the ConfigMap's content changed, the Secret's was not read (content-aware configmaps)") {
    auto desired = desiredAnnotations(sts, [](RefKind kind, const std::string&) {
      return kind == RefKind::ConfigMap ? ObjectState::present("cu", "2", false, kB)
                                        : ObjectState::present("su", "9", false);
    });
    REQUIRE(desired);
    CHECK(desired->annotations == AnnotationMap{{kCm, "cu/2"}, {kSecret, "su/9"}});
    CHECK_FALSE(desired->references.at(0).metadataOnly);
    CHECK_FALSE(desired->references.at(1).metadataOnly);
    CHECK(desired->contentDigests == "configmap/cm=cu/2/" + formatDigest(kB));
  }
  SECTION("ignored and absent references are not recorded") {
    auto desired = desiredAnnotations(sts, [](RefKind kind, const std::string&) {
      return kind == RefKind::ConfigMap ? ObjectState::present("cu", "2", true, kA) : ObjectState::absent();
    });
    REQUIRE(desired);
    CHECK(desired->annotations == AnnotationMap{{kCm, "cu/1"}});
    CHECK(desired->contentDigests.empty());
  }
}

TEST_CASE("a workload as commons-operator leaves it plans no change and records lazily") {
  const json sts = mountingStatefulSet({{kCm, "cu/1"}, {kSecret, "su/5"}});
  auto desired = desiredAnnotations(sts, [](RefKind kind, const std::string&) {
    return kind == RefKind::ConfigMap ? ObjectState::present("cu", "1", false, kA)
                                      : ObjectState::present("su", "5", false);
  });
  REQUIRE(desired);
  auto changes = planAnnotationChanges(sts, *desired);
  REQUIRE(changes);
  CHECK(changes->empty());
  CHECK(desired->contentDigests == "configmap/cm=cu/1/" + formatDigest(kA));
  // Then a metadata-only edit: nothing recorded yet, so it rolls once, as commons-operator would.
  auto next = desiredAnnotations(sts, [](RefKind kind, const std::string&) {
    return kind == RefKind::ConfigMap ? ObjectState::present("cu", "2", false, kA)
                                      : ObjectState::present("su", "5", false);
  });
  REQUIRE(next);
  CHECK(next->annotations.at(kCm) == "cu/2");
}

TEST_CASE("recordedContentDigests reads only a string annotation") {
  CHECK(recordedContentDigests(json::array()).empty());
  CHECK(recordedContentDigests(mountingStatefulSet(json::object())).empty());
  CHECK(recordedContentDigests(mountingStatefulSet(json::object(), {{kRecord, 7}})).empty());
  CHECK(recordedContentDigests(
            mountingStatefulSet(json::object(), {{kRecord, "configmap/cm=cu/1/" + formatDigest(kA)}}))
            .size() == 1);
}

TEST_CASE("content awareness parses its three names and says which kinds are read") {
  for (auto awareness : {ContentAwareness::Off, ContentAwareness::ConfigMaps, ContentAwareness::All}) {
    auto parsed = parseContentAwareness(contentAwarenessName(awareness));
    REQUIRE(parsed);
    CHECK(*parsed == awareness);
  }
  CHECK_FALSE(parseContentAwareness("secrets"));
  CHECK_FALSE(parseContentAwareness(""));
  CHECK_FALSE(readsContent(ContentAwareness::Off, RefKind::ConfigMap));
  CHECK_FALSE(readsContent(ContentAwareness::Off, RefKind::Secret));
  CHECK(readsContent(ContentAwareness::ConfigMaps, RefKind::ConfigMap));
  CHECK_FALSE(readsContent(ContentAwareness::ConfigMaps, RefKind::Secret));
  CHECK(readsContent(ContentAwareness::All, RefKind::ConfigMap));
  CHECK(readsContent(ContentAwareness::All, RefKind::Secret));
}

TEST_CASE("objectStateFromObject reads the digest only when asked") {
  json cm = configMap({{"k", "v"}});
  auto without = objectStateFromObject(cm, RefKind::ConfigMap, false, nullptr);
  REQUIRE(without);
  CHECK(without->uid == "u1");
  CHECK_FALSE(without->contentDigest);
  auto with = objectStateFromObject(cm, RefKind::ConfigMap, true, nullptr);
  REQUIRE(with);
  CHECK(with->contentDigest == digestOf(cm));
  cm["data"] = 5;
  auto unhashable = objectStateFromObject(cm, RefKind::ConfigMap, true, nullptr);
  REQUIRE(unhashable);
  CHECK_FALSE(unhashable->contentDigest);
  CHECK_FALSE(objectStateFromObject(json::object(), RefKind::ConfigMap, true, nullptr));
}

namespace {
const DigestKey& contentCoreKey() {
  static const DigestKey key = *DigestKey::fromBytes(std::string(32, 'q'));
  return key;
}
}  // namespace

TEST_CASE("a keyed digest is not the plain SHA-256 and depends on the key") {
  const json secret = {{"data", {{"password", "aHVudGVyMg=="}}}, {"type", "Opaque"}};
  const ContentDigest plain = *contentDigest(secret, RefKind::Secret);
  const ContentDigest keyed = *keyedContentDigest(secret, RefKind::Secret, contentCoreKey());
  CHECK(keyed != plain);
  CHECK(*keyedContentDigest(secret, RefKind::Secret, contentCoreKey()) == keyed);
  const DigestKey other = *DigestKey::fromBytes(std::string(32, 'r'));
  CHECK(*keyedContentDigest(secret, RefKind::Secret, other) != keyed);
  CHECK(other.id() != contentCoreKey().id());
  CHECK(contentCoreKey().id().size() == 8);
  CHECK_FALSE(DigestKey::fromBytes(std::string(31, 'q')));
  CHECK_FALSE(DigestKey::fromBytes(std::string(33, 'q')));
}

TEST_CASE("h2 h1 and unkeyed record entries round-trip and an unknown tag is no entry") {
  ContentRecords records;
  records["configmap/a"] = ContentRecord{"u1/41", kA, "0a1b2c3d", DigestScheme::H2};
  records["configmap/c"] = ContentRecord{"u3/5", kA, "0a1b2c3d", DigestScheme::H1};
  records["secret/b"] = ContentRecord{"u2/7", kB, "", DigestScheme::Unkeyed};
  const std::string text = formatContentRecords(records);
  CHECK(text == "configmap/a=u1/41/h2.0a1b2c3d." + formatDigest(kA) + ",configmap/c=u3/5/h1.0a1b2c3d." +
                    formatDigest(kA) + ",secret/b=u2/7/" + formatDigest(kB));
  CHECK(parseContentRecords(text) == records);
  for (const std::string& bad :
       {"h3.0a1b2c3d." + formatDigest(kA), "h2.0a1b2c3." + formatDigest(kA), "h2.0a1b2c3g." + formatDigest(kA),
        "h2.0a1b2c3d" + formatDigest(kA), "h1.0a1b2c3d" + formatDigest(kA)}) {
    CAPTURE(bad);
    CHECK(parseContentRecords("configmap/a=u1/41/" + bad).empty());
  }
}

namespace {
json secretIn(const std::string& ns, const std::string& name, const std::string& uid,
              const std::string& password) {
  return {{"metadata", {{"namespace", ns}, {"name", name}, {"uid", uid}, {"resourceVersion", "1"}}},
          {"data", {{"password", password}}},
          {"type", "Opaque"}};
}
}  // namespace

TEST_CASE("equal contents in two objects never give equal h2 digests") {
  const DigestKey& key = contentCoreKey();
  // The oracle of issue 39: a victim's Secret and an attacker's own Secret with a guessed password.
  const json victim = secretIn("victim", "db", "u-victim", "aHVudGVyMg==");
  const ContentDigest digest = *objectContentDigest(victim, RefKind::Secret, key);
  CHECK(*objectContentDigest(victim, RefKind::Secret, key) == digest);
  CHECK(*objectContentDigest(secretIn("attacker", "db", "u-victim", "aHVudGVyMg=="), RefKind::Secret, key) !=
        digest);
  CHECK(*objectContentDigest(secretIn("victim", "db2", "u-victim", "aHVudGVyMg=="), RefKind::Secret, key) !=
        digest);
  CHECK(*objectContentDigest(secretIn("victim", "db", "u-other", "aHVudGVyMg=="), RefKind::Secret, key) !=
        digest);
  // The identity fields are length-prefixed: moving a byte from one to the next changes the digest.
  CHECK(*objectContentDigest(secretIn("victi", "mdb", "u-victim", "aHVudGVyMg=="), RefKind::Secret, key) !=
        digest);
  // Content still counts, and the h2 digest is neither h1 nor unkeyed.
  CHECK(*objectContentDigest(secretIn("victim", "db", "u-victim", "aHVudGVyMw=="), RefKind::Secret, key) !=
        digest);
  CHECK(*keyedContentDigest(victim, RefKind::Secret, key) != digest);
  CHECK(*contentDigest(victim, RefKind::Secret) != digest);
  // The h1 digest of both is equal: that is why h1 is never written again.
  CHECK(*keyedContentDigest(secretIn("attacker", "mine", "u-a", "aHVudGVyMg=="), RefKind::Secret, key) ==
        *keyedContentDigest(victim, RefKind::Secret, key));
}

TEST_CASE("an object without namespace or name or uid has no h2 digest") {
  const DigestKey& key = contentCoreKey();
  for (const char* field : {"namespace", "name", "uid"}) {
    CAPTURE(field);
    json object = secretIn("ns", "db", "u1", "eA==");
    object["metadata"].erase(field);
    CHECK_FALSE(objectContentDigest(object, RefKind::Secret, key));
    object["metadata"][field] = "";
    CHECK_FALSE(objectContentDigest(object, RefKind::Secret, key));
    object["metadata"][field] = 5;
    CHECK_FALSE(objectContentDigest(object, RefKind::Secret, key));
  }
  CHECK_FALSE(objectContentDigest(json::array(), RefKind::Secret, key));
  CHECK_FALSE(objectContentDigest(json{{"metadata", "x"}}, RefKind::Secret, key));
}

TEST_CASE("decideTrackedValue compares an entry only with the digest of its own scheme and key") {
  const std::string id = contentCoreKey().id();
  const std::string uid = "u1";
  const std::string rv = "42";
  const std::vector<OtherDigest> h1{{kB, id, DigestScheme::H1}};
  const ContentRecord h2Now{"u1/42", kA, id, DigestScheme::H2};
  SECTION("h2 entry, same key, same content: kept, the entry stays") {
    TrackedValue v = decideTrackedValue("u1/41", ContentRecord{"u1/41", kA, id}, uid, rv, kA, id, h1);
    CHECK(v.value == "u1/41");
    CHECK(v.metadataOnly);
    CHECK(v.record == ContentRecord{"u1/41", kA, id});
  }
  SECTION("h2 entry, same key, other content: rolls") {
    TrackedValue v = decideTrackedValue("u1/41", ContentRecord{"u1/41", kB, id}, uid, rv, kA, id, h1);
    CHECK(v.value == "u1/42");
    CHECK(v.record == h2Now);
  }
  SECTION("h1 entry whose content matches: rewritten as h2 for the same version, no restart") {
    TrackedValue v =
        decideTrackedValue("u1/41", ContentRecord{"u1/41", kB, id, DigestScheme::H1}, uid, rv, kA, id, h1);
    CHECK(v.value == "u1/41");
    CHECK(v.metadataOnly);
    CHECK(v.record == ContentRecord{"u1/41", kA, id, DigestScheme::H2});
  }
  SECTION("h1 entry whose content changed: a real change") {
    TrackedValue v =
        decideTrackedValue("u1/41", ContentRecord{"u1/41", kA, id, DigestScheme::H1}, uid, rv, kA, id, h1);
    CHECK(v.value == "u1/42");
    CHECK_FALSE(v.metadataOnly);
    CHECK(v.record == h2Now);
  }
  SECTION("an h2 entry is never compared with an h1 digest of the same bytes") {
    TrackedValue v = decideTrackedValue("u1/41", ContentRecord{"u1/41", kB, id}, uid, rv, kA, id, h1);
    CHECK(v.value == "u1/42");
  }
  SECTION("h1 entry without its digest: cannot be compared, rolls") {
    TrackedValue v =
        decideTrackedValue("u1/41", ContentRecord{"u1/41", kB, id, DigestScheme::H1}, uid, rv, kA, id, {});
    CHECK(v.value == "u1/42");
  }
  SECTION("an unkeyed entry (never released) is never compared: rolls") {
    const std::vector<OtherDigest> others{{kB, "", DigestScheme::H1}};
    TrackedValue v = decideTrackedValue("u1/41", ContentRecord{"u1/41", kB, "", DigestScheme::Unkeyed}, uid, rv,
                                        kA, id, others);
    CHECK(v.value == "u1/42");
  }
  SECTION("an entry under the key of another digest is compared with it: kept, rewritten under the key") {
    const std::vector<OtherDigest> previous{{kB, "ffffffff", DigestScheme::H2}};
    TrackedValue v =
        decideTrackedValue("u1/41", ContentRecord{"u1/41", kB, "ffffffff"}, uid, rv, kA, id, previous);
    CHECK(v.value == "u1/41");
    CHECK(v.metadataOnly);
    CHECK(v.record == ContentRecord{"u1/41", kA, id});
    // The same digest under the same key but another scheme is no match.
    TrackedValue h1Entry = decideTrackedValue("u1/41", ContentRecord{"u1/41", kB, "ffffffff", DigestScheme::H1},
                                              uid, rv, kA, id, previous);
    CHECK(h1Entry.value == "u1/42");
  }
  SECTION("an entry keyed with a key no digest is under cannot be compared: rolls") {
    TrackedValue v = decideTrackedValue("u1/41", ContentRecord{"u1/41", kA, "ffffffff"}, uid, rv, kA, id, h1);
    CHECK(v.value == "u1/42");
    CHECK(v.record == h2Now);
  }
  SECTION("template at the current version: the entry is rewritten as h2 whatever it held") {
    for (const ContentRecord& old :
         {ContentRecord{"u1/42", kB, "", DigestScheme::Unkeyed}, ContentRecord{"u1/42", kB, "ffffffff"},
          ContentRecord{"u1/42", kB, id, DigestScheme::H1}}) {
      TrackedValue v = decideTrackedValue("u1/42", old, uid, rv, kA, id, h1);
      CHECK(v.value == "u1/42");
      CHECK(v.record == h2Now);
    }
  }
}

TEST_CASE("recordNeedsRekey on any entry that is not h2 under the key") {
  ContentRecords keyed{{"configmap/a", ContentRecord{"u/1", kA, "0a1b2c3d"}}};
  CHECK_FALSE(recordNeedsRekey({}, "0a1b2c3d"));
  CHECK_FALSE(recordNeedsRekey(keyed, "0a1b2c3d"));
  CHECK(recordNeedsRekey(keyed, "ffffffff"));
  CHECK_FALSE(recordNeedsRekey(keyed, ""));
  keyed["configmap/c"] = ContentRecord{"u/3", kA, "0a1b2c3d", DigestScheme::H1};
  CHECK(recordNeedsRekey(keyed, "0a1b2c3d"));
  CHECK_FALSE(recordNeedsRekey(keyed, ""));
  keyed.erase("configmap/c");
  keyed["secret/b"] = ContentRecord{"u/2", kB, "", DigestScheme::Unkeyed};
  CHECK(recordNeedsRekey(keyed, "0a1b2c3d"));
  CHECK(recordNeedsRekey(keyed, ""));
}

TEST_CASE("desiredAnnotations asks for a rekey of an h1 record and writes it as h2 without a restart") {
  const DigestKey& key = contentCoreKey();
  const json cm = {{"metadata", {{"namespace", "ns"}, {"name", "cm"}, {"uid", "cu"}, {"resourceVersion", "2"}}},
                   {"data", {{"k", "v"}}}};
  auto state = objectStateFromObject(cm, RefKind::ConfigMap, true, &key);
  REQUIRE(state);
  CHECK(state->digestKeyId == key.id());
  CHECK(state->contentDigest == *objectContentDigest(cm, RefKind::ConfigMap, key));
  REQUIRE(state->otherDigests.size() == 1);
  const OtherDigest& h1 = state->otherDigests[0];
  CHECK(h1 == OtherDigest{*keyedContentDigest(cm, RefKind::ConfigMap, key), key.id(), DigestScheme::H1});
  // As the previous release left it: the template at version 1, the record h1 under the same key.
  const std::string old = "configmap/cm=cu/1/h1." + key.id() + "." + formatDigest(h1.digest);
  const json workload = {
      {"metadata", {{"annotations", {{std::string(kContentDigestsAnnotation), old}}}}},
      {"spec",
       {{"template",
         {{"metadata", {{"annotations", {{"configmap.restarter.stackable.tech/cm", "cu/1"}}}}},
          {"spec",
           {{"volumes", {{{"name", "c"}, {"configMap", {{"name", "cm"}}}}}},
            {"containers", {{{"name", "a"}, {"image", "x"}}}}}}}}}}};
  DesiredOptions options;
  options.podsRunning = true;
  auto desired = desiredAnnotations(
      workload, [&](RefKind, const std::string&) { return *state; }, options);
  REQUIRE(desired);
  CHECK(desired->recordRewrite == RecordRewrite::Rekey);
  CHECK(desired->annotations.at("configmap.restarter.stackable.tech/cm") == "cu/1");
  CHECK(desired->contentDigests ==
        "configmap/cm=cu/1/h2." + key.id() + "." + formatDigest(*state->contentDigest));
}

TEST_CASE(
    "desiredAnnotations completes a record that lacks a read reference and asks nothing once it is complete") {
  const DigestKey& key = contentCoreKey();
  const json secret = {
      {"metadata", {{"namespace", "ns"}, {"name", "s"}, {"uid", "su"}, {"resourceVersion", "5"}}},
      {"data", {{"k", "dg=="}}}};
  const json cm = {{"metadata", {{"namespace", "ns"}, {"name", "cm"}, {"uid", "cu"}, {"resourceVersion", "2"}}},
                   {"data", {{"k", "v"}}}};
  auto secretState = objectStateFromObject(secret, RefKind::Secret, true, &key);
  auto cmState = objectStateFromObject(cm, RefKind::ConfigMap, true, &key);
  REQUIRE(secretState);
  REQUIRE(cmState);
  const std::string cmEntry = "configmap/cm=cu/2/h2." + key.id() + "." + formatDigest(*cmState->contentDigest);
  const std::string secretEntry =
      "secret/s=su/5/h2." + key.id() + "." + formatDigest(*secretState->contentDigest);
  auto workload = [](const std::string& record, const std::string& secretValue) {
    return json{{"metadata", {{"annotations", {{std::string(kContentDigestsAnnotation), record}}}}},
                {"spec",
                 {{"template",
                   {{"metadata",
                     {{"annotations",
                       {{"configmap.restarter.stackable.tech/cm", "cu/2"},
                        {"secret.restarter.stackable.tech/s", secretValue}}}}},
                    {"spec",
                     {{"volumes",
                       {{{"name", "c"}, {"configMap", {{"name", "cm"}}}},
                        {{"name", "s"}, {"secret", {{"secretName", "s"}}}}}},
                      {"containers", {{{"name", "a"}, {"image", "x"}}}}}}}}}}};
  };
  const ObjectLookup lookup = [&](RefKind kind, const std::string&) {
    return kind == RefKind::Secret ? *secretState : *cmState;
  };
  DesiredOptions options;
  options.podsRunning = true;
  // Written while Secrets were not read (--content-aware=configmaps): the ConfigMap's entry only.
  auto desired = desiredAnnotations(workload(cmEntry, "su/5"), lookup, options);
  REQUIRE(desired);
  CHECK(desired->recordRewrite == RecordRewrite::Complete);
  CHECK(desired->annotations.at("secret.restarter.stackable.tech/s") == "su/5");
  CHECK(desired->contentDigests == cmEntry + "," + secretEntry);
  // Once complete: nothing to write.
  desired = desiredAnnotations(workload(cmEntry + "," + secretEntry, "su/5"), lookup, options);
  REQUIRE(desired);
  CHECK(desired->recordRewrite == RecordRewrite::None);
  // The template holds an older version with nothing recorded for it: judged as commons-operator
  // judges it (a rollout), which writes the whole record with the template; no rewrite alone.
  desired = desiredAnnotations(workload(cmEntry, "su/4"), lookup, options);
  REQUIRE(desired);
  CHECK(desired->annotations.at("secret.restarter.stackable.tech/s") == "su/5");
  CHECK(desired->contentDigests == cmEntry + "," + secretEntry);
}

TEST_CASE("during a rotation an object's digests under the previous key compare the entries written under it") {
  const DigestKey& old = contentCoreKey();
  const DigestKey fresh = DigestKey::fromBytes(std::string(32, 'n'))->withPrevious(old);
  REQUIRE(fresh.previous() != nullptr);
  CHECK(fresh.previous()->id() == old.id());
  CHECK(fresh.withPrevious(fresh).previous() == nullptr);  // a key is never its own previous
  const json cm = {{"metadata", {{"namespace", "ns"}, {"name", "cm"}, {"uid", "cu"}, {"resourceVersion", "2"}}},
                   {"data", {{"k", "v"}}}};
  auto state = objectStateFromObject(cm, RefKind::ConfigMap, true, &fresh);
  REQUIRE(state);
  CHECK(state->digestKeyId == fresh.id());
  CHECK(state->contentDigest == *objectContentDigest(cm, RefKind::ConfigMap, fresh));
  const OtherDigest underOld{*objectContentDigest(cm, RefKind::ConfigMap, old), old.id(), DigestScheme::H2};
  CHECK(std::find(state->otherDigests.begin(), state->otherDigests.end(), underOld) !=
        state->otherDigests.end());
  // The entry written before the rotation, for the version the template holds: compared under its
  // own key, kept (no restart) and rewritten under the new key.
  const ContentRecord before{"cu/1", underOld.digest, old.id(), DigestScheme::H2};
  TrackedValue v = decideTrackedValue("cu/1", before, "cu", "2", state->contentDigest, state->digestKeyId,
                                      state->otherDigests);
  CHECK(v.value == "cu/1");
  CHECK(v.metadataOnly);
  CHECK(v.record == ContentRecord{"cu/1", *state->contentDigest, fresh.id(), DigestScheme::H2});
  // A content changed since: still a change under the previous key.
  const ContentRecord changed{"cu/1", kA, old.id(), DigestScheme::H2};
  CHECK(decideTrackedValue("cu/1", changed, "cu", "2", state->contentDigest, state->digestKeyId,
                           state->otherDigests)
            .value == "cu/2");
}

namespace {

json keyedConfigMap(const std::string& rv, json data, json binaryData = json::object()) {
  return json{{"metadata", {{"namespace", "ns"}, {"name", "shared"}, {"uid", "su"}, {"resourceVersion", rv}}},
              {"data", std::move(data)},
              {"binaryData", std::move(binaryData)}};
}

// A StatefulSet reading key `key` of ConfigMap `shared` through env, its template at `value`.
json keyReader(const std::string& key, const std::string& value, const std::string& record) {
  json workload = {
      {"metadata", {{"annotations", json::object()}}},
      {"spec",
       {{"template",
         {{"metadata", {{"annotations", {{"configmap.restarter.stackable.tech/shared", value}}}}},
          {"spec",
           {{"containers",
             {{{"name", "a"},
               {"image", "x"},
               {"env",
                {{{"name", "E"},
                  {"valueFrom", {{"configMapKeyRef", {{"name", "shared"}, {"key", key}}}}}}}}}}}}}}}}}};
  if (!record.empty()) workload["metadata"]["annotations"][std::string(kContentDigestsAnnotation)] = record;
  return workload;
}

Result<DesiredAnnotations> desiredFor(const json& workload, const json& object) {
  auto state = objectStateFromObject(object, RefKind::ConfigMap, true, &contentCoreKey());
  REQUIRE(state);
  DesiredOptions options;
  options.podsRunning = true;
  return desiredAnnotations(
      workload, [&](RefKind, const std::string&) { return *state; }, options);
}

}  // namespace

TEST_CASE("key digests name each key of data and binaryData and are bounded") {
  const DigestKey& key = contentCoreKey();
  const auto digests = objectKeyDigests(keyedConfigMap("1", {{"a", "1"}, {"b", "2"}}, {{"c", "Mw=="}}), key);
  REQUIRE(digests);
  CHECK(digests->size() == 3);
  CHECK(std::is_sorted(digests->begin(), digests->end(),
                       [](const KeyDigest& x, const KeyDigest& y) { return x.name < y.name; }));
  // The same value under another key name, or in another object, is another digest.
  const auto renamed = objectKeyDigests(keyedConfigMap("1", {{"a", "1"}, {"b", "1"}}), key);
  REQUIRE(renamed);
  CHECK((*renamed)[0].value != (*renamed)[1].value);
  json many = json::object();
  for (std::size_t i = 0; i <= kMaxKeyDigests; ++i) many["k" + std::to_string(i)] = "v";
  CHECK_FALSE(objectKeyDigests(keyedConfigMap("1", many), key));
  // The digest of the keys read: absent and present differ; an unread key does not count.
  const KeyDigests& d = *digests;
  CHECK(readKeysDigest(d, {"a"}) ==
        readKeysDigest(*objectKeyDigests(keyedConfigMap("2", {{"a", "1"}, {"b", "9"}}), key), {"a"}));
  CHECK(readKeysDigest(d, {"a"}) != readKeysDigest(d, {"b"}));
  CHECK(readKeysDigest(d, {"zz"}) != readKeysDigest(d, {}));
}

TEST_CASE(
    "a reference reading one key keeps its version when only other keys change and rolls when its key does") {
  const std::string value1 = "su/1";
  // Created: the record holds the K2 digest of key a at version 1.
  auto created = desiredFor(keyReader("a", value1, ""), keyedConfigMap("1", {{"a", "1"}, {"b", "2"}}));
  REQUIRE(created);
  REQUIRE(created->references.size() == 1);
  CHECK(created->references[0].ref.keys == std::vector<std::string>{"a"});
  CHECK(created->contentDigests.find("configmap/shared=su/1/k2.") == 0);
  const std::string record = created->contentDigests;

  // Key b changes (version 2): the template keeps version 1, no restart, record unchanged.
  auto unread = desiredFor(keyReader("a", value1, record), keyedConfigMap("2", {{"a", "1"}, {"b", "3"}}));
  REQUIRE(unread);
  CHECK(unread->annotations.at("configmap.restarter.stackable.tech/shared") == value1);
  CHECK(unread->references[0].metadataOnly);
  CHECK(unread->contentDigests == record);
  CHECK(unread->recordRewrite == RecordRewrite::None);

  // Key a changes (version 3): the template takes version 3.
  auto read = desiredFor(keyReader("a", value1, record), keyedConfigMap("3", {{"a", "9"}, {"b", "3"}}));
  REQUIRE(read);
  CHECK(read->annotations.at("configmap.restarter.stackable.tech/shared") == "su/3");
  CHECK(read->contentDigests.find("configmap/shared=su/3/k2.") == 0);

  // A key read that appears rolls; one that stays absent does not.
  auto absent = desiredFor(keyReader("z", value1, ""), keyedConfigMap("1", {{"a", "1"}}));
  REQUIRE(absent);
  auto stillAbsent =
      desiredFor(keyReader("z", value1, absent->contentDigests), keyedConfigMap("2", {{"a", "2"}}));
  REQUIRE(stillAbsent);
  CHECK(stillAbsent->annotations.at("configmap.restarter.stackable.tech/shared") == value1);
  auto appears = desiredFor(keyReader("z", value1, absent->contentDigests),
                            keyedConfigMap("3", {{"a", "2"}, {"z", "new"}}));
  REQUIRE(appears);
  CHECK(appears->annotations.at("configmap.restarter.stackable.tech/shared") == "su/3");
}

TEST_CASE("a whole content entry written before key level tracking still compares and comes back as k2") {
  const DigestKey& key = contentCoreKey();
  const json v1 = keyedConfigMap("1", {{"a", "1"}, {"b", "2"}});
  const std::string h2 = "configmap/shared=su/1/h2." + key.id() + "." +
                         formatDigest(*objectContentDigest(v1, RefKind::ConfigMap, key));
  // Nothing changed since: the entry is rewritten as k2 alone (one metadata-only write).
  auto upgraded = desiredFor(keyReader("a", "su/1", h2), v1);
  REQUIRE(upgraded);
  CHECK(upgraded->recordRewrite == RecordRewrite::Complete);
  CHECK(upgraded->contentDigests.find("configmap/shared=su/1/k2.") == 0);
  // Metadata only since: kept, and the entry rewritten as k2.
  auto same = desiredFor(keyReader("a", "su/1", h2), keyedConfigMap("2", {{"a", "1"}, {"b", "2"}}));
  REQUIRE(same);
  CHECK(same->annotations.at("configmap.restarter.stackable.tech/shared") == "su/1");
  CHECK(same->contentDigests.find("configmap/shared=su/1/k2.") == 0);
  // An unread key changed since: the whole content differs, so it cannot tell: it rolls, once.
  auto changed = desiredFor(keyReader("a", "su/1", h2), keyedConfigMap("2", {{"a", "1"}, {"b", "3"}}));
  REQUIRE(changed);
  CHECK(changed->annotations.at("configmap.restarter.stackable.tech/shared") == "su/2");
}

TEST_CASE(
    "an object with more keys than the key digests hold is compared whole for a reference reading one key") {
  json many = json::object();
  for (int i = 0; i < 10000; ++i) many["k" + std::to_string(i)] = "v";
  json changed = many;
  changed["k9999"] = "w";
  auto created = desiredFor(keyReader("k1", "su/1", ""), keyedConfigMap("1", many));
  REQUIRE(created);
  CHECK(created->contentDigests.find("configmap/shared=su/1/h2.") == 0);
  // Another key changes: compared whole, so it rolls (bounded memory over precision).
  auto rolled = desiredFor(keyReader("k1", "su/1", created->contentDigests), keyedConfigMap("2", changed));
  REQUIRE(rolled);
  CHECK(rolled->annotations.at("configmap.restarter.stackable.tech/shared") == "su/2");
  // A key name of 1 MiB can never exist: the reference reads nothing that can change.
  auto huge = desiredFor(keyReader(std::string(1 << 20, 'k'), "su/1", ""), keyedConfigMap("1", {{"a", "1"}}));
  REQUIRE(huge);
  CHECK(huge->references[0].ref.keys.empty());
  CHECK_FALSE(huge->references[0].ref.allKeys);
}
