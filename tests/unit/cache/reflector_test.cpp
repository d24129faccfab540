#include "restarter/cache/reflector.hpp"

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

std::string meta(const std::string& name, const std::string& rv) {
  return R"({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":")" + name +
         R"(","namespace":"ns","resourceVersion":")" + rv + R"("}})";
}
std::string page(const std::vector<std::string>& items, const std::string& rv, const std::string& cont = "") {
  std::string list =
      R"({"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":")" +
      rv + R"(","continue":")" + cont + R"("},"items":[)";
  for (std::size_t i = 0; i < items.size(); ++i) list += (i ? "," : "") + items[i];
  return list + "]}";
}
std::string event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}\n";
}
std::string statusJson(int code, const std::string& reason) {
  return R"({"kind":"Status","apiVersion":"v1","reason":")" + reason + R"(","code":)" + std::to_string(code) +
         "}";
}
std::string query(const Request& r, const std::string& key) {
  auto pos = r.path.find(key + "=");
  if (pos == std::string::npos) return {};
  auto end = r.path.find('&', pos);
  return r.path.substr(pos + key.size() + 1,
                       end == std::string::npos ? std::string::npos : end - pos - key.size() - 1);
}

// Runs a reflector over a scripted transport until the script is used up.
struct Harness {
  FakeClock clock;
  FakeRandom random;
  FakeProcessRunner runner;
  FakeTransport* transport = nullptr;
  std::unique_ptr<Client> client;
  Store store;
  std::vector<restarter::core::Error> errors;
  std::stop_source stop;

  Harness() {
    auto fake = std::make_unique<FakeTransport>();
    transport = fake.get();
    ConnectionConfig config;
    config.token = "t";
    client = std::make_unique<Client>(std::move(fake), makeAuthenticator(config, clock, runner), "ns", clock);
  }

  void run(ReflectorOptions options = {}) {
    options.resource = resources::configMaps();
    options.namespace_ = "ns";
    options.metadataOnly = true;
    options.pageSize = 2;
    options.backoff.jitter = 0;
    options.onError = [this](const restarter::core::Error& e) {
      errors.push_back(e);
      if (e.message.find("script ended") != std::string::npos) stop.request_stop();
    };
    Reflector reflector(*client, store, options, clock, random);
    reflector.run(stop.get_token());
    CHECK(reflector.state() == Reflector::State::Stopped);
  }
  std::vector<std::string> names() {
    std::vector<std::string> out;
    auto all = store.list();  // keep the Result alive: range-for over *temporary dangles
    for (const auto& o : *all) out.push_back((*o)["metadata"]["name"]);
    return out;
  }
};

}  // namespace

TEST_CASE("a paged list is swapped in whole then the watch resumes from its version", "[cache][reflector]") {
  Harness h;
  std::vector<std::size_t> sizesSeen;
  h.store.addHandlers({[&](const ObjectPtr&) { sizesSeen.push_back(h.store.size()); }, {}, {}});
  h.transport->push(ok(page({meta("a", "1"), meta("b", "2")}, "5", "c1")));
  h.transport->push(ok(page({meta("c", "3")}, "5")));
  h.transport->push(stream(
      {event("ADDED", meta("d", "6")), event("BOOKMARK", meta("", "8")), event("DELETED", meta("a", "9"))}));
  h.run();
  CHECK(h.names() == std::vector<std::string>{"b", "c", "d"});
  // The handlers of the initial list ran after all three objects were in the store.
  CHECK(sizesSeen == std::vector<std::size_t>{3, 3, 3, 4});  // then d was added
  auto r = h.transport->requests();
  REQUIRE(r.size() >= 4);
  CHECK(query(r[2], "resourceVersion") == "5");
  CHECK(query(r[2], "watch") == "1");
  // The server ended the stream normally: watch again from the last version seen (9).
  CHECK(query(r[3], "resourceVersion") == "9");
  CHECK(query(r[3], "watch") == "1");
}

std::string endOfInitialEvents(const std::string& rv) {
  return R"({"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":")" +
         rv + R"(","annotations":{"k8s.io/initial-events-end":"true"}}})";
}

ReflectorOptions streamingOptions() {
  ReflectorOptions options;
  options.streamingList = true;
  return options;
}

TEST_CASE("a streaming list is swapped in at its end bookmark and the same stream goes on as the watch",
          "[cache][reflector]") {
  Harness h;
  std::vector<std::size_t> sizesSeen;
  h.store.addHandlers({[&](const ObjectPtr&) { sizesSeen.push_back(h.store.size()); }, {}, {}});
  // pageSize 2: a, b staged as one batch, c as the next; a progress bookmark before the end
  // changes nothing.
  h.transport->push(
      stream({event("ADDED", meta("a", "1")), event("ADDED", meta("b", "2")), event("BOOKMARK", meta("", "3")),
              event("ADDED", meta("c", "4")), event("BOOKMARK", endOfInitialEvents("5")),
              event("MODIFIED", meta("a", "6")), event("DELETED", meta("b", "7"))}));
  h.run(streamingOptions());
  CHECK(h.names() == std::vector<std::string>{"a", "c"});
  CHECK((*h.store.get("ns/a").value())["metadata"]["resourceVersion"] == "6");
  // The handlers of the initial objects ran after all three were in the store.
  CHECK(sizesSeen == std::vector<std::size_t>{3, 3, 3});
  auto r = h.transport->requests();
  REQUIRE(r.size() >= 2);
  CHECK(query(r[0], "watch") == "1");
  CHECK(query(r[0], "sendInitialEvents") == "true");
  CHECK(query(r[0], "resourceVersionMatch") == "NotOlderThan");
  CHECK(query(r[0], "allowWatchBookmarks") == "true");
  CHECK(query(r[0], "resourceVersion").empty());  // a consistent read of the current state
  // The stream ended normally after the initial events: an ordinary watch from the last version.
  CHECK(query(r[1], "resourceVersion") == "7");
  CHECK(query(r[1], "sendInitialEvents").empty());
}

TEST_CASE("an apiserver that cannot stream a list is listed by pages from then on", "[cache][reflector]") {
  SECTION("422 before any event") {
    Harness h;
    h.transport->push(status(422, statusJson(422, "Invalid")));
    h.transport->push(ok(page({meta("a", "1")}, "1")));
    h.transport->push(status(410, statusJson(410, "Gone")));  // relist: by pages again
    h.transport->push(ok(page({meta("b", "2")}, "2")));
    h.run(streamingOptions());
    CHECK(h.names() == std::vector<std::string>{"b"});
    auto r = h.transport->requests();
    REQUIRE(r.size() >= 4);
    CHECK(query(r[0], "sendInitialEvents") == "true");
    CHECK(query(r[1], "watch").empty());
    CHECK(query(r[3], "watch").empty());
    CHECK(h.clock.waits().size() == 1);  // no backoff for the fallback; only "script ended"
    CHECK(h.errors.at(0).message.find("cannot stream a list of configmaps") != std::string::npos);
  }
  SECTION("the parameter ignored: a stream of changes without the end bookmark") {
    Harness h;
    h.transport->push(stream({event("ADDED", meta("a", "1")), event("MODIFIED", meta("a", "2"))}));
    h.transport->push(ok(page({meta("b", "2")}, "2")));
    h.run(streamingOptions());
    CHECK(h.names() == std::vector<std::string>{"b"});  // a was staged, never shown
    CHECK(query(h.transport->requests().at(1), "watch").empty());
  }
  SECTION("the stream ended without the end bookmark") {
    Harness h;
    h.transport->push(stream({event("ADDED", meta("a", "1"))}));
    h.transport->push(ok(page({meta("b", "2")}, "2")));
    h.run(streamingOptions());
    CHECK(h.names() == std::vector<std::string>{"b"});
  }
}

TEST_CASE("a streaming list cut before its end bookmark changes nothing and streams again after a backoff",
          "[cache][reflector]") {
  Harness h;
  std::vector<std::string> added;
  h.store.addHandlers({[&](const ObjectPtr& o) { added.push_back((*o)["metadata"]["name"]); }, {}, {}});
  Scripted cut = stream({event("ADDED", meta("a", "1"))});
  cut.streamError =
      restarter::core::makeError(ErrorKind::Unavailable, "transfer closed with outstanding read data");
  h.transport->push(cut);
  h.transport->push(stream({event("ADDED", meta("b", "2")), event("BOOKMARK", endOfInitialEvents("2"))}));
  h.run(streamingOptions());
  CHECK(added == std::vector<std::string>{"b"});
  CHECK(h.names() == std::vector<std::string>{"b"});
  auto r = h.transport->requests();
  REQUIRE(r.size() >= 2);
  CHECK(query(r[1], "sendInitialEvents") == "true");  // still streaming: a cut is not "unsupported"
  REQUIRE(h.clock.waits().size() >= 1);
  CHECK(h.clock.waits()[0] == 800ms);
  CHECK(h.errors.at(0).kind == ErrorKind::Unavailable);
}

TEST_CASE("a list failing on a later page changes nothing and is listed again from the start",
          "[cache][reflector]") {
  Harness h;
  std::vector<std::string> added;
  h.store.addHandlers({[&](const ObjectPtr& o) { added.push_back((*o)["metadata"]["name"]); }, {}, {}});
  h.transport->push(ok(page({meta("a", "1"), meta("b", "2")}, "5", "c1")));
  h.transport->push(status(500, statusJson(500, "InternalError")));
  h.transport->push(ok(page({meta("c", "3")}, "6")));
  h.run();
  // The first page was staged, never shown: only the complete second list reached the store.
  CHECK(added == std::vector<std::string>{"c"});
  CHECK(h.names() == std::vector<std::string>{"c"});
  auto r = h.transport->requests();
  REQUIRE(r.size() >= 3);
  CHECK(query(r[1], "continue") == "c1");
  CHECK(query(r[2], "continue").empty());
}

TEST_CASE("410 Gone relists at once and the relist diffs the store", "[cache][reflector]") {
  Harness h;
  std::vector<std::string> log;
  h.store.addHandlers(
      {[&](const ObjectPtr& o) { log.push_back("add " + (*o)["metadata"]["name"].get<std::string>()); },
       [&](const ObjectPtr&, const ObjectPtr& o) {
         log.push_back("update " + (*o)["metadata"]["name"].get<std::string>());
       },
       [&](const ObjectPtr& o) { log.push_back("delete " + (*o)["metadata"]["name"].get<std::string>()); }});
  h.transport->push(ok(page({meta("a", "1"), meta("b", "1")}, "1")));
  h.transport->push(stream({event("ERROR", statusJson(410, "Expired"))}));
  h.transport->push(ok(page({meta("b", "7"), meta("c", "7")}, "7")));
  h.transport->push(status(410, statusJson(410, "Gone")));
  h.transport->push(ok(page({meta("c", "7")}, "8")));
  h.run();
  CHECK(log == std::vector<std::string>{"add a", "add b", "update b", "add c", "delete a", "delete b"});
  CHECK(h.clock.waits().empty() == false);  // only the final "script ended" backs off
  CHECK(h.clock.waits().size() == 1);
  CHECK(h.names() == std::vector<std::string>{"c"});
}

TEST_CASE("a watch expired during the initial stream loses no unreferenced object and fires no handler for one",
          "[cache][reflector]") {
  Harness h;
  // Only "a" is referenced (the controller's retention asks its workload indexes).
  h.store.setRetention([](std::string_view key) { return key == "ns/a"; });
  std::vector<std::string> added;
  h.store.addHandlers({[&](const ObjectPtr& o) { added.push_back((*o)["metadata"]["name"]); }, {}, {}});
  h.transport->push(stream({event("ADDED", meta("a", "1")), event("ADDED", meta("b", "2")),
                            event("ERROR", statusJson(410, "Expired"))}));
  h.transport->push(stream({event("ADDED", meta("a", "1")), event("ADDED", meta("b", "2")),
                            event("ADDED", meta("c", "3")), event("BOOKMARK", endOfInitialEvents("3"))}));
  h.run(streamingOptions());
  CHECK(added == std::vector<std::string>{"a"});
  CHECK(h.names() == std::vector<std::string>{"a"});
  CHECK(h.store.unloadedSize() == 2);
  CHECK(h.store.find("ns/b")->unloaded);
  CHECK(h.store.find("ns/c")->unloaded);
  CHECK(h.store.size() == 3);
  auto r = h.transport->requests();
  REQUIRE(r.size() >= 2);
  CHECK(query(r[1], "sendInitialEvents") == "true");
}

TEST_CASE("errors back off exponentially and honour Retry-After", "[cache][reflector]") {
  Harness h;
  h.transport->push(failure(ErrorKind::Unavailable, "connection refused"));
  h.transport->push(status(500, statusJson(500, "InternalError")));
  h.transport->push(status(429, statusJson(429, "TooManyRequests"), {{"retry-after", "10"}}));
  h.transport->push(ok(page({meta("a", "1")}, "1")));
  h.transport->push(status(409, statusJson(409, "Conflict")));  // a watch error: back off, re-watch
  h.run();
  auto waits = h.clock.waits();
  REQUIRE(waits.size() == 5);
  CHECK(waits[0] == 800ms);
  CHECK(waits[1] == 1600ms);
  CHECK(waits[2] == 10s);    // Retry-After beats the 3.2 s backoff
  CHECK(waits[3] == 800ms);  // reset by the successful list
  CHECK(waits[4] == 1600ms);
  CHECK(h.errors.at(0).kind == ErrorKind::Unavailable);
  CHECK(h.errors.at(2).kind == ErrorKind::TooManyRequests);
  CHECK(h.errors.at(3).kind == ErrorKind::Conflict);
}

TEST_CASE("a stream cut mid-object and bad JSON resume from the last version without losing events",
          "[cache][reflector]") {
  Harness h;
  h.transport->push(ok(page({meta("a", "1")}, "1")));
  Scripted cut = stream({event("ADDED", meta("b", "2")), "{\"type\":\"ADDED\",\"object\":{\"meta"});
  cut.streamError =
      restarter::core::makeError(ErrorKind::Unavailable, "transfer closed with outstanding read data");
  h.transport->push(cut);
  h.transport->push(stream({event("ADDED", meta("c", "3")), "{bad json}\n"}));
  h.transport->push(stream({event("MODIFIED", meta("a", "4"))}));
  h.run();
  CHECK(h.names() == std::vector<std::string>{"a", "b", "c"});
  CHECK((*h.store.get("ns/a").value())["metadata"]["resourceVersion"] == "4");
  auto r = h.transport->requests();
  CHECK(query(r[2], "resourceVersion") == "2");
  CHECK(query(r[3], "resourceVersion") == "3");
  CHECK(h.errors.at(0).kind == ErrorKind::Unavailable);
  CHECK(h.errors.at(1).kind == ErrorKind::InvalidInput);
}

TEST_CASE("relistOnStreamEnd lists again after a normal stream end", "[cache][reflector]") {
  Harness h;
  h.transport->push(ok(page({meta("a", "1")}, "1")));
  h.transport->push(stream({}));
  h.transport->push(ok(page({meta("b", "2")}, "2")));
  ReflectorOptions options;
  options.relistOnStreamEnd = true;
  h.run(options);
  CHECK(h.names() == std::vector<std::string>{"b"});
  CHECK(h.transport->requests().at(2).path.find("watch=1") == std::string::npos);
}

TEST_CASE("backoff delays grow and cap and jitter stays in range", "[cache][reflector]") {
  BackoffPolicy policy;
  policy.initial = 100ms;
  policy.max = 1s;
  policy.jitter = 0.5;
  CHECK(backoffDelay(policy, 1, 1.0) == 100ms);
  CHECK(backoffDelay(policy, 1, 0.0) == 50ms);
  CHECK(backoffDelay(policy, 3, 1.0) == 400ms);
  CHECK(backoffDelay(policy, 30, 1.0) == 1s);
  CHECK(backoffDelay(policy, 30, 0.0) == 500ms);
  CHECK(std::string(reflectorStateName(Reflector::State::Watching)) == "watching");
}

TEST_CASE("a transform applies to listed and watched objects", "[cache][reflector]") {
  Harness h;
  auto withFields = [](const std::string& name, const std::string& rv) {
    auto o = nlohmann::json::parse(meta(name, rv));
    o["metadata"]["managedFields"] = nlohmann::json::array({{{"manager", "m"}}});
    return o.dump();
  };
  h.transport->push(ok(page({withFields("a", "1")}, "1")));
  h.transport->push(stream({event("ADDED", withFields("b", "2"))}));
  ReflectorOptions options;
  options.transform = dropManagedFields;
  h.run(options);
  auto all = h.store.list();
  REQUIRE(all->size() == 2);
  for (const auto& o : *all) {
    CHECK_FALSE((*o)["metadata"].contains("managedFields"));
    CHECK((*o)["metadata"].contains("resourceVersion"));
  }
  nlohmann::json odd = "x";
  dropManagedFields(odd);  // not an object: left alone
  CHECK(odd == "x");
}
