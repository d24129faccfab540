#include "restarter/controller/controller.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "restarter/testing/builders.hpp"
#include "restarter/testing/fake_api_server.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace controller_test {

using namespace restarter;
using namespace restarter::controller;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

using restarter::testing::FakeApiServer;

// "web" (restarter/testing/builders.hpp), labeled, its container reading ConfigMap app as environment.
json labeledStatefulSet() {
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

// What the whole controller finds: one labeled StatefulSet (referencing ConfigMap `app`), that
// ConfigMap, and the key of content digests as serve-controller finds it made
// (kube/digest_key.hpp); nothing else.
void seedCluster(FakeApiServer& api) {
  api.seed(kube::resources::statefulSets(), labeledStatefulSet());
  api.seed(kube::resources::configMaps(),
           {{"metadata", {{"name", "app"}, {"namespace", "ns"}, {"uid", "cm-uid"}}}, {"data", {{"k", "v"}}}});
  api.seed(kube::resources::secrets(),
           {{"metadata", {{"name", "restarter-digest-key"}, {"namespace", "restarter-system"}}},
            {"data", {{"key", "a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U="}}}});
}

std::string pathOf(const kube::Request& request) { return request.path.substr(0, request.path.find('?')); }
bool hasQuery(const kube::Request& request, const std::string& parameter) {
  return request.path.find(parameter) != std::string::npos;
}
bool isWatch(const kube::Request& request) { return hasQuery(request, "watch="); }
bool isStreamedList(const kube::Request& request) { return hasQuery(request, "sendInitialEvents=true"); }
bool asksMetadataOnly(const kube::Request& request) {
  return std::any_of(request.headers.begin(), request.headers.end(), [](const auto& header) {
    return header.first == "Accept" && header.second.find("as=PartialObjectMetadata") != std::string::npos;
  });
}
bool isLease(const kube::Request& request) { return request.path.find("/leases") != std::string::npos; }
bool isEventPost(const kube::Request& request) {
  return request.method == "POST" && pathOf(request) == "/apis/events.k8s.io/v1/namespaces/ns/events";
}
// The Lease given up: a PUT without a holder.
bool isLeaseRelease(const kube::Request& request) {
  return isLease(request) && request.method == "PUT" &&
         !json::parse(request.body)["spec"].contains("holderIdentity");
}

// The position of the first request `matches`, or requests.size().
template <typename Match>
std::size_t firstOf(const std::vector<kube::Request>& requests, Match matches) {
  return static_cast<std::size_t>(std::find_if(requests.begin(), requests.end(), matches) - requests.begin());
}
template <typename Match>
std::size_t countOf(const std::vector<kube::Request>& requests, Match matches) {
  return static_cast<std::size_t>(std::count_if(requests.begin(), requests.end(), matches));
}

// A Client over the in-memory API server holding seedCluster(). Its interceptor holds the apply
// to StatefulSet web until release() (a write in flight), then lets the server apply it; after
// refuseStreaming() it answers streaming lists as an apiserver without WatchList does (422).
struct Fixture {
  Fixture() {
    auto fake = restarter::testing::connectFakeApi(base::systemClock(), "ns");
    api = fake.server;
    client = std::move(fake.client);
    seedCluster(*api);
    api->setInterceptor([this](const kube::Request& request) { return intercept(request); });
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

  // Blocks until the apply has reached the server.
  void waitForApply() {
    std::unique_lock lock(mutex);
    changed.wait(lock, [this] { return applying; });
  }
  void release() {
    std::lock_guard lock(mutex);
    released = true;
    changed.notify_all();
  }
  // How many requests the server had received when it went on with the apply; 0 before.
  std::size_t requestsBeforeApplied() {
    std::lock_guard lock(mutex);
    return applied;
  }
  void refuseStreaming() { refusing = true; }
  // Whether the server answered `request` (not refused by refuseStreaming()).
  bool answered(const kube::Request& request) const { return !(refusing && isStreamedList(request)); }
  // Blocks until the server has received a request `matches`.
  template <typename Match>
  void waitFor(Match matches) {
    while (countOf(api->requests(), matches) == 0) std::this_thread::sleep_for(2ms);
  }
  // Blocks until a watch of `path` was answered by the server.
  void waitForWatch(const std::string& path) {
    waitFor([&](const kube::Request& request) {
      return isWatch(request) && pathOf(request) == path && answered(request);
    });
  }
  // The Lease as the server holds it.
  json lease() const {
    auto lease = api->object(kube::resources::leases(), "ns", "restarter-controller");
    REQUIRE(lease);
    return *lease;
  }
  // Another replica takes the Lease over.
  void takeOver() {
    json lease = this->lease();
    lease["spec"]["holderIdentity"] = "intruder";
    lease["spec"]["renewTime"] = "2027-01-15T08:00:00.000000Z";
    api->put(kube::resources::leases(), lease);
  }

  std::optional<kube::Response> intercept(const kube::Request& request) {
    if (refusing && isStreamedList(request))
      return kube::Response{422, {}, json{{"kind", "Status"}, {"reason", "Invalid"}, {"code", 422}}.dump()};
    if (request.method == "PATCH" && pathOf(request) == "/apis/apps/v1/namespaces/ns/statefulsets/web") {
      std::unique_lock lock(mutex);
      applying = true;
      changed.notify_all();
      changed.wait(lock, [this] { return released; });
      applied = api->requests().size();
    }
    return std::nullopt;
  }

  std::mutex mutex;
  std::condition_variable changed;
  bool applying = false;
  bool released = false;
  std::size_t applied = 0;
  std::atomic<bool> refusing{false};
  FakeApiServer* api = nullptr;
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
  f.waitForApply();
  stop.request_stop();
  // The write is still in flight: run() must not have returned (it joins the worker first).
  CHECK_FALSE(returned.load());
  f.release();
  runner.join();
  CHECK(result.ok());

  const std::vector<kube::Request> requests = f.api->requests();
  const std::size_t finished = f.requestsBeforeApplied();
  const std::size_t event = firstOf(requests, isEventPost);
  const std::size_t released = firstOf(requests, isLeaseRelease);
  REQUIRE(finished > 0);
  // The restart was announced, and only then the Lease given up (holder cleared).
  CHECK(event >= finished);
  CHECK(released > event);
  CHECK(released < requests.size());
  CHECK_FALSE(f.lease()["spec"].contains("holderIdentity"));
  CHECK(f.logs.str().find("INFO released leadership") != std::string::npos);
  CHECK(f.logs.str().find("INFO stopped") != std::string::npos);
}

TEST_CASE("a leader whose Lease is taken over stops working and returns an error", "[controller][leader]") {
  Fixture f;
  Controller controller(*f.client, f.options(true), f.logger, f.registry, base::systemClock());
  f.release();  // writes complete at once
  core::Status result = core::okStatus();
  std::thread runner([&] { result = controller.run({}); });
  f.waitForApply();        // leading and working
  f.waitFor(isEventPost);  // the restart is done
  const std::size_t takenOver = f.api->requests().size();
  f.takeOver();
  runner.join();  // returns by itself at the next renewal (retryPeriod, 2 s)
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().message == "leader election lost");
  CHECK(f.logs.str().find("ERROR leadership lost") != std::string::npos);
  CHECK(f.logs.str().find("holder=intruder") != std::string::npos);
  // It neither writes after losing nor hands the Lease back (it is not ours).
  const std::vector<kube::Request> requests = f.api->requests();
  CHECK(std::count_if(requests.begin() + static_cast<std::ptrdiff_t>(takenOver), requests.end(),
                      [](const kube::Request& request) {
                        return request.method == "PATCH" || isEventPost(request);
                      }) == 0);
  CHECK(f.lease()["spec"]["holderIdentity"] == "intruder");
}

TEST_CASE("the Lease is read and written with the lease client only", "[controller][leader]") {
  Fixture f;
  auto leaseApi = restarter::testing::connectFakeApi(base::systemClock(), "ns");
  ControllerOptions options = f.options(true);
  options.leaseClient = leaseApi.client.get();
  Controller controller(*f.client, options, f.logger, f.registry, base::systemClock());
  f.release();
  std::stop_source stop;
  core::Status result = core::okStatus();
  std::thread runner([&] { result = controller.run(stop.get_token()); });
  f.waitFor(isEventPost);  // working: it leads
  stop.request_stop();
  runner.join();
  CHECK(result.ok());
  const auto main = f.api->requests();
  const auto lease = leaseApi.server->requests();
  CHECK(std::none_of(main.begin(), main.end(), isLease));
  CHECK(countOf(lease, isLease) >= 3);  // read, create, release
  CHECK(countOf(lease, isLeaseRelease) == 1);
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
      f.release();  // applies answer at once
      if (!streaming) f.refuseStreaming();
      ControllerOptions options = f.options(false);
      options.contentAware = mode.awareness;
      Controller controller(*f.client, options, f.logger, f.registry, base::systemClock());
      std::stop_source stop;
      std::thread runner([&] { (void)controller.run(stop.get_token()); });
      // Every reflector's watch has begun (they start concurrently), so every list was made.
      for (const char* resource : {"configmaps", "secrets", "pods"})
        f.waitForWatch(std::string("/api/v1/namespaces/ns/") + resource);
      stop.request_stop();
      runner.join();
      std::vector<kube::Request> requests = f.api->requests();
      requests.erase(std::remove_if(requests.begin(), requests.end(),
                                    [&](const kube::Request& request) { return !f.answered(request); }),
                     requests.end());
      auto has = [&](const std::string& path, auto matches) {
        return countOf(requests, [&](const kube::Request& request) {
                 return pathOf(request) == path && matches(request);
               }) > 0;
      };
      auto isList = [](const kube::Request& request) { return request.method == "GET" && !isWatch(request); };
      for (const char* resource : {"configmaps", "secrets", "pods"}) {
        const std::string path = std::string("/api/v1/namespaces/ns/") + resource;
        CHECK(has(path, isStreamedList) == streaming);
        CHECK(has(path, isList) == !streaming);
      }
      for (const bool watching : {false, true}) {
        if (streaming && !watching) continue;  // no list request was made
        auto metadataOnly = [&](const char* resource) {
          return has(std::string("/api/v1/namespaces/ns/") + resource, [&](const kube::Request& request) {
            return isWatch(request) == watching && asksMetadataOnly(request);
          });
        };
        CHECK(metadataOnly("configmaps") == mode.configMapsMetadataOnly);
        CHECK(metadataOnly("secrets") == mode.secretsMetadataOnly);
        CHECK(metadataOnly("pods"));
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
  // How many requests went to a path containing `part`, and how many asked discovery of Argo
  // Rollouts' group version.
  auto requestsTo = [](const Fixture& f, const std::string& part) {
    return countOf(f.api->requests(),
                   [&](const kube::Request& request) { return request.path.find(part) != std::string::npos; });
  };
  auto discoveries = [](const Fixture& f) {
    return countOf(f.api->requests(), [](const kube::Request& request) {
      return request.method == "GET" && pathOf(request) == "/apis/argoproj.io/v1alpha1";
    });
  };
  {
    // Not served: the caches sync (the controller is ready), discovery is asked again each
    // interval, Rollouts are never listed and nothing is logged about them.
    Fixture f;
    f.release();
    Controller controller(*f.client, argoOptions(f), f.logger, f.registry, base::systemClock());
    std::stop_source stop;
    std::thread runner([&] { (void)controller.run(stop.get_token()); });
    while (!controller.synced() || discoveries(f) < 3) std::this_thread::sleep_for(5ms);
    stop.request_stop();
    runner.join();
    CHECK(requestsTo(f, "/rollouts") == 0);
    CHECK(f.logs.str().find("rollouts") == std::string::npos);
    CHECK(f.logs.str().find("argoproj") == std::string::npos);
  }
  {
    // Installed while running: watched, and discovery is not asked again.
    Fixture f;
    f.release();
    Controller controller(*f.client, argoOptions(f), f.logger, f.registry, base::systemClock());
    std::stop_source stop;
    std::thread runner([&] { (void)controller.run(stop.get_token()); });
    while (!controller.synced()) std::this_thread::sleep_for(5ms);
    f.api->install(kube::resources::rollouts());  // its CRD installed
    f.waitForWatch("/apis/argoproj.io/v1alpha1/namespaces/ns/rollouts");
    const std::size_t asked = discoveries(f);
    std::this_thread::sleep_for(50ms);
    CHECK(discoveries(f) == asked);
    stop.request_stop();
    runner.join();
    CHECK(f.logs.str().find("custom resource served; watching it resource=rollouts.argoproj.io") !=
          std::string::npos);
  }
  {
    // Without --argo-rollouts nothing of Argo Rollouts is ever asked for.
    Fixture f;
    f.release();
    Controller controller(*f.client, f.options(false), f.logger, f.registry, base::systemClock());
    std::stop_source stop;
    std::thread runner([&] { (void)controller.run(stop.get_token()); });
    while (!controller.synced()) std::this_thread::sleep_for(5ms);
    stop.request_stop();
    runner.join();
    CHECK(requestsTo(f, "argoproj.io") == 0);
  }
}

}  // namespace controller_test
