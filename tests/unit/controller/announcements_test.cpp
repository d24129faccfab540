#include "restarter/controller/announcements.hpp"

#include <catch2/catch.hpp>

using restarter::controller::Announcements;
using MonotonicTime = restarter::base::Clock::MonotonicTime;
using namespace std::chrono_literals;

TEST_CASE("a state is announced once until it changes or is forgotten", "[controller][announcements]") {
  Announcements memory;
  CHECK(memory.once("ns/web", "held", "a"));
  CHECK_FALSE(memory.once("ns/web", "held", "a"));
  CHECK(memory.once("ns/web", "dry-run", "a"));  // topics apart
  CHECK(memory.once("ns/api", "held", "a"));     // keys apart
  CHECK(memory.once("ns/web", "held", "b"));
  CHECK_FALSE(memory.once("ns/web", "held", "b"));
  memory.forget("ns/web", "held");
  CHECK(memory.once("ns/web", "held", "b"));
  CHECK_FALSE(memory.once("ns/web", "dry-run", "a"));
  memory.forget("ns/web");
  CHECK(memory.once("ns/web", "dry-run", "a"));
  CHECK_FALSE(memory.once("ns/api", "held", "a"));  // another key's topics stay
}

TEST_CASE("an interval announcement repeats only after its interval", "[controller][announcements]") {
  Announcements memory;
  const MonotonicTime start{};
  CHECK(memory.every("uid", "blocked", start, 10min));
  CHECK_FALSE(memory.every("uid", "blocked", start + 9min, 10min));
  CHECK(memory.every("uid", "blocked", start + 10min, 10min));
  CHECK_FALSE(memory.every("uid", "blocked", start + 15min, 10min));
}

TEST_CASE("a full memory drops the entry set longest ago", "[controller][announcements]") {
  Announcements memory(2);
  CHECK(memory.once("a", "t", "1"));
  CHECK(memory.once("b", "t", "1"));
  CHECK(memory.once("a", "t", "2"));  // set again: now the newest
  CHECK(memory.once("c", "t", "1"));  // drops b
  CHECK(memory.size() == 2);
  CHECK_FALSE(memory.once("a", "t", "2"));
  CHECK_FALSE(memory.once("c", "t", "1"));
  CHECK(memory.once("b", "t", "1"));  // forgotten: announced again
}
