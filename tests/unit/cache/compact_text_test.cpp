#include "restarter/cache/compact_text.hpp"

#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

using restarter::cache::CompactUid;
using restarter::cache::SharedText;

TEST_CASE("an apiserver uid is kept as 16 bytes and comes back as the same text", "[cache][compact]") {
  const std::string text = "0b0e6f1c-9a2d-4c3e-8f10-a1b2c3d4e5f6";
  const CompactUid uid(text);
  CHECK(uid.compact());
  CHECK(uid.str() == text);
  CHECK_FALSE(uid.empty());
  CHECK(uid == CompactUid("0b0e6f1c-9a2d-4c3e-8f10-a1b2c3d4e5f6"));
  CHECK_FALSE(uid == CompactUid("0b0e6f1c-9a2d-4c3e-8f10-a1b2c3d4e5f7"));
  CHECK(CompactUid("00000000-0000-0000-0000-000000000000").str() == "00000000-0000-0000-0000-000000000000");
  // The size of the std::string it replaces, without the string's heap copy.
  STATIC_REQUIRE(sizeof(CompactUid) <= sizeof(std::string));
}

TEST_CASE("a uid that is not a canonical lower-case UUID is kept as its text", "[cache][compact]") {
  for (const char* text : {"u1", "0B0E6F1C-9A2D-4C3E-8F10-A1B2C3D4E5F6", "0b0e6f1c+9a2d-4c3e-8f10-a1b2c3d4e5f6",
                           "0b0e6f1c-9a2d-4c3e-8f10-a1b2c3d4e5f", "0b0e6f1c-9a2d-4c3e-8f10-a1b2c3d4e5fg",
                           "0b0e6f1c9a2d-4c3e-8f10-a1b2c3d4e5f6-", "0b0e6f1c-9a2d-4c3e-8f10-a1b2c3d4e5f6x"}) {
    INFO(text);
    const CompactUid uid(text);
    CHECK_FALSE(uid.compact());
    CHECK(uid.str() == text);
    CHECK(uid == CompactUid(text));
  }
  // The same value in either form is never equal to the other form's neighbour.
  CHECK_FALSE(CompactUid("0B0E6F1C-9A2D-4C3E-8F10-A1B2C3D4E5F6") ==
              CompactUid("0b0e6f1c-9a2d-4c3e-8f10-a1b2c3d4e5f6"));
  const CompactUid empty;
  CHECK(empty.empty());
  CHECK(empty.str().empty());
  CHECK(CompactUid("").empty());
  CHECK(empty == CompactUid(""));
}

TEST_CASE("a copied uid is equal and independent of its original", "[cache][compact]") {
  CompactUid text("u-1");
  CompactUid copy = text;
  CHECK(copy == text);
  text = CompactUid("u-2");
  CHECK(copy.str() == "u-1");
  copy = CompactUid("0b0e6f1c-9a2d-4c3e-8f10-a1b2c3d4e5f6");
  CHECK(copy.compact());
  copy = text;
  CHECK(copy.str() == "u-2");
}

TEST_CASE("shared text is one copy per value and is dropped with its last holder", "[cache][compact]") {
  const std::size_t before = SharedText::heldValues();
  {
    const SharedText a("a-namespace-longer-than-fifteen");
    const SharedText b(std::string("a-namespace-longer-than-fifteen"));
    CHECK(&a.str() == &b.str());  // one copy
    CHECK(a == b);
    CHECK(a.str() == "a-namespace-longer-than-fifteen");
    CHECK(SharedText::heldValues() == before + 1);
    const SharedText other("another-namespace");
    CHECK_FALSE(a == other);
    CHECK(SharedText::heldValues() == before + 2);
  }
  CHECK(SharedText::heldValues() == before);
  const SharedText empty;
  CHECK(empty.empty());
  CHECK(empty.str().empty());
  CHECK(empty == SharedText(""));
}

TEST_CASE("the shared-text pool stays within twice the values held however many come and go",
          "[cache][compact]") {
  // 10,000 namespaces created and deleted one after the other: a pool that kept every value it
  // ever saw would hold 10,000 entries.
  for (int i = 0; i < 10000; ++i) {
    const SharedText text("namespace-" + std::to_string(i));
    CHECK(text.str() == "namespace-" + std::to_string(i));
  }
  CHECK(SharedText::poolEntries() <= 64);
}

TEST_CASE("shared text can be made and dropped from many threads at once", "[cache][compact]") {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 2000; ++i) {
        const SharedText text("ns-" + std::to_string((i + t) % 50));
        const SharedText copy =
            text;  // NOLINT(performance-unnecessary-copy-initialization): the copy is what is tested
        if (!(copy == text)) throw std::logic_error("a copy differs");
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  SUCCEED("no race (the TSan build runs this too)");
}
