#include "restarter/core/base64.hpp"

#include <string>

#include <catch2/catch.hpp>

using namespace restarter::core;

TEST_CASE("base64 encodes as RFC 4648 with padding", "[base64]") {
  CHECK(base64Encode("") == "");
  CHECK(base64Encode("f") == "Zg==");
  CHECK(base64Encode("fo") == "Zm8=");
  CHECK(base64Encode("foo") == "Zm9v");
  CHECK(base64Encode("foob") == "Zm9vYg==");
  CHECK(base64Encode("fooba") == "Zm9vYmE=");
  CHECK(base64Encode("foobar") == "Zm9vYmFy");
  CHECK(base64Encode(std::string("\xfb\xff\x00", 3)) == "+/8A");  // the last two letters and NUL
  CHECK(base64Encode(std::string(100, 'x')).find('\n') == std::string::npos);
}

TEST_CASE("base64 decodes padded text and skips whitespace", "[base64]") {
  CHECK(base64Decode("") == std::string());
  CHECK(base64Decode("YQ==") == std::string("a"));
  CHECK(base64Decode("YWI=") == std::string("ab"));
  CHECK(base64Decode("YWJj") == std::string("abc"));
  CHECK(base64Decode("YW\nJj") == std::string("abc"));
  CHECK(base64Decode(" Zm9v\r\n\tYmFy\n") == std::string("foobar"));
  CHECK(base64Decode("+/8A") == std::string("\xfb\xff\x00", 3));
}

TEST_CASE("base64 refuses text that is not padded base64", "[base64]") {
  CHECK_FALSE(base64Decode("YWJ").has_value());  // unpadded
  CHECK_FALSE(base64Decode("YQ=").has_value());  // padded short
  CHECK_FALSE(base64Decode("Y").has_value());
  CHECK_FALSE(base64Decode("!!!!").has_value());
  CHECK_FALSE(base64Decode("YW-j").has_value());  // the URL alphabet is another encoding
  CHECK_FALSE(base64Decode("Y===").has_value());  // padding where data must be
  CHECK_FALSE(base64Decode("====").has_value());
  CHECK_FALSE(base64Decode("YQ=a").has_value());      // data after padding
  CHECK_FALSE(base64Decode("YQ==YQ==").has_value());  // a second quartet after padding
}

TEST_CASE("base64 decoding inverts encoding for every byte value", "[base64]") {
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  for (std::size_t length = 0; length <= bytes.size(); length += 37) {
    const std::string data = bytes.substr(0, length);
    CHECK(base64Decode(base64Encode(data)) == data);
  }
  CHECK(base64Decode(base64Encode(bytes)) == bytes);
}
