#include "restarter/core/yaml_writer.hpp"

#include <string>

#include <catch2/catch.hpp>

using namespace restarter::core;
using nlohmann::json;
using nlohmann::ordered_json;

// Each expected text below was also read back with PyYAML (YAML 1.1, the strictest about which
// plain words are not strings) and gave the document again.

TEST_CASE("yaml quotes strings that YAML would read as another type", "[yaml]") {
  const ordered_json strings =
      ordered_json::array({"", "true", "False", "null", "~", "yes", "No", "on", "OFF", "y", "<<", "=", "123",
                           "1.5", "-1", "+1", ".inf", "0x1F", "2027-01-15T08:00:00Z"});
  CHECK(toYaml(strings) == R"(- ""
- "true"
- "False"
- "null"
- "~"
- "yes"
- "No"
- "on"
- "OFF"
- "y"
- "<<"
- "="
- "123"
- "1.5"
- "-1"
- "+1"
- ".inf"
- "0x1F"
- "2027-01-15T08:00:00Z"
)");
}

TEST_CASE("yaml quotes strings whose characters a plain scalar cannot hold", "[yaml]") {
  const ordered_json strings = ordered_json::array(
      {" lead",       "trail ",     "a: b", "a:b",         "x #y",      "-x",
       "- x",         "[a]",        "*a",   "line\nbreak", "tab\there", "say \"hi\"",
       "back\\slash", "\x01",       "ünï",  "\u2028",      "\u0085",    "containers[app].image",
       "Ignore",      "plain text", "a[b]"});
  CHECK(toYaml(strings) == R"(- " lead"
- "trail "
- "a: b"
- "a:b"
- "x #y"
- "-x"
- "- x"
- "[a]"
- "*a"
- "line\nbreak"
- "tab\there"
- say "hi"
- back\slash
- "\x01"
- "ünï"
- "\u2028"
- "\u0085"
- containers[app].image
- Ignore
- plain text
- a[b]
)");
}

TEST_CASE("yaml writes nested objects and arrays in block style and empty ones inline", "[yaml]") {
  const ordered_json document = {
      {"metadata",
       {{"name", "web"},
        {"labels", ordered_json::object()},
        {"annotations", {{"restarter.stackable.tech/last-rollout", "2027-01-15T08:00:00Z"}}}}},
      {"webhooks",
       ordered_json::array({{{"name", "w"},
                             {"rules", ordered_json::array({{{"operations", {"CREATE", "UPDATE"}}}})},
                             {"timeoutSeconds", 5},
                             {"sideEffects", "None"}}})},
      {"matrix",
       ordered_json::array({ordered_json::array({1, 2}), ordered_json::array(), ordered_json::object()})},
      {"none", nullptr},
      {"on", true},
      {"ratio", 0.25},
      {"big", 1e20}};
  CHECK(toYaml(document) == R"(metadata:
  name: web
  labels: {}
  annotations:
    restarter.stackable.tech/last-rollout: "2027-01-15T08:00:00Z"
webhooks:
  - name: w
    rules:
      - operations:
          - CREATE
          - UPDATE
    timeoutSeconds: 5
    sideEffects: None
matrix:
  - - 1
    - 2
  - []
  - {}
none: ~
"on": true
ratio: 0.25
big: 1.0e+20
)");
}

TEST_CASE("yaml keeps the key order of the document it is given", "[yaml]") {
  CHECK(toYaml(json{{"b", 1}, {"a", 2}}) == "a: 2\nb: 1\n");  // json sorts its keys
  CHECK(toYaml(ordered_json{{"b", 1}, {"a", 2}}) == "b: 1\na: 2\n");
}

TEST_CASE("yaml writes a document that is not a collection on one line", "[yaml]") {
  CHECK(toYaml(json::object()) == "{}\n");
  CHECK(toYaml(json::array()) == "[]\n");
  CHECK(toYaml(json(nullptr)) == "~\n");
  CHECK(toYaml(json("text")) == "text\n");
  CHECK(toYaml(json("---")) == "\"---\"\n");
  CHECK(toYaml(json(-7)) == "-7\n");
  CHECK(toYaml(json(18446744073709551615ULL)) == "18446744073709551615\n");
  CHECK(toYaml(json(1e-7)) == "1.0e-07\n");
}

TEST_CASE("yaml writes a key longer than YAML allows implicitly as an explicit one", "[yaml]") {
  const std::string key(1025, 'k');
  CHECK(toYaml(json{{key, 1}}) == "? " + key + "\n: 1\n");
  CHECK(toYaml(json{{key, {{"a", 1}}}}) == "? " + key + "\n:\n  a: 1\n");
  const std::string fits(1024, 'k');
  CHECK(toYaml(json{{fits, 1}}) == fits + ": 1\n");
}
