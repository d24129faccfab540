// Benchmark (a measurement, not a test): the cost of a content digest per object, plain SHA-256
// (core::contentDigest) against HMAC-SHA256 (core::keyedContentDigest), on ConfigMaps of a given
// data size. The controller hashes each object whose content it reads twice per event, both times
// keyed (the h2 digest, and the h1 one or, during a rotation, the h2 one under the previous key;
// docs/architecture.md, "Keyed digests"): about two HMACs where trees before keys paid one of each.
//
//   digest_bench [BYTES [OBJECTS [ROUNDS]]]   defaults 1024 10000 11
// prints, per kind, the median and the range over ROUNDS of the time for OBJECTS objects, and
// per object.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/core/content.hpp"

using namespace restarter;

namespace {

template <class Fn>
std::vector<double> timeRounds(int rounds, const std::vector<nlohmann::json>& objects, Fn&& fn) {
  std::vector<double> ms;
  for (int r = 0; r < rounds; ++r) {
    const auto start = std::chrono::steady_clock::now();
    std::size_t sink = 0;
    for (const auto& object : objects) sink += fn(object)[0];
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (sink == 1) std::puts("");  // keeps the work observable
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

void report(const char* name, const std::vector<double>& ms, std::size_t objects) {
  const double median = ms[ms.size() / 2];
  std::printf("%-6s median %.2f ms (%.2f-%.2f) for %zu objects, %.2f us per object\n", name, median, ms.front(),
              ms.back(), objects, median * 1000.0 / static_cast<double>(objects));
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t bytes = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1024;
  const std::size_t count = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 10000;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 11;
  std::vector<nlohmann::json> objects;
  objects.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    objects.push_back({{"data", {{"config", std::string(bytes, static_cast<char>('a' + i % 26))}}}});
  }
  const auto key = core::DigestKey::fromBytes(std::string(core::kDigestKeySize, 'k'));
  if (!key) return 1;
  const auto plain = timeRounds(rounds, objects, [](const nlohmann::json& o) {
    return *core::contentDigest(o, core::RefKind::ConfigMap);
  });
  const auto keyed = timeRounds(rounds, objects, [&key](const nlohmann::json& o) {
    return *core::keyedContentDigest(o, core::RefKind::ConfigMap, *key);
  });
  report("plain", plain, count);
  report("hmac", keyed, count);
  return 0;
}
