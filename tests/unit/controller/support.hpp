#pragma once
// Shared set-up of the controller's unit tests: a Client over the scripted FakeTransport, a fake
// clock, a logger into a string stream, and the reconcile context over them.

#include <memory>
#include <sstream>

#include "restarter/controller/reconcile.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/obs/metrics.hpp"

#include "../kube/fakes.hpp"
#include "restarter/testing/fake_clock.hpp"

namespace restarter::controller::testing {

class NoAuth final : public kube::Authenticator {
 public:
  core::Result<kube::Credential> credential() override { return kube::Credential{}; }
  bool invalidate(const kube::Credential&) override { return false; }
};

struct Harness {
  explicit Harness(bool dryRun = false) {
    auto fake = std::make_unique<kube::testing::FakeTransport>();
    transport = fake.get();
    client = std::make_unique<kube::Client>(std::move(fake), std::make_unique<NoAuth>(), "default", clock);
    context = std::make_unique<ReconcileContext>(ReconcileContext{*client, logger, metrics, limiter, clock,
                                                                  dryRun, "restarter.stackable.tech/controller",
                                                                  "test", milliseconds(0)});
  }

  restarter::testing::FakeClock clock;
  kube::testing::FakeTransport* transport = nullptr;
  std::unique_ptr<kube::Client> client;
  std::ostringstream logs;
  obs::Logger logger{logs, obs::LogFormat::Text, obs::LogLevel::Debug};
  obs::Registry registry;
  Metrics metrics{registry};
  TokenBucket limiter{clock, 100.0, 100.0};
  std::unique_ptr<ReconcileContext> context;
};

}  // namespace restarter::controller::testing
