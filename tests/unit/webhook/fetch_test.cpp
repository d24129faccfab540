#include "restarter/webhook/fetch.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

#include <catch2/catch.hpp>

#include "restarter/kube/resource.hpp"
#include "restarter/testing/fake_api_server.hpp"
#include "restarter/testing/fake_clock.hpp"

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

// A gate lookups wait at until the test opens it; counts who arrived.
struct Gate {
  std::mutex mutex;
  std::condition_variable changed;
  bool open = false;
  int arrived = 0;

  void pass() {
    std::unique_lock lock(mutex);
    ++arrived;
    changed.notify_all();
    changed.wait(lock, [&] { return open; });
  }
  void awaitArrivals(int n) {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return arrived >= n; });
  }
  void release() {
    std::lock_guard lock(mutex);
    open = true;
    changed.notify_all();
  }
};

// Waits (without a time limit: the test runner's timeout is the limit) until `done` holds.
template <typename Predicate>
void awaitCondition(Predicate done) {
  while (!done()) std::this_thread::yield();
}

}  // namespace

TEST_CASE("fetch: every reference is answered with its own state", "[fetch]") {
  LookupPool pool(4, 16);
  // Lookups run on the pool's threads, where Catch2 v2 cannot assert (not thread-safe): count here,
  // check after.
  auto wrongNamespace = std::make_shared<std::atomic<int>>(0);
  const ObjectGetter get = [wrongNamespace](core::RefKind kind, const std::string& ns,
                                            const std::string& name) {
    if (ns != "ns1") ++*wrongNamespace;
    if (name == "cm-1") return core::ObjectState::absent();
    return core::ObjectState::present(std::string(core::refKindName(kind)) + "-" + name, "1", false);
  };
  const auto states = fetchReferences(get, pool, "ns1", refs(3), 5s);
  REQUIRE(states.size() == 4);
  CHECK(states.at({core::RefKind::ConfigMap, "cm-0"}).uid == "configmap-cm-0");
  CHECK(states.at({core::RefKind::Secret, "cm-0"}).uid == "secret-cm-0");
  CHECK(states.at({core::RefKind::ConfigMap, "cm-1"}).presence == core::Presence::Absent);
  CHECK(*wrongNamespace == 0);
}

TEST_CASE("fetch: lookups run in parallel", "[fetch]") {
  // Every lookup waits until all four have started: they can only all finish (before the generous
  // deadline) if they run at the same time, the first on the caller and three on the pool.
  LookupPool pool(3, 16);
  auto gate = std::make_shared<Gate>();
  const ObjectGetter get = [gate](core::RefKind, const std::string&, const std::string&) {
    {
      std::unique_lock lock(gate->mutex);
      ++gate->arrived;
      gate->changed.notify_all();
      gate->changed.wait(lock, [&] { return gate->arrived >= 4; });
    }
    return core::ObjectState::present("u", "1", false);
  };
  const auto states = fetchReferences(get, pool, "ns1", refs(3), 60s);
  for (const auto& [key, state] : states) CHECK(state.presence == core::Presence::Present);
}

TEST_CASE("fetch: a lookup that misses the deadline is unknown", "[fetch]") {
  LookupPool pool(2, 16);
  auto gate = std::make_shared<Gate>();
  const ObjectGetter get = [gate](core::RefKind, const std::string&, const std::string& name) {
    if (name == "cm-1") gate->pass();
    return core::ObjectState::present("u", "1", false);
  };
  const auto states = fetchReferences(get, pool, "ns1", refs(2), 100ms);
  gate->release();  // the straggler finishes after we returned: it must not touch freed memory
  const auto& late = states.at({core::RefKind::ConfigMap, "cm-1"});
  CHECK(late.presence == core::Presence::Unknown);
  CHECK(late.problem == "no answer within 100 ms");
  CHECK(states.at({core::RefKind::ConfigMap, "cm-0"}).presence == core::Presence::Present);
}

TEST_CASE("fetch: a throwing getter gives unknown", "[fetch]") {
  LookupPool pool(2, 16);
  const ObjectGetter get = [](core::RefKind, const std::string&, const std::string&) -> core::ObjectState {
    throw std::runtime_error("boom");
  };
  const auto states = fetchReferences(get, pool, "ns1", refs(2), 1s);
  for (const auto& [key, state] : states) {
    CHECK(state.presence == core::Presence::Unknown);
    CHECK(state.problem == "lookup failed: boom");
  }
}

TEST_CASE("fetch: many reviews with many references use no thread beyond the pool", "[fetch]") {
  // 8 reviews at once, 40 references each: lookups run on the 8 calling threads and on the
  // pool's 3 threads, and on no other (the old code started a thread per reference: 312 here).
  constexpr int kCallers = 8;
  LookupPool pool(3, 1024);
  std::mutex mutex;
  std::set<std::thread::id> lookupThreads;
  int running = 0;
  int mostAtOnce = 0;
  const ObjectGetter get = [&](core::RefKind, const std::string&, const std::string&) {
    {
      std::lock_guard lock(mutex);
      lookupThreads.insert(std::this_thread::get_id());
      mostAtOnce = std::max(mostAtOnce, ++running);
    }
    std::this_thread::yield();
    std::lock_guard lock(mutex);
    --running;
    return core::ObjectState::present("u", "1", false);
  };
  std::set<std::thread::id> callers;
  std::vector<std::thread> reviews;
  std::atomic<int> unknown{0};
  for (int i = 0; i < kCallers; ++i) {
    reviews.emplace_back([&] {
      for (const auto& [key, state] : fetchReferences(get, pool, "ns1", refs(39), 60s)) {
        if (state.presence != core::Presence::Present) ++unknown;
      }
    });
    callers.insert(reviews.back().get_id());
  }
  for (auto& review : reviews) review.join();
  CHECK(unknown == 0);
  std::size_t poolThreads = 0;
  for (const auto& id : lookupThreads) {
    if (callers.count(id) == 0) ++poolThreads;
  }
  CHECK(poolThreads <= pool.threads());
  CHECK(pool.threads() == 3);
  CHECK(mostAtOnce <= kCallers + 3);
  CHECK(pool.refused() == 0);
}

TEST_CASE("fetch: a full pool answers unknown at once instead of starting threads", "[fetch]") {
  LookupPool pool(1, 1);
  auto gate = std::make_shared<Gate>();
  REQUIRE(pool.submit([gate](bool) { gate->pass(); }, std::chrono::steady_clock::now() + 60s));
  gate->awaitArrivals(1);  // the only thread is busy
  auto ranQueued = std::make_shared<std::atomic<bool>>(false);
  REQUIRE(pool.submit([ranQueued](bool) { *ranQueued = true; }, std::chrono::steady_clock::now() + 60s));
  CHECK_FALSE(pool.submit([](bool) {}, std::chrono::steady_clock::now() + 60s));  // the queue is full
  CHECK(pool.refused() == 1);

  // A review now gets its first reference (looked up on the caller) and "unknown" for the rest,
  // without waiting for its 60 s deadline.
  const ObjectGetter get = [](core::RefKind, const std::string&, const std::string&) {
    return core::ObjectState::present("u", "1", false);
  };
  const auto states = fetchReferences(get, pool, "ns1", refs(2), 60s);
  CHECK(states.at({core::RefKind::ConfigMap, "cm-0"}).presence == core::Presence::Present);
  const auto& refused = states.at({core::RefKind::ConfigMap, "cm-1"});
  CHECK(refused.presence == core::Presence::Unknown);
  CHECK(refused.problem.find("too many lookups at once") == 0);
  CHECK(pool.refused() == 3);

  gate->release();
  awaitCondition([&] { return ranQueued->load(); });
}

TEST_CASE("fetch: a lookup whose deadline passed in the queue is not made", "[fetch]") {
  LookupPool pool(1, 16);
  auto gate = std::make_shared<Gate>();
  REQUIRE(pool.submit([gate](bool) { gate->pass(); }, std::chrono::steady_clock::now() + 60s));
  gate->awaitArrivals(1);
  std::atomic<int> calls{0};
  const ObjectGetter get = [&calls](core::RefKind, const std::string&, const std::string&) {
    ++calls;
    return core::ObjectState::present("u", "1", false);
  };
  const auto states = fetchReferences(get, pool, "ns1", refs(1), 50ms);  // cm-0 and secret cm-0
  CHECK(states.at({core::RefKind::Secret, "cm-0"}).problem == "no answer within 50 ms");
  CHECK(calls == 1);  // the first, on the caller
  gate->release();
  awaitCondition([&] { return pool.expired() == 1; });
  CHECK(calls == 1);
}

TEST_CASE("fetch: invalid names and namespaces are never looked up", "[fetch]") {
  LookupPool pool(2, 16);
  auto asked = std::make_shared<std::atomic<int>>(0);
  const ObjectGetter get = [asked](core::RefKind, const std::string&, const std::string&) {
    ++*asked;
    return core::ObjectState::present("u", "1", false);
  };
  const std::vector<core::Reference> hostile = {{core::RefKind::ConfigMap, ".", false},
                                                {core::RefKind::ConfigMap, "..", false},
                                                {core::RefKind::Secret, std::string(1 << 20, 'x'), false},
                                                {core::RefKind::Secret, "a/b", false},
                                                {core::RefKind::ConfigMap, "fine", false}};
  const auto states = fetchReferences(get, pool, "ns1", hostile, 5s);
  REQUIRE(states.size() == 5);
  CHECK(states.at({core::RefKind::ConfigMap, "."}).presence == core::Presence::Absent);
  CHECK(states.at({core::RefKind::ConfigMap, ".."}).presence == core::Presence::Absent);
  CHECK(states.at({core::RefKind::Secret, std::string(1 << 20, 'x')}).presence == core::Presence::Absent);
  CHECK(states.at({core::RefKind::ConfigMap, "fine"}).presence == core::Presence::Present);
  CHECK(*asked == 1);

  for (const std::string& ns :
       std::vector<std::string>{"..", ".", "a/b", "", std::string(64, 'n'), std::string(1 << 20, 'n')}) {
    const auto none = fetchReferences(get, pool, ns, refs(2), 5s);
    REQUIRE(none.size() == 3);
    for (const auto& [key, state] : none) {
      CHECK(state.presence == core::Presence::Unknown);
      CHECK(state.problem.size() < 400);
    }
  }
  CHECK(*asked == 1);
}

TEST_CASE("lookup budget: a review takes all its tokens or none and refills at the rate", "[fetch]") {
  testing::FakeClock clock;
  // The shared bucket alone (share 1): every review of one namespace.
  LookupBudget budget(LookupLimits{1000, 100, 2000, 1.0}, clock);
  using D = LookupBudget::Decision;
  CHECK(budget.admit("ns1", 1001) == D::TooMany);
  CHECK(budget.admit("ns1", 1000) == D::Admitted);  // 1000 left
  // A large review may not take the reserve (a tenth of the burst).
  CHECK(budget.admit("ns1", 900) == D::RateLimited);
  CHECK(budget.admit("ns1", 800) == D::Admitted);  // 200 left: the reserve
  CHECK(budget.admit("ns1", 201) == D::RateLimited);
  // Small reviews (no more than the reserve) may use it.
  for (int i = 0; i < 100; ++i) CHECK(budget.admit("ns1", 2) == D::Admitted);
  CHECK(budget.admit("ns1", 1) == D::RateLimited);
  clock.advance(10ms);  // one token
  CHECK(budget.admit("ns1", 2) == D::RateLimited);
  CHECK(budget.admit("ns1", 1) == D::Admitted);
  // Refills at 100 per second up to the burst, never beyond.
  clock.advance(1h);
  CHECK(budget.admit("ns1", 1000) == D::Admitted);
  CHECK(budget.admit("ns1", 800) == D::Admitted);
  CHECK(budget.admit("ns1", 1) == D::Admitted);
  CHECK(budget.admit("ns1", 200) == D::RateLimited);
  CHECK(budget.admit("ns1", 199) == D::Admitted);
  CHECK(budget.admit("ns1", 1) == D::RateLimited);
}

TEST_CASE("fetch: reviews the budget refuses are answered at once unknown and counted", "[fetch]") {
  LookupPool pool(2, 16);
  obs::Registry registry;
  Metrics metrics(registry);
  auto asked = std::make_shared<std::atomic<int>>(0);
  const ObjectGetter get = [asked](core::RefKind, const std::string&, const std::string&) {
    ++*asked;
    return core::ObjectState::present("u", "1", false);
  };
  testing::FakeClock clock;
  LookupBudget budget(LookupLimits{10, 1, 20, 1.0}, clock);
  const ReferenceFetcher fetch = makeFetcher(get, pool, 5s, &budget, &metrics);

  const auto tooMany = fetch("ns1", refs(10));  // 11 references
  CHECK(*asked == 0);
  for (const auto& [key, state] : tooMany) {
    CHECK(state.presence == core::Presence::Unknown);
    CHECK(state.problem == kLookupRefusedTooMany);
  }
  CHECK(metrics.lookupRefusals.with({"per-review-cap"}).value() == 1);

  CHECK(fetch("ns1", refs(9)).at({core::RefKind::Secret, "cm-0"}).presence == core::Presence::Present);
  CHECK(*asked == 10);
  CHECK(metrics.lookups.with().value() == 10);
  // 10 tokens left, 2 of them the reserve: a review of 10 does not fit.
  const auto limited = fetch("ns1", refs(9));
  CHECK(limited.at({core::RefKind::ConfigMap, "cm-3"}).presence == core::Presence::Unknown);
  CHECK(limited.at({core::RefKind::ConfigMap, "cm-3"}).problem == kLookupRefusedRate);
  CHECK(metrics.lookupRefusals.with({"rate-limit"}).value() == 1);
  CHECK(*asked == 10);
  clock.advance(2s);
  CHECK(fetch("ns1", refs(9)).at({core::RefKind::ConfigMap, "cm-3"}).presence == core::Presence::Present);
  CHECK(*asked == 20);
}

namespace {
class FetchNoAuth final : public kube::Authenticator {
 public:
  core::Result<kube::Credential> credential() override { return kube::Credential{}; }
  bool invalidate(const kube::Credential&) override { return false; }
};
}  // namespace

TEST_CASE("apiGetter: the webhook's digests are h2 and during a rotation also under the previous key",
          "[fetch][digest-key]") {
  auto server = std::make_unique<testing::FakeApiServer>();
  testing::FakeApiServer& api = *server;
  testing::FakeClock clock;
  kube::Client client(std::move(server), std::make_unique<FetchNoAuth>(), "default", clock);
  const nlohmann::json stored = api.seed(
      kube::resources::configMaps(), {{"apiVersion", "v1"},
                                      {"kind", "ConfigMap"},
                                      {"metadata", {{"name", "app"}, {"namespace", "ns"}, {"uid", "cm-uid"}}},
                                      {"data", {{"k", "v"}}}});
  const core::DigestKey old = *core::DigestKey::fromBytes(std::string(32, 'o'));
  const core::DigestKey fresh = core::DigestKey::fromBytes(std::string(32, 'f'))->withPrevious(old);
  kube::DigestKeyHolder holder;
  holder.set(fresh);
  const ObjectGetter get = apiGetter(client, core::ContentAwareness::ConfigMaps, holder);
  const core::ObjectState state = get(core::RefKind::ConfigMap, "ns", "app");
  REQUIRE(state.presence == core::Presence::Present);
  CHECK(state.digestKeyId == fresh.id());
  CHECK(state.contentDigest == *core::objectContentDigest(stored, core::RefKind::ConfigMap, fresh));
  const core::OtherDigest underOld{*core::objectContentDigest(stored, core::RefKind::ConfigMap, old), old.id(),
                                   core::DigestScheme::H2};
  CHECK(std::find(state.otherDigests.begin(), state.otherDigests.end(), underOld) != state.otherDigests.end());
  // Another object with the same content (the attacker's guess) never gets the same digest.
  api.seed(kube::resources::configMaps(),
           {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", {{"name", "guess"}, {"namespace", "ns"}, {"uid", "g-uid"}}},
            {"data", {{"k", "v"}}}});
  const core::ObjectState other = get(core::RefKind::ConfigMap, "ns", "guess");
  REQUIRE(other.contentDigest);
  CHECK(*other.contentDigest != *state.contentDigest);
}

namespace {

// A flood of one-lookup reviews of namespace `attacker`, `perSecond` of them for `seconds`; then
// how many of `count` one-lookup reviews of namespace `victim`, sent at once, the budget admits.
int victimsAdmitted(LookupBudget& budget, testing::FakeClock& clock, int perSecond, int seconds, int count) {
  const auto step = std::chrono::microseconds(1'000'000 / perSecond);
  for (int i = 0; i < perSecond * seconds; ++i) {
    clock.advance(step);
    budget.admit("attacker", 1);
  }
  int admitted = 0;
  for (int i = 0; i < count; ++i) {
    if (budget.admit("victim", 1) == LookupBudget::Decision::Admitted) ++admitted;
  }
  return admitted;
}

}  // namespace

TEST_CASE("lookup budget: small reviews of one namespace cannot drain the bucket for the others", "[fetch]") {
  using D = LookupBudget::Decision;
  testing::FakeClock clock;
  // The defaults: 100 a second, a burst of 2,000, a quarter of each (the burst at least 1,000) per
  // namespace. 200 one-lookup reviews a second for 60 s from one namespace: its share is spent
  // after its 1,000 and it then gets 25 a second; every other namespace's review still fits.
  LookupBudget shared(LookupLimits{}, clock);
  CHECK(victimsAdmitted(shared, clock, 200, 60, 20) == 20);
  CHECK(shared.admit("attacker", 1) == D::ShareSpent);
  // The same flood against the bucket alone (share 1) leaves nothing for anyone.
  LookupBudget alone(LookupLimits{1000, 100, 2000, 1.0}, clock);
  CHECK(victimsAdmitted(alone, clock, 200, 60, 20) == 0);
}

TEST_CASE("lookup budget: a namespace's share holds one review of the per-review cap and refills at its rate",
          "[fetch]") {
  using D = LookupBudget::Decision;
  testing::FakeClock clock;
  // Shares: 25 a second, a burst of max(500, 1000 + the share's reserve of 50).
  LookupBudget budget(LookupLimits{1000, 100, 2000, 0.25}, clock);
  CHECK(budget.admit("a", 1000) == D::Admitted);
  // The share's reserve is for small reviews, of the same namespace too.
  CHECK(budget.admit("a", 51) == D::ShareSpent);
  for (int i = 0; i < 50; ++i) CHECK(budget.admit("a", 1) == D::Admitted);
  CHECK(budget.admit("a", 1) == D::ShareSpent);
  CHECK(budget.admit("b", 750) == D::Admitted);  // the shared bucket: 200 left, its reserve
  CHECK(budget.admit("c", 201) == D::RateLimited);
  clock.advance(40ms);  // one token of a's share (25 a second), four of the bucket
  CHECK(budget.admit("a", 2) == D::ShareSpent);
  CHECK(budget.admit("a", 1) == D::Admitted);
  CHECK(budget.admit("a", 1) == D::ShareSpent);
  // A refused review takes nothing from either.
  CHECK(budget.admit("c", 200) == D::Admitted);
  // Refilled, a share holds a review of the per-review cap again, never more than its burst.
  clock.advance(1h);
  CHECK(budget.admit("a", 1000) == D::Admitted);
  CHECK(budget.admit("a", 51) == D::ShareSpent);
}

TEST_CASE("lookup budget: the shares remembered are bounded and the least recent is forgotten", "[fetch]") {
  using D = LookupBudget::Decision;
  testing::FakeClock clock;
  // Shares of 11 lookups (10 and a reserve of 1) that refill at 0.01 a second; two remembered.
  LookupBudget budget(LookupLimits{10, 1, 1000, 0.01, 2}, clock);
  CHECK(budget.admit("a", 10) == D::Admitted);
  CHECK(budget.admit("a", 1) == D::Admitted);
  CHECK(budget.admit("a", 1) == D::ShareSpent);
  CHECK(budget.admit("b", 1) == D::Admitted);
  CHECK(budget.admit("a", 1) == D::ShareSpent);  // a is now the most recent
  CHECK(budget.admit("c", 1) == D::Admitted);    // b forgotten
  CHECK(budget.shares() == 2);
  CHECK(budget.admit("a", 1) == D::ShareSpent);  // a kept: spent
  CHECK(budget.admit("d", 1) == D::Admitted);    // c forgotten
  CHECK(budget.admit("e", 1) == D::Admitted);    // a forgotten
  CHECK(budget.admit("a", 10) == D::Admitted);   // back with a full share
  for (int i = 0; i < 100000; ++i) budget.admit("ns-" + std::to_string(i), 1);
  CHECK(budget.shares() == 2);
}

TEST_CASE("fetch: a review over its namespace's share is answered at once unknown and counted", "[fetch]") {
  LookupPool pool(2, 16);
  obs::Registry registry;
  Metrics metrics(registry);
  auto asked = std::make_shared<std::atomic<int>>(0);
  const ObjectGetter get = [asked](core::RefKind, const std::string&, const std::string&) {
    ++*asked;
    return core::ObjectState::present("u", "1", false);
  };
  testing::FakeClock clock;
  // Shares of 11: 10 and a reserve of 1.
  LookupBudget budget(LookupLimits{10, 1, 100, 0.1}, clock);
  const ReferenceFetcher fetch = makeFetcher(get, pool, 5s, &budget, &metrics);
  CHECK(fetch("tenant", refs(9)).at({core::RefKind::Secret, "cm-0"}).presence == core::Presence::Present);
  CHECK(fetch("tenant", refs(0)).begin()->second.presence == core::Presence::Present);
  const auto spent = fetch("tenant", refs(0));
  REQUIRE(spent.size() == 1);
  CHECK(spent.begin()->second.presence == core::Presence::Unknown);
  CHECK(spent.begin()->second.problem == kLookupRefusedShare);
  CHECK(metrics.lookupRefusals.with({"namespace-share"}).value() == 1);
  CHECK(*asked == 11);
  CHECK(fetch("shop", refs(9)).at({core::RefKind::Secret, "cm-0"}).presence == core::Presence::Present);
  CHECK(*asked == 21);
}
