#include "restarter/controller/controller.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "restarter/testing/builders.hpp"
#include "support.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace controller_test {

using namespace restarter;
using namespace restarter::controller;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// An in-memory API for the whole controller: lists of one labeled StatefulSet (referencing
// ConfigMap `app`), that ConfigMap, nothing else; watches that stay open until stopped; a Lease;
// Events. An apply to the StatefulSet blocks until release() (a write in flight).
class FakeApi final : public kube::Transport {
 public:
  core::Result<kube::Response> send(const kube::Request& request) override {
    const std::string path = request.path.substr(0, request.path.find('?'));
    std::unique_lock lock(mutex_);
    record(request.method + " " + path);
    if (asksMetadataOnly(request)) record("META " + request.method + " " + path);
    if (path.find("/leases") != std::string::npos) return lease(request, path);
    // The key of content digests, as serve-controller finds it made (kube/digest_key.hpp).
    if (request.method == "GET" && path == "/api/v1/namespaces/restarter-system/secrets/restarter-digest-key") {
      return kube::Response{
          200,
          {},
          json{{"apiVersion", "v1"},
               {"kind", "Secret"},
               {"metadata", {{"name", "restarter-digest-key"}, {"namespace", "restarter-system"}}},
               {"data", {{"key", "a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U="}}}}
              .dump()};
    }
    // Argo Rollouts' group version: served once serveRollouts() installed its "CRD".
    if (request.method == "GET" && path == "/apis/argoproj.io/v1alpha1") {
      if (!rolloutsServed_) return status(404, "NotFound");
      return kube::Response{200,
                            {},
                            json{{"kind", "APIResourceList"},
                                 {"groupVersion", "argoproj.io/v1alpha1"},
                                 {"resources", {{{"name", "rollouts"}, {"kind", "Rollout"}}}}}
                                .dump()};
    }
    if (request.method == "GET") return list(request, path);
    if (request.method == "POST" && path.find("/events") != std::string::npos) {
      return kube::Response{201, {}, json{{"kind", "Event"}, {"metadata", {{"name", "e"}}}}.dump()};
    }
    if (request.method == "PATCH" && path == "/apis/apps/v1/namespaces/ns/statefulsets/web") {
      applying_ = true;
      cv_.notify_all();
      cv_.wait(lock, [this] { return released_; });
      json applied = labeledStatefulSet();
      applied["spec"]["template"]["metadata"]["annotations"] =
          json::parse(request.body)["spec"]["template"]["metadata"]["annotations"];
      record("apply finished");
      return kube::Response{200, {}, applied.dump()};
    }
    return status(405, "MethodNotAllowed");
  }

  // A streaming list (sendInitialEvents=true) gets the list's items as ADDED events and the
  // end bookmark first; then, as every watch, nothing until stopped.
  core::Result<kube::Response> stream(const kube::Request& request, const kube::ChunkHandler& onChunk,
                                      std::stop_token stop) override {
    const std::string path = request.path.substr(0, request.path.find('?'));
    std::unique_lock lock(mutex_);
    if (refuseStreaming_ && request.path.find("sendInitialEvents=true") != std::string::npos) {
      record("REFUSED STREAM " + path);
      return status(422, "Invalid");  // an apiserver without WatchList
    }
    record("WATCH " + path);
    if (asksMetadataOnly(request)) record("META WATCH " + path);
    if (request.path.find("sendInitialEvents=true") != std::string::npos) {
      record("STREAMED LIST " + path);
      std::string events;
      for (const json& item : items(path)) events += json{{"type", "ADDED"}, {"object", item}}.dump() + "\n";
      events +=
          json{{"type", "BOOKMARK"},
               {"object",
                {{"kind", asksMetadataOnly(request) ? "PartialObjectMetadata" : "Bookmark"},
                 {"apiVersion", "meta.k8s.io/v1"},
                 {"metadata",
                  {{"resourceVersion", "20"}, {"annotations", {{"k8s.io/initial-events-end", "true"}}}}}}}}
              .dump() +
          "\n";
      lock.unlock();
      if (!onChunk(events)) return kube::Response{200, {}, {}};
      lock.lock();
    }
    cv_.wait(lock, stop, [] { return false; });
    return kube::Response{200, {}, {}};
  }

  // From now on discovery finds Argo Rollouts' rollouts served (its CRD installed).
  void serveRollouts() {
    std::lock_guard lock(mutex_);
    rolloutsServed_ = true;
  }
  // How many requests went to a path containing `part`.
  std::size_t requestsTo(const std::string& part) const {
    std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(std::count_if(log_.begin(), log_.end(), [&](const std::string& line) {
      return line.find(part) != std::string::npos;
    }));
  }
  // From now on answer streaming lists as an apiserver without WatchList does (422).
  void refuseStreaming() {
    std::lock_guard lock(mutex_);
    refuseStreaming_ = true;
  }
  // Blocks until the apply has reached the server.
  void waitForApply() {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [this] { return applying_; });
  }
  // Blocks until a request or step logged as `line` has happened.
  void waitFor(const std::string& line) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return std::find(log_.begin(), log_.end(), line) != log_.end(); });
  }
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    cv_.notify_all();
  }
  std::vector<std::string> log() const {
    std::lock_guard lock(mutex_);
    return log_;
  }
  json leaseObject() const {
    std::lock_guard lock(mutex_);
    return lease_;
  }
  // Another replica takes the Lease over.
  void takeOver() {
    std::lock_guard lock(mutex_);
    lease_["spec"]["holderIdentity"] = "intruder";
    lease_["spec"]["renewTime"] = "2027-01-15T08:00:00.000000Z";
    lease_["metadata"]["resourceVersion"] = std::to_string(++version_);
  }
  std::size_t writesAfter(const std::string& marker) const {
    std::lock_guard lock(mutex_);
    std::size_t count = 0;
    bool seen = false;
    for (const std::string& line : log_) {
      if (line == marker) seen = true;
      if (seen && (line.rfind("PATCH", 0) == 0 || line.rfind("POST /apis/events", 0) == 0)) ++count;
    }
    return count;
  }
  void mark(const std::string& marker) {
    std::lock_guard lock(mutex_);
    record(marker);
  }

  // "web" (restarter/testing/builders.hpp), labeled, its container reading ConfigMap app as environment.
  static json labeledStatefulSet() {
    json object = restarter::testing::statefulSet(
        {{"metadata", {{"labels", {{"restarter.stackable.tech/enabled", "true"}}}}}});
    object["spec"] = {
        {"template",
         {{"metadata", json::object()},
          {"spec",
           {{"containers",
             {{{"name", "app"}, {"image", "x"}, {"envFrom", {{{"configMapRef", {{"name", "app"}}}}}}}}}}}}}};
    return object;
  }

 private:
  static bool asksMetadataOnly(const kube::Request& request) {
    for (const auto& [name, value] : request.headers) {
      if (name == "Accept" && value.find("as=PartialObjectMetadata") != std::string::npos) return true;
    }
    return false;
  }

  core::Result<kube::Response> list(const kube::Request& request, const std::string& path) {
    bool metadata = false;
    for (const auto& [name, value] : request.headers) {
      if (name == "Accept" && value.find("PartialObjectMetadataList") != std::string::npos) metadata = true;
    }
    json body = {{"kind", metadata ? "PartialObjectMetadataList" : "List"},
                 {"apiVersion", metadata ? "meta.k8s.io/v1" : "v1"},
                 {"metadata", {{"resourceVersion", "20"}}},
                 {"items", items(path)}};
    return kube::Response{200, {}, body.dump()};
  }

  // What the collection at `path` holds.
  static json items(const std::string& path) {
    json items = json::array();
    if (path == "/apis/apps/v1/namespaces/ns/statefulsets") items.push_back(labeledStatefulSet());
    if (path == "/api/v1/namespaces/ns/configmaps") {
      items.push_back(
          {{"apiVersion", "meta.k8s.io/v1"},
           {"kind", "PartialObjectMetadata"},
           {"metadata", {{"name", "app"}, {"namespace", "ns"}, {"uid", "cm-uid"}, {"resourceVersion", "7"}}}});
    }
    return items;
  }

  core::Result<kube::Response> lease(const kube::Request& request, const std::string& path) {
    if (request.method == "GET") {
      if (lease_.is_null()) return status(404, "NotFound");
      return kube::Response{200, {}, lease_.dump()};
    }
    json body = json::parse(request.body);
    if (request.method == "PUT") {
      if (lease_.is_null()) return status(404, "NotFound");
      if (body["metadata"].value("resourceVersion", "") != lease_["metadata"]["resourceVersion"])
        return status(409, "Conflict");
      record("lease holder=" + body["spec"].value("holderIdentity", std::string()));
    } else if (request.method != "POST" || path.find("/leases/") != std::string::npos) {
      return status(405, "MethodNotAllowed");
    }
    body["metadata"]["resourceVersion"] = std::to_string(++version_);
    lease_ = body;
    return kube::Response{200, {}, lease_.dump()};
  }

  // With mutex_ held.
  void record(std::string line) {
    log_.push_back(std::move(line));
    cv_.notify_all();
  }

  static core::Result<kube::Response> status(long code, const std::string& reason) {
    return kube::Response{
        code, {}, json{{"kind", "Status"}, {"reason", reason}, {"code", code}, {"message", reason}}.dump()};
  }

  mutable std::mutex mutex_;
  std::condition_variable_any cv_;
  std::vector<std::string> log_;
  json lease_;
  int version_ = 100;
  bool applying_ = false;
  bool released_ = false;
  bool refuseStreaming_ = false;
  bool rolloutsServed_ = false;
};

struct Fixture {
  Fixture() {
    auto transport = std::make_unique<FakeApi>();
    api = transport.get();
    client = std::make_unique<kube::Client>(std::move(transport),
                                            std::make_unique<restarter::controller::testing::NoAuth>(), "ns",
                                            base::systemClock());
  }
  ControllerOptions options(bool leaderElection) {
    ControllerOptions o;
    o.namespaces = {"ns"};
    o.debounce = 0ms;
    o.identity = "me";
    if (leaderElection) {
      LeaderElectionOptions election;
      election.namespace_ = "ns";
      election.identity = "me";
      o.leaderElection = election;
    }
    return o;
  }
  FakeApi* api = nullptr;
  std::unique_ptr<kube::Client> client;
  std::ostringstream logs;
  obs::Logger logger{logs, obs::LogFormat::Text, obs::LogLevel::Debug};
  obs::Registry registry;
};

}  // namespace

TEST_CASE("a stop during a write lets the write finish and then releases the Lease and returns OK",
          "[controller][shutdown]") {
  Fixture f;
  Controller controller(*f.client, f.options(true), f.logger, f.registry, base::systemClock());
  std::stop_source stop;
  std::atomic<bool> returned{false};
  core::Status result = core::okStatus();
  std::thread runner([&] {
    result = controller.run(stop.get_token());
    returned = true;
  });
  f.api->waitForApply();
  stop.request_stop();
  // The write is still in flight: run() must not have returned (it joins the worker first).
  CHECK_FALSE(returned.load());
  f.api->release();
  runner.join();
  CHECK(result.ok());

  const std::vector<std::string> log = f.api->log();
  auto at = [&](const std::string& line) { return std::find(log.begin(), log.end(), line) - log.begin(); };
  const auto finished = at("apply finished");
  const auto event = at("POST /apis/events.k8s.io/v1/namespaces/ns/events");
  const auto released = at("lease holder=");
  REQUIRE(finished < static_cast<long>(log.size()));
  // The restart was announced, and only then the Lease given up (holder cleared).
  CHECK(event > finished);
  CHECK(released > event);
  CHECK(static_cast<std::size_t>(released) < log.size());
  CHECK_FALSE(f.api->leaseObject()["spec"].contains("holderIdentity"));
  CHECK(f.logs.str().find("INFO released leadership") != std::string::npos);
  CHECK(f.logs.str().find("INFO stopped") != std::string::npos);
}

TEST_CASE("a leader whose Lease is taken over stops working and returns an error", "[controller][leader]") {
  Fixture f;
  Controller controller(*f.client, f.options(true), f.logger, f.registry, base::systemClock());
  f.api->release();  // writes complete at once
  core::Status result = core::okStatus();
  std::thread runner([&] { result = controller.run({}); });
  f.api->waitForApply();                                               // leading and working
  f.api->waitFor("POST /apis/events.k8s.io/v1/namespaces/ns/events");  // the restart is done
  f.api->mark("taken over");
  f.api->takeOver();
  runner.join();  // returns by itself at the next renewal (retryPeriod, 2 s)
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().message == "leader election lost");
  CHECK(f.logs.str().find("ERROR leadership lost") != std::string::npos);
  CHECK(f.logs.str().find("holder=intruder") != std::string::npos);
  // It neither writes after losing nor hands the Lease back (it is not ours).
  CHECK(f.api->writesAfter("taken over") == 0);
  CHECK(f.api->leaseObject()["spec"]["holderIdentity"] == "intruder");
}

TEST_CASE("the Lease is read and written with the lease client only", "[controller][leader]") {
  Fixture f;
  auto leaseTransport = std::make_unique<FakeApi>();
  FakeApi* leaseApi = leaseTransport.get();
  kube::Client leaseClient(std::move(leaseTransport),
                           std::make_unique<restarter::controller::testing::NoAuth>(), "ns",
                           base::systemClock());
  ControllerOptions options = f.options(true);
  options.leaseClient = &leaseClient;
  Controller controller(*f.client, options, f.logger, f.registry, base::systemClock());
  f.api->release();
  std::stop_source stop;
  core::Status result = core::okStatus();
  std::thread runner([&] { result = controller.run(stop.get_token()); });
  f.api->waitFor("POST /apis/events.k8s.io/v1/namespaces/ns/events");  // working: it leads
  stop.request_stop();
  runner.join();
  CHECK(result.ok());
  auto isLease = [](const std::string& line) {
    return line.find("/leases") != std::string::npos || line.rfind("lease holder=", 0) == 0;
  };
  const auto main = f.api->log();
  const auto lease = leaseApi->log();
  CHECK(std::none_of(main.begin(), main.end(), isLease));
  CHECK(std::count_if(lease.begin(), lease.end(), isLease) >= 3);  // read, create, release
  CHECK(std::all_of(lease.begin(), lease.end(), isLease));
}

TEST_CASE("lists and watches ask for what --content-aware reads", "[controller][content]") {
  struct Mode {
    core::ContentAwareness awareness;
    bool configMapsMetadataOnly;
    bool secretsMetadataOnly;
  };
  // Against an apiserver that streams lists (the list is the first watch) and one that cannot
  // (paged lists, then watches).
  for (const bool streaming : {true, false}) {
    for (const Mode mode :
         {Mode{core::ContentAwareness::Off, true, true}, Mode{core::ContentAwareness::ConfigMaps, false, true},
          Mode{core::ContentAwareness::All, false, false}}) {
      INFO(core::contentAwarenessName(mode.awareness) << (streaming ? ", streaming" : ", paged"));
      Fixture f;
      f.api->release();  // applies answer at once
      if (!streaming) f.api->refuseStreaming();
      ControllerOptions options = f.options(false);
      options.contentAware = mode.awareness;
      Controller controller(*f.client, options, f.logger, f.registry, base::systemClock());
      std::stop_source stop;
      std::thread runner([&] { (void)controller.run(stop.get_token()); });
      // Every reflector's watch has begun (they start concurrently), so every list was made.
      f.api->waitFor("WATCH /api/v1/namespaces/ns/configmaps");
      f.api->waitFor("WATCH /api/v1/namespaces/ns/secrets");
      f.api->waitFor("WATCH /api/v1/namespaces/ns/pods");
      stop.request_stop();
      runner.join();
      const std::vector<std::string> log = f.api->log();
      auto has = [&](const std::string& line) { return std::find(log.begin(), log.end(), line) != log.end(); };
      for (const char* resource : {"configmaps", "secrets", "pods"}) {
        const std::string path = std::string("/api/v1/namespaces/ns/") + resource;
        CHECK(has("STREAMED LIST " + path) == streaming);
        CHECK(has("GET " + path) == !streaming);
      }
      for (const char* verb : {"GET", "WATCH"}) {
        if (streaming && std::string(verb) == "GET") continue;  // no list request was made
        CHECK(has(std::string("META ") + verb + " /api/v1/namespaces/ns/configmaps") ==
              mode.configMapsMetadataOnly);
        CHECK(has(std::string("META ") + verb + " /api/v1/namespaces/ns/secrets") == mode.secretsMetadataOnly);
        CHECK(has(std::string("META ") + verb + " /api/v1/namespaces/ns/pods"));
      }
    }
  }
}

TEST_CASE("Argo Rollouts without their CRD are looked for quietly and watched once it is installed",
          "[controller][argo]") {
  auto argoOptions = [](Fixture& f) {
    ControllerOptions options = f.options(false);
    options.argoRollouts = true;
    options.crdCheckInterval = 10ms;
    return options;
  };
  {
    // Not served: the caches sync (the controller is ready), discovery is asked again each
    // interval, Rollouts are never listed and nothing is logged about them.
    Fixture f;
    f.api->release();
    Controller controller(*f.client, argoOptions(f), f.logger, f.registry, base::systemClock());
    std::stop_source stop;
    std::thread runner([&] { (void)controller.run(stop.get_token()); });
    while (!controller.synced() || f.api->requestsTo("GET /apis/argoproj.io/v1alpha1") < 3)
      std::this_thread::sleep_for(5ms);
    stop.request_stop();
    runner.join();
    CHECK(f.api->requestsTo("/rollouts") == 0);
    CHECK(f.logs.str().find("rollouts") == std::string::npos);
    CHECK(f.logs.str().find("argoproj") == std::string::npos);
  }
  {
    // Installed while running: watched, and discovery is not asked again.
    Fixture f;
    f.api->release();
    Controller controller(*f.client, argoOptions(f), f.logger, f.registry, base::systemClock());
    std::stop_source stop;
    std::thread runner([&] { (void)controller.run(stop.get_token()); });
    while (!controller.synced()) std::this_thread::sleep_for(5ms);
    f.api->serveRollouts();
    f.api->waitFor("WATCH /apis/argoproj.io/v1alpha1/namespaces/ns/rollouts");
    const std::size_t asked = f.api->requestsTo("GET /apis/argoproj.io/v1alpha1");
    std::this_thread::sleep_for(50ms);
    CHECK(f.api->requestsTo("GET /apis/argoproj.io/v1alpha1") == asked);
    stop.request_stop();
    runner.join();
    CHECK(f.logs.str().find("custom resource served; watching it resource=rollouts.argoproj.io") !=
          std::string::npos);
  }
  {
    // Without --argo-rollouts nothing of Argo Rollouts is ever asked for.
    Fixture f;
    f.api->release();
    Controller controller(*f.client, f.options(false), f.logger, f.registry, base::systemClock());
    std::stop_source stop;
    std::thread runner([&] { (void)controller.run(stop.get_token()); });
    while (!controller.synced()) std::this_thread::sleep_for(5ms);
    stop.request_stop();
    runner.join();
    CHECK(f.api->requestsTo("argoproj.io") == 0);
  }
}

}  // namespace controller_test
