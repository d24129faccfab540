// Benchmark (a measurement, not a test): initial sync of ConfigMaps and Secrets metadata-only.
//
//   initial_sync_bench populate <namespace> <count>   create <count> ConfigMaps and Secrets
//                                                      (1 KiB of data each) if not there yet
//   initial_sync_bench sync <namespace> <configmaps|secrets|both>
//        one Reflector per resource (metadata-only, pages of 500) into a Store, timed until every
//        waitForSync returned; prints "wall_ms=<n> maxrss_kb=<n> objects=<n>"
//   initial_sync_bench sync-lean <namespace> <...>     the same with cache::dropManagedFields
//   initial_sync_bench run -- CMD...                  runs CMD (the kubectl reference), prints
//        the same line for it (wall time and the child's peak RSS from wait4)
//
// One measurement per process, so that peak RSS belongs to that measurement alone.
// tests/bench/initial_sync.sh drives it inside the cluster's network namespace.

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "connect_or_exit.hpp"
#include "restarter/cache/reflector.hpp"
#include "restarter/kube/client.hpp"

extern char** environ;

using namespace restarter;
using kube::json;

namespace {

int populate(const std::string& ns, int count) {
  auto client = bench::connectOrExit();
  json namespaceObject = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}};
  (void)client->create(kube::resources::namespaces(), "", namespaceObject);
  std::string payload(1024, 'x');
  std::atomic<int> next{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t) {
    pool.emplace_back([&] {
      for (int i = next++; i < count; i = next++) {
        std::string name = "bench-" + std::to_string(i);
        json cm = {{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata", {{"name", name}}},
                   {"data", {{"payload", payload}}}};
        json secret = {{"apiVersion", "v1"},
                       {"kind", "Secret"},
                       {"metadata", {{"name", name}}},
                       {"stringData", {{"payload", payload}}}};
        auto a = client->create(kube::resources::configMaps(), ns, cm);
        auto b = client->create(kube::resources::secrets(), ns, secret);
        if ((!a && a.error().kind != core::ErrorKind::AlreadyExists) ||
            (!b && b.error().kind != core::ErrorKind::AlreadyExists))
          ++failures;
      }
    });
  }
  for (auto& thread : pool) thread.join();
  std::cout << "populated " << ns << " with " << count << " ConfigMaps and Secrets, failures=" << failures
            << "\n";
  return failures == 0 ? 0 : 1;
}

long maxRssKb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

int sync(const std::string& ns, const std::string& which, bool lean) {
  auto client = bench::connectOrExit();
  std::vector<kube::ResourceRef> refs;
  if (which == "configmaps" || which == "both") refs.push_back(kube::resources::configMaps());
  if (which == "secrets" || which == "both") refs.push_back(kube::resources::secrets());
  std::vector<std::unique_ptr<cache::Store>> stores;
  std::vector<std::unique_ptr<cache::Reflector>> reflectors;
  auto start = std::chrono::steady_clock::now();
  for (const auto& ref : refs) {
    stores.push_back(std::make_unique<cache::Store>());
    cache::ReflectorOptions options;
    options.resource = ref;
    options.namespace_ = ns;
    options.metadataOnly = true;
    options.onError = [](const core::Error& e) { std::cerr << "bench: " << e.describe() << "\n"; };
    if (lean) options.transform = cache::dropManagedFields;
    reflectors.push_back(
        std::make_unique<cache::Reflector>(*client, *stores.back(), options, base::systemClock()));
  }
  std::vector<std::jthread> threads;
  for (auto& reflector : reflectors)
    threads.emplace_back([r = reflector.get()](std::stop_token stop) { r->run(stop); });
  std::size_t objects = 0;
  for (auto& store : stores) {
    if (!store->waitForSync(std::chrono::minutes(5))) {
      std::cerr << "bench: no sync within 5 minutes\n";
      return 1;
    }
    objects += store->size();
  }
  auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  std::cout << "wall_ms=" << wall.count() << " maxrss_kb=" << maxRssKb() << " objects=" << objects << "\n";
  for (auto& thread : threads) thread.request_stop();
  return 0;
}

int run(std::vector<std::string> command) {
  std::vector<char*> argv;
  for (auto& arg : command) argv.push_back(arg.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    std::cerr << "bench: cannot run " << command[0] << "\n";
    return 2;
  }
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  auto wall = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  std::cout << "wall_ms=" << wall.count() << " maxrss_kb=" << usage.ru_maxrss << " exit=" << WEXITSTATUS(status)
            << "\n";
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 3 && args[0] == "populate") return populate(args[1], std::stoi(args[2]));
  if (args.size() == 3 && args[0] == "sync") return sync(args[1], args[2], false);
  if (args.size() == 3 && args[0] == "sync-lean") return sync(args[1], args[2], true);
  if (args.size() >= 3 && args[0] == "run" && args[1] == "--")
    return run(std::vector<std::string>(args.begin() + 2, args.end()));
  std::cerr
      << "usage: initial_sync_bench populate NS COUNT | sync|sync-lean NS configmaps|secrets|both | run -- CMD...\n";
  return 2;
}
