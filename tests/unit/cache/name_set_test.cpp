#include "restarter/cache/name_set.hpp"

#include <string>

#include <catch2/catch.hpp>

using restarter::cache::NameSet;

TEST_CASE("a name set answers membership for the keys put in it", "[cache][name_set]") {
  NameSet set;
  CHECK(set.insert("ns/a"));
  CHECK_FALSE(set.insert("ns/a"));
  CHECK(set.insert("ns/b"));
  CHECK(set.contains("ns/a"));
  CHECK_FALSE(set.contains("ns/c"));
  CHECK_FALSE(set.contains("other/a"));
  CHECK(set.size() == 2);
  CHECK(set.erase("ns/a"));
  CHECK_FALSE(set.erase("ns/a"));
  CHECK_FALSE(set.contains("ns/a"));
  CHECK(set.size() == 1);
  set.clear();
  CHECK(set.size() == 0);
}

TEST_CASE("a name set digests a key the same way every time in one process", "[cache][name_set]") {
  CHECK(NameSet::digestOf("ns/a") == NameSet::digestOf("ns/a"));
  CHECK(NameSet::digestOf("ns/a") != NameSet::digestOf("ns/b"));
  CHECK(NameSet::digestOf("") != NameSet::digestOf("a"));
}

TEST_CASE("a moved name set keeps its keys and leaves an empty one usable", "[cache][name_set]") {
  NameSet first;
  first.insert("ns/a");
  NameSet second = std::move(first);
  CHECK(second.contains("ns/a"));
  CHECK(first.size() == 0);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  CHECK(first.insert("ns/b"));
  first = std::move(second);
  CHECK(first.contains("ns/a"));
}

// The table costs a slot (8 bytes) and about a byte of metadata per bucket; Boost grows it to
// keep at most 87.5 % of the buckets full, so a key costs between 10 and 20 bytes, well inside
// the 64 an unreferenced object may cost (docs/architecture.md, "Memory that follows references").
TEST_CASE("a name set of many keys holds at most 24 bytes of table per key", "[cache][name_set]") {
  NameSet set;
  for (int i = 0; i < 100'000; ++i)
    set.insert("namespace-" + std::to_string(i % 100) + "/object-" + std::to_string(i));
  CHECK(set.size() == 100'000);
  CHECK(set.tableBytes() <= 24 * set.size());
}
