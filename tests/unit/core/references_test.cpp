#include "restarter/core/references.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace restarter::core;
using nlohmann::json;

namespace {

Reference cm(std::string name, bool optional = false) {
  return Reference{RefKind::ConfigMap, std::move(name), optional};
}
Reference secret(std::string name, bool optional = false) {
  return Reference{RefKind::Secret, std::move(name), optional};
}

std::vector<Reference> refsOf(const json& podTemplate) {
  auto result = collectReferences(podTemplate);
  INFO(podTemplate.dump());
  REQUIRE(result.ok());
  return result.value();
}

}  // namespace

TEST_CASE("every supported place of a reference is followed", "[references]") {
  struct Row {
    const char* where;
    json podTemplate;
    std::vector<Reference> expected;
  };
  const std::vector<Row> rows = {
      {"volume configMap",
       {{"spec", {{"volumes", {{{"name", "v"}, {"configMap", {{"name", "a"}}}}}}}}},
       {cm("a")}},
      {"volume secret",
       {{"spec", {{"volumes", {{{"name", "v"}, {"secret", {{"secretName", "s"}}}}}}}}},
       {secret("s")}},
      {"projected sources",
       {{"spec",
         {{"volumes",
           {{{"name", "v"},
             {"projected",
              {{"sources",
                {{{"configMap", {{"name", "pa"}}}},
                 {{"secret", {{"name", "ps"}, {"optional", true}}}},
                 {{"downwardAPI", json::object()}}}}}}}}}}}},
       {cm("pa"), secret("ps", true)}},
      {"env valueFrom in a container",
       {{"spec",
         {{"containers",
           {{{"name", "app"},
             {"env",
              {{{"name", "A"}, {"valueFrom", {{"configMapKeyRef", {{"name", "ea"}, {"key", "k"}}}}}},
               {{"name", "B"}, {"valueFrom", {{"secretKeyRef", {{"name", "es"}, {"key", "k"}}}}}},
               {{"name", "C"}, {"value", "plain"}},
               {{"name", "D"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.name"}}}}}}}}}}}}}},
       {cm("ea"), secret("es")}},
      {"envFrom in an init container",
       {{"spec",
         {{"initContainers",
           {{{"name", "init"},
             {"envFrom",
              {{{"configMapRef", {{"name", "fa"}, {"optional", true}}}},
               {{"secretRef", {{"name", "fs"}}}}}}}}}}}},
       {cm("fa", true), secret("fs")}},
      {"nothing referenced", {{"spec", {{"containers", {{{"name", "app"}, {"image", "x"}}}}}}}, {}},
      {"no spec at all", json::object(), {}},
      {"null fields are absent fields",
       {{"spec", {{"volumes", nullptr}, {"containers", {{{"name", "app"}, {"env", nullptr}}}}}}},
       {}},
  };
  for (const Row& row : rows) {
    SECTION(row.where) { CHECK(refsOf(row.podTemplate) == row.expected); }
  }
}

TEST_CASE("duplicates collapse and a required use wins over optional ones", "[references]") {
  const json podTemplate = {
      {"spec",
       {{"volumes",
         {{{"name", "v1"}, {"configMap", {{"name", "shared"}, {"optional", true}}}},
          {{"name", "v2"}, {"configMap", {{"name", "shared"}}}},
          {{"name", "v3"}, {"secret", {{"secretName", "opt"}, {"optional", true}}}}}},
        {"containers",
         {{{"name", "app"}, {"envFrom", {{{"secretRef", {{"name", "opt"}, {"optional", true}}}}}}}}}}}};
  CHECK(refsOf(podTemplate) == std::vector<Reference>{cm("shared", false), secret("opt", true)});
}

TEST_CASE("a ConfigMap and a Secret of the same name are two references", "[references]") {
  const json podTemplate = {{"spec",
                             {{"volumes",
                               {{{"name", "a"}, {"secret", {{"secretName", "same"}}}},
                                {{"name", "b"}, {"configMap", {{"name", "same"}}}}}}}}};
  CHECK(refsOf(podTemplate) == std::vector<Reference>{cm("same"), secret("same")});
}

TEST_CASE("references come out sorted whatever the template order", "[references]") {
  const json podTemplate = {{"spec",
                             {{"volumes",
                               {{{"name", "a"}, {"configMap", {{"name", "zeta"}}}},
                                {{"name", "b"}, {"secret", {{"secretName", "alpha"}}}},
                                {{"name", "c"}, {"configMap", {{"name", "alpha"}}}}}}}}};
  CHECK(refsOf(podTemplate) == std::vector<Reference>{cm("alpha"), cm("zeta"), secret("alpha")});
}

TEST_CASE("malformed templates are errors naming the path and never exceptions", "[references]") {
  struct Row {
    const char* what;
    json podTemplate;
    const char* pathInMessage;
  };
  const std::vector<Row> rows = {
      {"template not an object", json::array(), "template"},
      {"spec a string", {{"spec", "x"}}, "template.spec"},
      {"volumes an object", {{"spec", {{"volumes", json::object()}}}}, "template.spec.volumes"},
      {"volume a number", {{"spec", {{"volumes", {1}}}}}, "template.spec.volumes[0]"},
      {"configMap name a number",
       {{"spec", {{"volumes", {{{"configMap", {{"name", 7}}}}}}}}},
       "template.spec.volumes[0].configMap.name"},
      {"configMap without a name",
       {{"spec", {{"volumes", {{{"configMap", json::object()}}}}}}},
       "template.spec.volumes[0].configMap.name"},
      {"secret with an empty name",
       {{"spec", {{"volumes", {{{"secret", {{"secretName", ""}}}}}}}}},
       "template.spec.volumes[0].secret.secretName"},
      {"optional a string",
       {{"spec", {{"volumes", {{{"configMap", {{"name", "a"}, {"optional", "yes"}}}}}}}}},
       "template.spec.volumes[0].configMap.optional"},
      {"projected sources not an array",
       {{"spec", {{"volumes", {{{"projected", {{"sources", "x"}}}}}}}}},
       "template.spec.volumes[0].projected.sources"},
      {"containers an object", {{"spec", {{"containers", json::object()}}}}, "template.spec.containers"},
      {"env element a string",
       {{"spec", {{"initContainers", {{{"env", {"A=B"}}}}}}}},
       "template.spec.initContainers[0].env[0]"},
      {"valueFrom an array",
       {{"spec", {{"containers", {{{"env", {{{"valueFrom", json::array()}}}}}}}}}},
       "template.spec.containers[0].env[0].valueFrom"},
      {"envFrom secretRef name null-like number",
       {{"spec", {{"containers", {{{"envFrom", {{{"secretRef", {{"name", false}}}}}}}}}}}},
       "template.spec.containers[0].envFrom[0].secretRef.name"},
  };
  for (const Row& row : rows) {
    SECTION(row.what) {
      Result<std::vector<Reference>> result = collectReferences(row.podTemplate);
      REQUIRE_FALSE(result.ok());
      CHECK(result.error().kind == ErrorKind::InvalidInput);
      CHECK_THAT(result.error().message, Catch::Contains(row.pathInMessage));
    }
  }
}

TEST_CASE("a huge template with a huge name is handled and the name is not a reference", "[references]") {
  const std::string longName(100000, 'x');
  json volumes = json::array();
  for (int i = 0; i < 2000; ++i) {
    volumes.push_back({{"name", "v"}, {"configMap", {{"name", "cm-" + std::to_string(i % 50)}}}});
  }
  volumes.push_back({{"name", "big"}, {"secret", {{"secretName", longName}}}});
  const auto refs = refsOf({{"spec", {{"volumes", volumes}}}});
  CHECK(refs.size() == 50);
  CHECK(refs.back() == cm("cm-9"));
}

TEST_CASE("object names follow Kubernetes' DNS-1123 subdomain rule", "[references]") {
  for (const std::string& valid : std::vector<std::string>{
           "a", "0", "config", "my-config", "my.config", "a.b-c.d", "0-a", std::string(253, 'a'),
           std::string(63, 'a') + "." + std::string(63, 'b') + "." + std::string(63, 'c') + "." +
               std::string(61, 'd')}) {
    INFO(valid);
    CHECK(isValidObjectName(valid));
  }
  for (const std::string& invalid : std::vector<std::string>{
           "", ".", "..", "a..b", ".a", "a.", "-a", "a-", "a.-b", "a-.b", "A", "my_config", "a/b", "a b",
           "a%2e", "caf\xc3\xa9", std::string(254, 'a'), std::string(1 << 20, 'a'), std::string("a\0b", 3)}) {
    INFO(shownName(invalid));
    CHECK_FALSE(isValidObjectName(invalid));
  }
}

TEST_CASE("namespace names follow Kubernetes' DNS-1123 label rule", "[references]") {
  CHECK(isValidNamespaceName("default"));
  CHECK(isValidNamespaceName("kube-system"));
  CHECK(isValidNamespaceName(std::string(63, 'n')));
  CHECK_FALSE(isValidNamespaceName(std::string(64, 'n')));
  CHECK_FALSE(isValidNamespaceName(""));
  CHECK_FALSE(isValidNamespaceName(".."));
  CHECK_FALSE(isValidNamespaceName("a.b"));
  CHECK_FALSE(isValidNamespaceName("a/b"));
  CHECK_FALSE(isValidNamespaceName("Default"));
}

TEST_CASE("a shown name is never longer than an object name may be and a mark", "[references]") {
  CHECK(shownName("short") == "short");
  CHECK(shownName(std::string(253, 'x')) == std::string(253, 'x'));
  const std::string shown = shownName(std::string(1 << 20, 'x'));
  CHECK(shown == std::string(253, 'x') + "...(1048576 bytes)");
  // A multi-byte character is never cut in two.
  std::string accents;
  for (int i = 0; i < 200; ++i) accents += "\xc3\xa9";
  CHECK(shownName(accents) == accents.substr(0, 252) + "...(400 bytes)");
}

TEST_CASE("uses of invalid names are not references and are reported", "[references]") {
  const json podTemplate = {
      {"spec",
       {{"volumes",
         {{{"name", "a"}, {"configMap", {{"name", "."}}}},
          {{"name", "b"}, {"configMap", {{"name", ".."}}}},
          {{"name", "c"}, {"secret", {{"secretName", std::string(1 << 20, 'x')}}}},
          {{"name", "d"}, {"configMap", {{"name", "good"}}}}}},
        {"containers",
         {{{"name", "app"},
           {"envFrom", {{{"secretRef", {{"name", "Upper_Case"}}}}, {{"configMapRef", {{"name", "good"}}}}}},
           {"env", {{{"name", "A"}, {"valueFrom", {{"secretKeyRef", {{"name", "s"}, {"key", "k"}}}}}}}}}}}}}};
  CHECK(refsOf(podTemplate) == std::vector<Reference>{cm("good"), secret("s")});
  const auto walk = walkReferences(podTemplate);
  REQUIRE(walk.ok());
  CHECK(walk->invalidUses == 4);
  REQUIRE(walk->invalid.size() == 4);
  CHECK(walk->invalid[0].path == "template.spec.volumes[0].configMap.name");
  CHECK(walk->invalid[0].name == ".");
  CHECK(walk->invalid[2].kind == RefKind::Secret);
  CHECK(walk->invalid[2].name.size() < 300);
  CHECK(walk->invalid[3].path == "template.spec.containers[0].envFrom[0].secretRef.name");

  json many = json::array();
  for (int i = 0; i < 100; ++i)
    many.push_back({{"name", "v"}, {"configMap", {{"name", "Bad" + std::to_string(i)}}}});
  const auto manyWalk = walkReferences({{"spec", {{"volumes", many}}}});
  REQUIRE(manyWalk.ok());
  CHECK(manyWalk->references.empty());
  CHECK(manyWalk->invalidUses == 100);
  CHECK(manyWalk->invalid.size() == kMaxInvalidShown);
}
