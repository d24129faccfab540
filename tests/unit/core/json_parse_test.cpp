#include "restarter/core/json_parse.hpp"

#include <catch2/catch.hpp>

using namespace restarter::core;
using nlohmann::json;

namespace {

constexpr JsonLimits kRoomy{1 << 20, kMaxJsonDepth};

// `levels` objects nested in each other: {"a":{"a":...1...}}.
std::string nestedObjects(std::size_t levels) {
  std::string text;
  for (std::size_t i = 0; i < levels; ++i) text += "{\"a\":";
  text += "1";
  text.append(levels, '}');
  return text;
}

std::string messageOf(const Result<json>& result) {
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().kind == ErrorKind::InvalidInput);
  return result.error().message;
}

}  // namespace

TEST_CASE("the nesting depth counts brackets outside strings only", "[json_parse]") {
  CHECK(jsonNestingDepth("1", 10) == 0);
  CHECK(jsonNestingDepth("[]", 10) == 1);
  CHECK(jsonNestingDepth("[{}]", 10) == 2);
  CHECK(jsonNestingDepth("[[], [[]], {}]", 10) == 3);
  CHECK(jsonNestingDepth(R"({"a":"[[[{{{"})", 10) == 1);
  // An escaped quote does not end the string and an escaped backslash does not escape the quote.
  CHECK(jsonNestingDepth(R"(["\"[[[", "\\", [1]])", 10) == 2);
  CHECK(jsonNestingDepth(R"(["\u005b[["])", 10) == 1);
  // Closing brackets that open nothing cannot hide later opening ones.
  CHECK(jsonNestingDepth("]]]][[", 10) == 2);
}

TEST_CASE("the nesting depth scan stops just above its limit", "[json_parse]") {
  CHECK(jsonNestingDepth(std::string(100000, '['), 512) == 513);
  CHECK(jsonNestingDepth(nestedObjects(512), 512) == 512);
}

TEST_CASE("a text within both limits parses", "[json_parse]") {
  auto doc = parseJson(R"({"a":[1,2,{"b":"c"}],"d":null})", kRoomy);
  REQUIRE(doc.ok());
  CHECK((*doc)["a"][2]["b"] == "c");
  CHECK((*doc)["d"].is_null());
}

TEST_CASE("a text exactly at the depth limit parses and one level more does not", "[json_parse]") {
  auto at = parseJson(nestedObjects(kMaxJsonDepth), kRoomy);
  REQUIRE(at.ok());
  CHECK(at->is_object());
  CHECK(messageOf(parseJson(nestedObjects(kMaxJsonDepth + 1), kRoomy)) ==
        "JSON text nests deeper than 512 levels");
  CHECK(parseJson("[[[]]]", JsonLimits{100, 3}).ok());
  CHECK_FALSE(parseJson("[[[[]]]]", JsonLimits{100, 3}).ok());
}

TEST_CASE("a 100000 level deep text is refused without being built", "[json_parse]") {
  // The attack that crashed the webhook: 600 KB of nested objects. A parse that built the tree and
  // copied it would overflow the stack here (and under ASan fail this test).
  const std::string deep = nestedObjects(100000);
  CHECK(messageOf(parseJson(deep, JsonLimits{deep.size(), kMaxJsonDepth})).find("nests deeper") !=
        std::string::npos);
  const std::string brackets = std::string(100000, '[') + std::string(100000, ']');
  CHECK(messageOf(parseJson(brackets, JsonLimits{brackets.size(), kMaxJsonDepth})).find("nests deeper") !=
        std::string::npos);
}

TEST_CASE("a text exactly at the size limit parses and one byte more does not", "[json_parse]") {
  const std::string text = R"({"k":"0123456789"})";  // 18 bytes
  CHECK(parseJson(text, JsonLimits{18, kMaxJsonDepth}).ok());
  CHECK(messageOf(parseJson(text, JsonLimits{17, kMaxJsonDepth})) ==
        "JSON text of 18 bytes exceeds the limit of 17 bytes");
}

TEST_CASE("a text that is not JSON is an error and never a throw", "[json_parse]") {
  for (const char* text : {"", "{", "[1,]", "{\"a\" 1}", "nul", "[1] [2]", "/* c */ 1", "\"\xff\""}) {
    CAPTURE(text);
    CHECK(messageOf(parseJson(text, kRoomy)) == "not valid JSON");
  }
}

TEST_CASE("a member filter drops what it does not keep while parsing", "[json_parse]") {
  const std::string text =
      R"({"keep":{"a":1,"drop":{"x":[1,2,3]},"b":{"c":2}},"drop":[{"y":1}],"list":[{"drop":1,"z":{"drop":2}}]})";
  std::vector<std::vector<std::string>> asked;
  auto doc = parseJson(text, kRoomy, [&asked](const std::vector<std::string>& path) {
    asked.push_back(path);
    return path.back() != "drop";
  });
  REQUIRE(doc.ok());
  // Members of objects inside arrays are kept with their array: the filter is not asked.
  CHECK(*doc == json::parse(R"({"keep":{"a":1,"b":{"c":2}},"list":[{"drop":1,"z":{"drop":2}}]})"));
  // Each member reached through objects alone is asked about once with its full path; nothing
  // inside a member already dropped is.
  using Path = std::vector<std::string>;
  CHECK(asked == std::vector<Path>{Path{"keep"}, Path{"keep", "a"}, Path{"keep", "drop"}, Path{"keep", "b"},
                                   Path{"keep", "b", "c"}, Path{"drop"}, Path{"list"}});
}

TEST_CASE("a member filter sees paths again after an array ends", "[json_parse]") {
  std::vector<std::vector<std::string>> asked;
  auto doc = parseJson(R"({"a":[[{"x":1}]],"b":{"c":[]},"d":{"e":1}})", kRoomy,
                       [&asked](const std::vector<std::string>& path) {
                         asked.push_back(path);
                         return path != std::vector<std::string>{"d", "e"};
                       });
  REQUIRE(doc.ok());
  CHECK(*doc == json::parse(R"({"a":[[{"x":1}]],"b":{"c":[]},"d":{}})"));
  using Path = std::vector<std::string>;
  CHECK(asked == std::vector<Path>{Path{"a"}, Path{"b"}, Path{"b", "c"}, Path{"d"}, Path{"d", "e"}});
}

TEST_CASE("a member filter does not lift the limits", "[json_parse]") {
  const auto keepNothing = [](const std::vector<std::string>&) { return false; };
  // Even inside a member that would be dropped, too deep is too deep: the text is refused whole.
  const std::string deep = "{\"drop\":" + nestedObjects(kMaxJsonDepth) + "}";
  CHECK(messageOf(parseJson(deep, kRoomy, keepNothing)).find("nests deeper") != std::string::npos);
  CHECK(messageOf(parseJson("{\"a\":1}", JsonLimits{6, kMaxJsonDepth}, keepNothing)).find("exceeds") !=
        std::string::npos);
  CHECK(messageOf(parseJson("{\"a\":", kRoomy, keepNothing)) == "not valid JSON");
  auto empty = parseJson(R"({"a":{"b":1}})", kRoomy, keepNothing);
  REQUIRE(empty.ok());
  CHECK(*empty == json::object());
}

TEST_CASE("a member filter that keeps everything builds what the plain parse builds", "[json_parse]") {
  const auto keepAll = [](const std::vector<std::string>&) { return true; };
  for (const char* text :
       {"1", "-2", "18446744073709551615", "2.5e3", "\"s\\u00fc\\n\"", "null", "true", "[]", "{}",
        "[[],{},[1,[2,{\"a\":[3]}]]]", R"({"a":1,"a":2,"b":{"c":[{"d":null,"e":false}],"f":{}}})",
        R"({"":{"":""},"x\"y":[1.5,-0.0,1e-300]})"}) {
    CAPTURE(text);
    auto filtered = parseJson(text, kRoomy, keepAll);
    auto plain = parseJson(text, kRoomy);
    REQUIRE(filtered.ok());
    REQUIRE(plain.ok());
    CHECK(*filtered == *plain);
    CHECK(filtered->dump() == plain->dump());
  }
}

TEST_CASE("a member filter drops scalars and containers alike and keeps their siblings", "[json_parse]") {
  const auto dropB = [](const std::vector<std::string>& path) { return path.back() != "b"; };
  auto doc =
      parseJson(R"({"a":1,"b":2,"c":{"b":[1,{"x":{}}],"d":3},"e":[{"b":4}],"b":{"z":1},"f":5})", kRoomy, dropB);
  REQUIRE(doc.ok());
  CHECK(*doc == json::parse(R"({"a":1,"c":{"d":3},"e":[{"b":4}],"f":5})"));
}
