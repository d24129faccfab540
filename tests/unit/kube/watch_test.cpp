#include "restarter/kube/watch.hpp"

#include <catch2/catch.hpp>

using restarter::core::ErrorKind;
using namespace restarter::kube;

namespace {
const std::string kAdded = R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"1"}}})";
const std::string kBookmark = R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})";
}  // namespace

TEST_CASE("events split across chunks at any byte are decoded whole", "[kube][watch]") {
  std::string stream = kAdded + "\n" + kBookmark + "\n";
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    WatchDecoder decoder;
    std::vector<WatchEvent> events;
    auto collect = [&](WatchEvent&& e) {
      events.push_back(std::move(e));
      return true;
    };
    REQUIRE(decoder.feed(std::string_view(stream).substr(0, cut), collect).ok());
    REQUIRE(decoder.feed(std::string_view(stream).substr(cut), collect).ok());
    REQUIRE(decoder.finish().ok());
    REQUIRE(events.size() == 2);
    CHECK(events[0].type == WatchEvent::Type::Added);
    CHECK(events[0].object["metadata"]["name"] == "a");
    CHECK(events[1].type == WatchEvent::Type::Bookmark);
  }
}

TEST_CASE("a stream cut mid-object is an error at finish", "[kube][watch]") {
  WatchDecoder decoder;
  int count = 0;
  REQUIRE(decoder
              .feed(kAdded + "\n" + kAdded.substr(0, 20),
                    [&](WatchEvent&&) {
                      ++count;
                      return true;
                    })
              .ok());
  CHECK(count == 1);
  auto end = decoder.finish();
  REQUIRE_FALSE(end.ok());
  CHECK(end.error().kind == ErrorKind::InvalidInput);
}

TEST_CASE("malformed lines and unexpected types are errors not crashes", "[kube][watch]") {
  for (const std::string& line :
       {std::string("{not json"), std::string("[1]"), std::string("\"x\""),
        std::string(R"({"type":5,"object":{}})"), std::string(R"({"type":"ADDED","object":"x"})"),
        std::string(R"({"type":"ADDED"})"), std::string(R"({"type":"SOMETHING","object":{}})"),
        std::string("\xff\xfe")}) {
    WatchDecoder decoder;
    auto status = decoder.feed(line + "\n", [](WatchEvent&&) { return true; });
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().kind == ErrorKind::InvalidInput);
    CHECK_FALSE(decoder.feed("{}\n", [](WatchEvent&&) { return true; }).ok());
  }
}

TEST_CASE("blank lines are skipped and the handler can stop early", "[kube][watch]") {
  WatchDecoder decoder;
  int count = 0;
  REQUIRE(
      decoder.feed("\n\r\n" + kAdded + "\n" + kAdded + "\n", [&](WatchEvent&&) { return ++count < 1; }).ok());
  CHECK(count == 1);
}

TEST_CASE("event type names", "[kube][watch]") {
  CHECK(std::string(watchEventTypeName(WatchEvent::Type::Deleted)) == "DELETED");
  CHECK(decodeWatchLine(R"({"type":"ERROR","object":{"kind":"Status"}})")->type == WatchEvent::Type::Error);
}

TEST_CASE("a watch line nested deeper than the depth limit is an error", "[kube][watch]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  WatchDecoder decoder;
  auto status =
      decoder.feed(R"({"type":"ADDED","object":{"a":)" + deep + "}}\n", [](WatchEvent&&) { return true; });
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().kind == ErrorKind::InvalidInput);
  CHECK(status.error().message == "watch event: JSON text nests deeper than 512 levels");
}
