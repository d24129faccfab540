#pragma once
// Shared set-up of the controller's unit tests: a Client over the in-memory API server (tests
// seed objects and assert on the objects and Events left behind, or on its requests), a fake clock,
// a logger into a string stream, and the reconcile context over them; a named reconciler for queue
// keys.

#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "restarter/cache/store.hpp"
#include "restarter/controller/reconcile.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/obs/metrics.hpp"

#include "restarter/testing/fake_api_server.hpp"
#include "restarter/testing/fake_clock.hpp"

namespace restarter::controller::testing {

class NoAuth final : public kube::Authenticator {
 public:
  core::Result<kube::Credential> credential() override { return kube::Credential{}; }
  bool invalidate(const kube::Credential&) override { return false; }
};

// A reconciler that only has a name, for the keys of queue tests: those never call reconcile().
class NamedReconciler final : public Reconciler {
 public:
  explicit NamedReconciler(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  core::Result<Action> reconcile(const ObjectName&, std::stop_token = {}) override {
    return Action::awaitChange();
  }

 private:
  std::string name_;
};

struct Harness {
  explicit Harness(bool dryRun = false) {
    auto server = std::make_unique<restarter::testing::FakeApiServer>();
    api = server.get();
    client = std::make_unique<kube::Client>(std::move(server), std::make_unique<NoAuth>(), "default", clock);
    context = std::make_unique<ReconcileContext>(ReconcileContext{*client, logger, metrics, limiter, clock,
                                                                  dryRun, "restarter.stackable.tech/controller",
                                                                  "test", milliseconds(0)});
  }

  restarter::testing::FakeClock clock;
  restarter::testing::FakeApiServer* api = nullptr;  // owned by client
  std::unique_ptr<kube::Client> client;
  std::ostringstream logs;
  obs::Logger logger{logs, obs::LogFormat::Text, obs::LogLevel::Debug};
  obs::Registry registry;
  Metrics metrics{registry};
  RateLimiter limiter{clock, 100.0, 100.0};
  std::unique_ptr<ReconcileContext> context;
};

// StatefulSet `workload` stored in the API server and, at `resourceVersion`, in
// the reconciler's cache `workloads`.
inline void seedStatefulSet(Harness& harness, cache::PackedStore& workloads, const nlohmann::json& workload,
                            const std::string& resourceVersion = "10") {
  harness.api->seed(kube::resources::statefulSets(), workload);
  workloads.replace({workload}, resourceVersion);
}

// StatefulSet ns/`name` as the API server holds it now.
inline nlohmann::json storedStatefulSet(const Harness& harness, const std::string& name = "web") {
  auto stored = harness.api->object(kube::resources::statefulSets(), "ns", name);
  REQUIRE(stored);
  return *stored;
}

// How many writes reached the StatefulSets (Events not counted).
inline std::size_t statefulSetWrites(const Harness& harness) {
  std::size_t writes = 0;
  for (const auto& request : harness.api->requests()) {
    if (request.method != "GET" && request.path.find("/statefulsets/") != std::string::npos) ++writes;
  }
  return writes;
}

}  // namespace restarter::controller::testing
