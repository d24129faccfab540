#include "restarter/core/annotation_keys.hpp"

#include <set>

#include <catch2/catch.hpp>

using namespace restarter::core;

TEST_CASE("qualified names are validated as Kubernetes does", "[keys]") {
  struct Row {
    std::string name;
    bool valid;
  };
  const std::vector<Row> rows = {
      {"a", true},
      {"app-config", true},
      {"App.Config_1", true},
      {std::string(63, 'a'), true},
      {std::string(64, 'a'), false},
      {"", false},
      {"-leading", false},
      {"trailing.", false},
      {"has space", false},
      {"slash/inside", false},
      {"ümlaut", false},
  };
  for (const Row& row : rows) {
    INFO(row.name);
    CHECK(isValidQualifiedName(row.name) == row.valid);
  }
}

TEST_CASE("short valid names give commons-operator's keys exactly", "[keys]") {
  CHECK(templateAnnotationKey(RefKind::ConfigMap, "app-config") ==
        "configmap.restarter.stackable.tech/app-config");
  CHECK(templateAnnotationKey(RefKind::Secret, "tls.certs") == "secret.restarter.stackable.tech/tls.certs");
  const std::string name63(63, 'n');
  CHECK(templateAnnotationKey(RefKind::ConfigMap, name63) == "configmap.restarter.stackable.tech/" + name63);
}

TEST_CASE("names that cannot be key names map to valid and stable and distinct keys", "[keys]") {
  const std::vector<std::string> names = {
      std::string(64, 'a'),
      std::string(64, 'a') + "b",
      std::string(253, 'z'),
      "x" + std::string(62, '.') + "y" + std::string(10, '-'),
      "UPPER_and_under",
      "with space",
      "-----",
      "____",
      std::string(42, 'q') + "-tail-that-makes-it-too-long-for-a-key",
      std::string(42, 'q') + "-tail-that-makes-it-too-long-for-a-key-2",
      std::string(100000, 'h'),
  };
  std::set<std::string> seen;
  for (const std::string& name : names) {
    INFO(name.substr(0, 80));
    const std::string mapped = annotationNameFor(name);
    CHECK(isValidQualifiedName(mapped));
    CHECK(mapped.find('_') != std::string::npos);
    CHECK(annotationNameFor(name) == mapped);  // deterministic
    CHECK(seen.insert(mapped).second);         // distinct
    const auto parsed = parseTemplateAnnotationKey(templateAnnotationKey(RefKind::Secret, name));
    REQUIRE(parsed);
    CHECK(parsed->mapped);
    CHECK(parsed->kind == RefKind::Secret);
    CHECK(parsed->namePart == mapped);
  }
}

TEST_CASE("mapped keys keep a readable prefix and a fixed-size hash", "[keys]") {
  // SHA-256 of 64 'a' starts with ffe054fe7ae0cb6dc65c: the documented scheme, pinned so a
  // change to it (which would restart every such workload) cannot go unnoticed.
  const std::string mapped = annotationNameFor(std::string(64, 'a'));
  CHECK(mapped == std::string(42, 'a') + "_ffe054fe7ae0cb6dc65c");
  CHECK(mapped.size() == 63);
  // Nothing alphanumeric to keep: "h" stands in for the prefix.
  CHECK(annotationNameFor("-----").size() == kMappedKeyHashDigits + 2);
  CHECK(annotationNameFor("-----").rfind("h_", 0) == 0);
}

TEST_CASE("template keys are recognized and foreign keys are not", "[keys]") {
  const auto cmKey = parseTemplateAnnotationKey("configmap.restarter.stackable.tech/app");
  REQUIRE(cmKey);
  CHECK(cmKey->kind == RefKind::ConfigMap);
  CHECK(cmKey->namePart == "app");
  CHECK_FALSE(cmKey->mapped);
  CHECK(parseTemplateAnnotationKey("secret.restarter.stackable.tech/s")->kind == RefKind::Secret);
  for (const char* foreign :
       {"app.kubernetes.io/name", "kubectl.kubernetes.io/restartedAt", "restarter.stackable.tech/enabled",
        "configmap.restarter.stackable.tech", "xconfigmap.restarter.stackable.tech/app",
        "restarter.stackable.tech/expires-at.tls"}) {
    INFO(foreign);
    CHECK_FALSE(parseTemplateAnnotationKey(foreign));
  }
}
