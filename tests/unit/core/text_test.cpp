#include "restarter/core/text.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace restarter::core;

TEST_CASE("truncateUtf8 never cuts a character in two", "[text]") {
  CHECK(truncateUtf8("short", 60) == "short");
  CHECK(truncateUtf8("abcdef", 3) == "abc");
  CHECK(truncateUtf8("", 0).empty());
  // "ü" is two bytes (C3 BC), "€" three (E2 82 AC), "😀" four (F0 9F 98 80).
  CHECK(truncateUtf8("aü", 2) == "a");
  CHECK(truncateUtf8("aü", 3) == "aü");
  CHECK(truncateUtf8("€€", 4) == "€");
  CHECK(truncateUtf8("€€", 5) == "€");
  CHECK(truncateUtf8("😀x", 3).empty());
  CHECK(truncateUtf8("😀x", 4) == "😀");
  // Every cut of a mixed text serialises as JSON (nlohmann throws on invalid UTF-8).
  const std::string mixed = "name-ü€😀-x";
  for (std::size_t n = 0; n <= mixed.size(); ++n) {
    CHECK_NOTHROW(nlohmann::json(truncateUtf8(mixed, n)).dump());
  }
}

TEST_CASE("truncateUtf8 keeps bytes that are not UTF-8 as they are", "[text]") {
  CHECK(truncateUtf8("\xff\xfe\xfd", 2) == "\xff\xfe");
}
