// Outside input never crashes (docs/architecture.md, "No exception across modules"): kubeconfigs, watch
// streams, list bodies, Status bodies and ExecCredentials are truncated and byte-mutated many
// times (a fixed seed, so failures reproduce) and fed to the parsers. Each must answer with a
// value or an error; the sanitizer build catches memory errors. A cheap stand-in for the fuzz
// targets of tests/fuzz, which need clang's libFuzzer.

#include <random>

#include <catch2/catch.hpp>

#include "fakes.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/testing/fake_clock.hpp"

using namespace restarter::kube;
using namespace restarter::kube::testing;
using restarter::testing::FakeClock;

namespace {

constexpr int kRounds = 3000;

std::string mutate(const std::string& seed, std::mt19937& rng) {
  std::string out = seed;
  switch (rng() % 4) {
    case 0: out.resize(rng() % (out.size() + 1)); break;  // truncate
    case 1:
      for (int i = 0, n = 1 + static_cast<int>(rng() % 4); i < n && !out.empty(); ++i)
        out[rng() % out.size()] = static_cast<char>(rng() % 256);
      break;
    case 2:
      if (!out.empty()) out.erase(rng() % out.size(), 1 + rng() % 8);
      break;
    default: {
      static const char* tokens[] = {"{",  "}",       "[",  "]",  "\"", ":",  ",",       "null",
                                     "\n", "\\u0000", "- ", ": ", "&a", "*a", "!!binary"};
      out.insert(out.empty() ? 0 : rng() % out.size(), tokens[rng() % 15]);
    }
  }
  return out;
}

const char* kKubeconfig = R"(apiVersion: v1
kind: Config
current-context: c
clusters:
- name: k
  cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: Q0E=, tls-server-name: x}
users:
- name: u
  user:
    token: abc
    exec: {apiVersion: client.authentication.k8s.io/v1, command: p, args: [a], env: [{name: A, value: b}], interactiveMode: Never}
contexts:
- name: c
  context: {cluster: k, user: u, namespace: n}
)";

const std::string kWatch =
    R"({"type":"ADDED","object":{"kind":"PartialObjectMetadata","metadata":{"name":"a","resourceVersion":"1"}}})"
    "\n"
    R"({"type":"BOOKMARK","object":{"kind":"PartialObjectMetadata","metadata":{"resourceVersion":"2"}}})"
    "\n"
    R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})"
    "\n";

const std::string kList =
    R"({"kind":"PartialObjectMetadataList","metadata":{"resourceVersion":"5","continue":""},"items":[{"kind":"PartialObjectMetadata","metadata":{"name":"a"}}]})";

}  // namespace

TEST_CASE("mutated kubeconfigs give a config or an error", "[kube][robustness]") {
  std::mt19937 rng(1);
  for (int i = 0; i < kRounds; ++i) {
    auto config = resolveKubeconfig({{"/fuzz/config", mutate(kKubeconfig, rng)}}, LoadOptions{});
    if (!config) CHECK_FALSE(config.error().message.empty());
  }
}

TEST_CASE("mutated watch streams give events or an error", "[kube][robustness]") {
  std::mt19937 rng(2);
  for (int i = 0; i < kRounds; ++i) {
    std::string stream = mutate(kWatch, rng);
    WatchDecoder decoder;
    std::size_t at = 0;
    bool failed = false;
    while (at < stream.size() && !failed) {
      std::size_t n = 1 + rng() % 40;
      failed = !decoder.feed(std::string_view(stream).substr(at, n), [](WatchEvent&&) { return true; }).ok();
      at += n;
    }
    (void)decoder.finish();
  }
}

TEST_CASE("mutated answers to list and watch and exec give values or errors", "[kube][robustness]") {
  std::mt19937 rng(3);
  FakeClock clock;
  FakeProcessRunner runner;
  ConnectionConfig config;
  ExecConfig exec;
  exec.apiVersion = "client.authentication.k8s.io/v1";
  exec.command = "p";
  exec.interactiveMode = ExecConfig::InteractiveMode::Never;
  config.exec = exec;
  const std::string credential =
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"2030-01-01T00:00:00Z"}})";
  for (int i = 0; i < kRounds; ++i) {
    // A fresh client each round, so that no credential stays cached from an earlier round.
    auto fake = std::make_unique<FakeTransport>();
    FakeTransport* transport = fake.get();
    Client client(std::move(fake), makeAuthenticator(config, clock, runner), "n", clock);
    runner.outputs.push_back(ProcessOutput{0, mutate(credential, rng), ""});
    runner.outputs.push_back(ProcessOutput{0, credential, ""});
    (void)client.getRaw("/x");  // spends the mutated credential if it was cached; errors fine
    transport->push(ok(mutate(kList, rng)));
    ListOptions options;
    options.metadataOnly = true;
    (void)client.list(resources::secrets(), "n", options);
    transport->push(stream({mutate(kWatch, rng)}));
    (void)client.watch(resources::secrets(), "n", WatchOptions{}, [](WatchEvent&&) { return true; });
    transport->push(status(
        400 + static_cast<long>(rng() % 200),
        mutate(R"({"kind":"Status","code":409,"reason":"Conflict","details":{"retryAfterSeconds":3}})", rng),
        {{"retry-after", mutate("12", rng)}}));
    auto got = client.get(resources::configMaps(), "n", "a");
    if (!got) (void)retryAfter(got.error());
    runner.outputs.clear();
  }
  SUCCEED("no crash");
}
