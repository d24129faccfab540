#include "restarter/webhook/fetch.hpp"

#include <atomic>
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

using namespace restarter;
using namespace restarter::webhook;
using namespace std::chrono_literals;

namespace {

std::vector<core::Reference> refs(int n) {
  std::vector<core::Reference> out;
  for (int i = 0; i < n; ++i) out.push_back({core::RefKind::ConfigMap, "cm-" + std::to_string(i), false});
  out.push_back({core::RefKind::Secret, "cm-0", false});
  return out;
}

}  // namespace

TEST_CASE("fetch: every reference is answered with its own state", "[fetch]") {
  const ObjectGetter get = [](core::RefKind kind, const std::string& ns, const std::string& name) {
    CHECK(ns == "ns1");
    if (name == "cm-1") return core::ObjectState::absent();
    return core::ObjectState::present(std::string(core::refKindName(kind)) + "-" + name, "1", false);
  };
  const auto states = fetchReferences(get, "ns1", refs(3), 5s);
  REQUIRE(states.size() == 4);
  CHECK(states.at({core::RefKind::ConfigMap, "cm-0"}).uid == "configmap-cm-0");
  CHECK(states.at({core::RefKind::Secret, "cm-0"}).uid == "secret-cm-0");
  CHECK(states.at({core::RefKind::ConfigMap, "cm-1"}).presence == core::Presence::Absent);
}

TEST_CASE("fetch: lookups run in parallel", "[fetch]") {
  // Four lookups of 300 ms each finish well under their 1.2 s sum.
  const ObjectGetter get = [](core::RefKind, const std::string&, const std::string&) {
    std::this_thread::sleep_for(300ms);
    return core::ObjectState::present("u", "1", false);
  };
  const auto start = std::chrono::steady_clock::now();
  const auto states = fetchReferences(get, "ns1", refs(3), 5s);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(elapsed < 1000ms);
  for (const auto& [key, state] : states) CHECK(state.presence == core::Presence::Present);
}

TEST_CASE("fetch: a lookup that misses the deadline is unknown", "[fetch]") {
  auto release = std::make_shared<std::atomic<bool>>(false);
  const ObjectGetter get = [release](core::RefKind, const std::string&, const std::string& name) {
    if (name == "cm-1") {
      while (!*release) std::this_thread::sleep_for(5ms);
    }
    return core::ObjectState::present("u", "1", false);
  };
  const auto states = fetchReferences(get, "ns1", refs(2), 100ms);
  *release = true;  // the straggler finishes after we returned: it must not touch freed memory
  const auto& late = states.at({core::RefKind::ConfigMap, "cm-1"});
  CHECK(late.presence == core::Presence::Unknown);
  CHECK(late.problem == "no answer within 100 ms");
  CHECK(states.at({core::RefKind::ConfigMap, "cm-0"}).presence == core::Presence::Present);
  std::this_thread::sleep_for(50ms);
}

TEST_CASE("fetch: a throwing getter gives unknown", "[fetch]") {
  const ObjectGetter get = [](core::RefKind, const std::string&, const std::string&) -> core::ObjectState {
    throw std::runtime_error("boom");
  };
  const auto states = fetchReferences(get, "ns1", refs(2), 1s);
  for (const auto& [key, state] : states) {
    CHECK(state.presence == core::Presence::Unknown);
    CHECK(state.problem == "lookup failed: boom");
  }
}
