#include "restarter/cache/list_watch.hpp"

#include <catch2/catch.hpp>

#include "../kube/fakes.hpp"
#include "restarter/testing/fake_clock.hpp"
#include "restarter/testing/fake_random.hpp"

using restarter::core::ErrorKind;
using namespace restarter::cache;
using namespace restarter::kube;
using namespace restarter::kube::testing;
using restarter::testing::FakeClock;
using restarter::testing::FakeRandom;
using namespace std::chrono_literals;

namespace {

std::string lwObject(const std::string& name, const std::string& rv) {
  return R"({"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":")" + name + R"(","resourceVersion":")" +
         rv + R"("}})";
}
std::string lwList(const std::vector<std::string>& items, const std::string& rv) {
  std::string list =
      R"({"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":")" + rv + R"("},"items":[)";
  for (std::size_t i = 0; i < items.size(); ++i) list += (i ? "," : "") + items[i];
  return list + "]}";
}
std::string lwEvent(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}\n";
}

// Records what the step hands it, as "list a", "commit 5", "ADDED b", "error Gone".
struct RecordingSink : ListWatchSink {
  std::vector<std::string> log;
  std::size_t stage(std::vector<nlohmann::json>&& page) override {
    for (const auto& item : page) log.push_back("list " + item["metadata"]["name"].get<std::string>());
    return 0;
  }
  void commitList(const std::string& resourceVersion, std::size_t) override {
    log.push_back("commit " + resourceVersion);
  }
  void discardStaged() override { log.push_back("discard"); }
  void apply(WatchEvent&& event) override {
    const char* type = event.type == WatchEvent::Type::Added      ? "ADDED"
                       : event.type == WatchEvent::Type::Modified ? "MODIFIED"
                       : event.type == WatchEvent::Type::Deleted  ? "DELETED"
                                                                  : "BOOKMARK";
    log.push_back(std::string(type) + " " + event.object["metadata"]["name"].get<std::string>());
  }
  void report(const restarter::core::Error& error, bool listing) override {
    log.push_back(std::string(listing ? "list error " : "watch error ") +
                  std::string(restarter::core::errorKindName(error.kind)));
  }
};

struct StepHarness {
  FakeClock clock;
  FakeRandom random;
  FakeProcessRunner runner;
  FakeTransport* transport = nullptr;
  std::unique_ptr<Client> client;
  RecordingSink sink;

  StepHarness() {
    auto fake = std::make_unique<FakeTransport>();
    transport = fake.get();
    ConnectionConfig config;
    config.token = "t";
    client = std::make_unique<Client>(std::move(fake), makeAuthenticator(config, clock, runner), "ns", clock);
  }
  ListWatchOptions options(int maxFailures) const {
    ListWatchOptions out;
    out.resource = resources::configMaps();
    out.namespace_ = "ns";
    out.backoff.jitter = 0;
    out.maxFailures = maxFailures;
    return out;
  }
};

}  // namespace

TEST_CASE("the list/watch step lists then watches from the list's version and relists on 410 Gone",
          "[cache][list_watch]") {
  StepHarness h;
  h.transport->push(ok(lwList({lwObject("a", "1")}, "5")));
  h.transport->push(stream({lwEvent("ADDED", lwObject("b", "6")), lwEvent("ERROR", R"({"code":410})")}));
  h.transport->push(ok(lwList({lwObject("a", "1"), lwObject("b", "6")}, "9")));
  ListWatch step(*h.client, h.options(0), h.sink, h.clock, h.random);
  std::stop_source stop;
  REQUIRE(step.step(stop.get_token()));
  CHECK(step.resourceVersion() == "5");
  REQUIRE(step.step(stop.get_token()));
  CHECK(step.resourceVersion().empty());  // 410: list again, at once
  REQUIRE(step.step(stop.get_token()));
  CHECK(step.resourceVersion() == "9");
  CHECK(h.sink.log == std::vector<std::string>{"list a", "commit 5", "ADDED b", "watch error gone", "list a",
                                               "list b", "commit 9"});
  CHECK(h.clock.waits().empty());
  auto requests = h.transport->requests();
  REQUIRE(requests.size() == 3);
  CHECK(requests[1].path.find("resourceVersion=5") != std::string::npos);
}

TEST_CASE("the list/watch step backs off exponentially and gives up after maxFailures in a row",
          "[cache][list_watch]") {
  StepHarness h;
  h.transport->push(ok(lwList({}, "5")));
  h.transport->push(failure(ErrorKind::Unavailable, "connection refused"));
  h.transport->push(failure(ErrorKind::Unavailable, "connection refused"));
  h.transport->push(failure(ErrorKind::Unavailable, "connection refused"));
  ListWatch step(*h.client, h.options(3), h.sink, h.clock, h.random);
  std::stop_source stop;
  int steps = 0;
  while (step.step(stop.get_token())) ++steps;
  CHECK(steps == 3);  // the list and two failed watches; the third failure gives up
  CHECK(step.gaveUp());
  CHECK(step.resourceVersion() == "5");  // a failed watch resumes from where it was
  CHECK(h.clock.waits() == std::vector<std::chrono::milliseconds>{800ms, 1600ms});
}
