#include "restarter/core/references.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace restarter::core;
using nlohmann::json;

namespace {

// A reference reading every key of its object.
Reference cm(std::string name, bool optional = false) {
  return Reference{RefKind::ConfigMap, std::move(name), optional, true, {}};
}
Reference secret(std::string name, bool optional = false) {
  return Reference{RefKind::Secret, std::move(name), optional, true, {}};
}
// A reference reading only `keys`.
Reference reading(Reference ref, std::vector<std::string> keys) {
  ref.allKeys = false;
  ref.keys = std::move(keys);
  return ref;
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
       {reading(cm("ea"), {"k"}), reading(secret("es"), {"k"})}},
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
  CHECK(refsOf(podTemplate) == std::vector<Reference>{cm("good"), reading(secret("s"), {"k"})});
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

TEST_CASE("each reference form reads the keys it names and a whole use reads every key", "[references]") {
  auto container = [](json mounts, json env = json::array()) {
    return json{{"name", "app"}, {"image", "x"}, {"volumeMounts", std::move(mounts)}, {"env", std::move(env)}};
  };
  auto podTemplate = [](json volumes, json containers) {
    return json{{"spec", {{"volumes", std::move(volumes)}, {"containers", std::move(containers)}}}};
  };
  const json wholeVolume = {{{"name", "v"}, {"configMap", {{"name", "a"}}}}};
  struct Row {
    const char* form;
    json podTemplate;
    std::vector<Reference> expected;
  };
  const std::vector<Row> rows = {
      {"env keys of two containers are one union",
       {{"spec",
         {{"containers",
           {{{"name", "a"},
             {"env", {{{"name", "A"}, {"valueFrom", {{"configMapKeyRef", {{"name", "c"}, {"key", "y"}}}}}}}}},
            {{"name", "b"},
             {"env",
              {{{"name", "B"}, {"valueFrom", {{"configMapKeyRef", {{"name", "c"}, {"key", "x"}}}}}},
               {{"name", "C"}, {"valueFrom", {{"configMapKeyRef", {{"name", "c"}, {"key", "y"}}}}}}}}}}}}}},
       {reading(cm("c"), {"x", "y"})}},
      {"volume items",
       podTemplate(
           {{{"name", "v"},
             {"secret",
              {{"secretName", "s"},
               {"items", {{{"key", "tls.crt"}, {"path", "a"}}, {{"key", "tls.key"}, {"path", "b"}}}}}}}},
           {container({{{"name", "v"}, {"mountPath", "/etc/tls"}}})}),
       {reading(secret("s"), {"tls.crt", "tls.key"})}},
      {"projected source items",
       podTemplate(
           {{{"name", "v"},
             {"projected",
              {{"sources", {{{"configMap", {{"name", "a"}, {"items", {{{"key", "k"}, {"path", "k"}}}}}}}}}}}}},
           {container({{{"name", "v"}, {"mountPath", "/p"}}})}),
       {reading(cm("a"), {"k"})}},
      {"a whole volume mounted whole",
       podTemplate(wholeVolume, {container({{{"name", "v"}, {"mountPath", "/c"}}})}),
       {cm("a")}},
      {"a whole volume mounted only through subPaths",
       podTemplate(wholeVolume,
                   {container({{{"name", "v"}, {"mountPath", "/c/app.conf"}, {"subPath", "app.conf"}},
                               {{"name", "v"}, {"mountPath", "/c/x"}, {"subPath", "log.conf/x"}}})}),
       {reading(cm("a"), {"app.conf", "log.conf"})}},
      {"a whole volume mounted through subPath and whole",
       podTemplate(wholeVolume,
                   {container({{{"name", "v"}, {"mountPath", "/c/app.conf"}, {"subPath", "app.conf"}},
                               {{"name", "v"}, {"mountPath", "/all"}}})}),
       {cm("a")}},
      {"a subPathExpr reads every key",
       podTemplate(wholeVolume, {container({{{"name", "v"}, {"mountPath", "/c"}, {"subPathExpr", "$(POD)"}}})}),
       {cm("a")}},
      {"a volume no container mounts reads every key",
       podTemplate(wholeVolume, {container(json::array())}),
       {cm("a")}},
      {"envFrom beside a key ref reads every key",
       {{"spec",
         {{"containers",
           {{{"name", "a"},
             {"envFrom", {{{"configMapRef", {{"name", "c"}}}}}},
             {"env",
              {{{"name", "A"}, {"valueFrom", {{"configMapKeyRef", {{"name", "c"}, {"key", "x"}}}}}}}}}}}}}},
       {cm("c")}},
      {"an invalid key reads nothing and duplicate items are one key",
       podTemplate({{{"name", "v"},
                     {"configMap",
                      {{"name", "a"},
                       {"items",
                        {{{"key", "ok"}, {"path", "1"}},
                         {{"key", "ok"}, {"path", "2"}},
                         {{"key", "no/slash"}, {"path", "3"}}}}}}}},
                   {container({{{"name", "v"}, {"mountPath", "/c"}}})}),
       {reading(cm("a"), {"ok"})}},
      {"a key ref without a key reads every key",
       {{"spec",
         {{"containers",
           {{{"name", "a"},
             {"env", {{{"name", "A"}, {"valueFrom", {{"secretKeyRef", {{"name", "s"}}}}}}}}}}}}}},
       {secret("s")}},
  };
  for (const Row& row : rows) {
    INFO(row.form);
    CHECK(refsOf(row.podTemplate) == row.expected);
  }
}

TEST_CASE("more keys read than the bound count as every key", "[references]") {
  json items = json::array();
  for (std::size_t i = 0; i <= kMaxReadKeys; ++i)
    items.push_back({{"key", "k" + std::to_string(i)}, {"path", std::to_string(i)}});
  const json podTemplate = {
      {"spec",
       {{"volumes", {{{"name", "v"}, {"configMap", {{"name", "a"}, {"items", items}}}}}},
        {"containers", {{{"name", "c"}, {"volumeMounts", {{{"name", "v"}, {"mountPath", "/c"}}}}}}}}}};
  CHECK(refsOf(podTemplate) == std::vector<Reference>{cm("a")});
  items.erase(items.begin());
  const json fewer = {
      {"spec",
       {{"volumes", {{{"name", "v"}, {"configMap", {{"name", "a"}, {"items", items}}}}}},
        {"containers", {{{"name", "c"}, {"volumeMounts", {{{"name", "v"}, {"mountPath", "/c"}}}}}}}}}};
  const auto refs = refsOf(fewer);
  REQUIRE(refs.size() == 1);
  CHECK_FALSE(refs[0].allKeys);
  CHECK(refs[0].keys.size() == kMaxReadKeys);
}
