#include "restarter/obs/metrics.hpp"

#include <thread>

#include <catch2/catch.hpp>

using namespace restarter::obs;

TEST_CASE("the registry renders the Prometheus text format", "[metrics]") {
  Registry registry;
  auto& reconciles = registry.counter("restarter_reconciles_total", "Reconciles by kind.", {"kind"});
  reconciles.with({"StatefulSet"}).inc();
  reconciles.with({"StatefulSet"}).inc(2);
  reconciles.with({"Deployment"}).inc();
  reconciles.with({"Deployment"}).inc(-5);  // ignored: counters only go up
  registry.gauge("restarter_queue_depth", "Keys waiting.").with().set(3);
  auto& latency = registry.histogram("restarter_latency_seconds", "Latency.", {}, {0.1, 1});
  latency.with().observe(0.05);
  latency.with().observe(0.5);
  latency.with().observe(5);
  registry.counter("restarter_escapes_total", "Help with \\ and\nnewline.", {"v"}).with({"a\"b\\c\nd"}).inc();

  CHECK(registry.render() ==
        "# HELP restarter_reconciles_total Reconciles by kind.\n"
        "# TYPE restarter_reconciles_total counter\n"
        "restarter_reconciles_total{kind=\"Deployment\"} 1\n"
        "restarter_reconciles_total{kind=\"StatefulSet\"} 3\n"
        "# HELP restarter_queue_depth Keys waiting.\n"
        "# TYPE restarter_queue_depth gauge\n"
        "restarter_queue_depth 3\n"
        "# HELP restarter_latency_seconds Latency.\n"
        "# TYPE restarter_latency_seconds histogram\n"
        "restarter_latency_seconds_bucket{le=\"0.10000000000000001\"} 1\n"
        "restarter_latency_seconds_bucket{le=\"1\"} 2\n"
        "restarter_latency_seconds_bucket{le=\"+Inf\"} 3\n"
        "restarter_latency_seconds_sum 5.5499999999999998\n"
        "restarter_latency_seconds_count 3\n"
        "# HELP restarter_escapes_total Help with \\\\ and\\nnewline.\n"
        "# TYPE restarter_escapes_total counter\n"
        "restarter_escapes_total{v=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST_CASE("counters are exact under concurrent increments", "[metrics]") {
  Registry registry;
  Counter& c = registry.counter("c_total", "c").with();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&c] {
      for (int i = 0; i < 10000; ++i) c.inc();
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(c.value() == 40000);
}
