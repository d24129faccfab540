// Benchmark driver for serve-controller (run by controller_bench.sh inside the cluster's network
// namespace; KUBECONFIG from cluster.sh exec):
//
//   controller_bench populate <ns> <statefulsets> <configmaps> <secrets>
//       creates the objects (each StatefulSet references its own configmaps/statefulsets
//       ConfigMaps and secrets/statefulsets Secrets through envFrom; 1 replica, pods faked by kwok)
//   controller_bench wait-annotated <ns> <statefulsets> <refs-per-statefulset> <seconds>
//       waits until every labeled StatefulSet carries all its annotations
//   controller_bench latency <ns> <updates> <configmaps-per-statefulset>
//       updates ConfigMaps one at a time; for each, the time from just before the PATCH to the
//       first GET (polled every millisecond) of the referencing StatefulSet that shows the new
//       <uid>/<rv>; prints p50, p99
//   controller_bench writes
//       apiserver_request_total of write verbs for statefulsets and events (the apiserver's own
//       count, from its /metrics)
//
// A measurement, not a test: it prints figures and fails only when it cannot measure.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "restarter/kube/client.hpp"
#include "restarter/kube/config.hpp"

using namespace restarter;
using nlohmann::json;

namespace {

std::unique_ptr<kube::Client> connect() {
  auto config = kube::loadConfig(kube::LoadOptions{});
  if (!config) {
    std::cerr << "bench: " << config.error().describe() << "\n";
    std::exit(2);
  }
  auto client = kube::Client::create(*config);
  if (!client) {
    std::cerr << "bench: " << client.error().describe() << "\n";
    std::exit(2);
  }
  return std::move(client).value();
}

std::string numbered(const char* prefix, int i) {
  std::ostringstream out;
  out << prefix << std::setw(5) << std::setfill('0') << i;
  return out.str();
}

void parallel(int count, int threads, const std::function<void(int)>& body) {
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = next++; i < count; i = next++) body(i);
    });
  }
  for (auto& thread : pool) thread.join();
}

int populate(const std::string& ns, int statefulSets, int configMaps, int secrets) {
  auto client = connect();
  (void)client->create(kube::resources::namespaces(), "",
                       {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
  std::atomic<int> failures{0};
  auto check = [&](const core::Result<json>& r) {
    if (!r && r.error().kind != core::ErrorKind::AlreadyExists) {
      if (failures++ < 5) std::cerr << "bench: " << r.error().describe() << "\n";
    }
  };
  parallel(configMaps, 4, [&](int i) {
    check(client->create(kube::resources::configMaps(), ns,
                         {{"apiVersion", "v1"}, {"kind", "ConfigMap"},
                          {"metadata", {{"name", numbered("cm-", i)}}}, {"data", {{"v", "0"}}}}));
  });
  parallel(secrets, 4, [&](int i) {
    check(client->create(kube::resources::secrets(), ns,
                         {{"apiVersion", "v1"}, {"kind", "Secret"},
                          {"metadata", {{"name", numbered("secret-", i)}}}, {"stringData", {{"v", "0"}}}}));
  });
  const int cmPer = configMaps / statefulSets;
  const int secretPer = secrets / statefulSets;
  parallel(statefulSets, 4, [&](int i) {
    json envFrom = json::array();
    for (int k = 0; k < cmPer; ++k) envFrom.push_back({{"configMapRef", {{"name", numbered("cm-", i * cmPer + k)}}}});
    for (int k = 0; k < secretPer; ++k) envFrom.push_back({{"secretRef", {{"name", numbered("secret-", i * secretPer + k)}}}});
    const std::string name = numbered("sts-", i);
    json sts = {{"apiVersion", "apps/v1"},
                {"kind", "StatefulSet"},
                {"metadata", {{"name", name}, {"labels", {{"restarter.stackable.tech/enabled", "true"}}}}},
                {"spec",
                 {{"serviceName", name},
                  {"replicas", 1},
                  {"selector", {{"matchLabels", {{"app", name}}}}},
                  {"template",
                   {{"metadata", {{"labels", {{"app", name}}}}},
                    {"spec", {{"containers", {{{"name", "app"}, {"image", "registry.invalid/app:1"}, {"envFrom", envFrom}}}}}}}}}}};
    check(client->create(kube::resources::statefulSets(), ns, sts));
  });
  std::cout << "populated " << ns << ": " << statefulSets << " StatefulSets, " << configMaps
            << " ConfigMaps, " << secrets << " Secrets; failures=" << failures << "\n";
  return failures == 0 ? 0 : 1;
}

std::size_t ownedAnnotations(const json& sts) {
  const json::json_pointer pointer("/spec/template/metadata/annotations");
  if (!sts.contains(pointer)) return 0;
  std::size_t count = 0;
  for (const auto& [key, value] : sts.at(pointer).items()) {
    (void)value;
    if (key.find("restarter.stackable.tech/") != std::string::npos) ++count;
  }
  return count;
}

int waitAnnotated(const std::string& ns, int statefulSets, std::size_t refs, int seconds) {
  auto client = connect();
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    kube::ListOptions options;
    options.labelSelector = "restarter.stackable.tech/enabled=true";
    auto list = client->list(kube::resources::statefulSets(), ns, options);
    int done = 0;
    if (list) {
      for (const json& sts : list->items) done += ownedAnnotations(sts) == refs ? 1 : 0;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done >= statefulSets) {
      std::cout << "all " << done << " StatefulSets annotated after " << elapsed << " s\n";
      return 0;
    }
    if (elapsed > seconds) {
      std::cerr << "bench: only " << done << " of " << statefulSets << " annotated after " << elapsed << " s\n";
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }
}

std::string templateAnnotation(const json& sts, const std::string& key) {
  const json::json_pointer pointer("/spec/template/metadata/annotations");
  if (!sts.contains(pointer)) return {};
  const json& annotations = sts.at(pointer);
  auto it = annotations.find(key);
  return it != annotations.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int latency(const std::string& ns, int updates, int cmPer) {
  auto client = connect();
  kube::ListOptions options;
  options.labelSelector = "restarter.stackable.tech/enabled=true";
  auto list = client->list(kube::resources::statefulSets(), ns, options);
  if (!list || list->items.empty()) {
    std::cerr << "bench: no StatefulSets in " << ns << "\n";
    return 1;
  }
  const int statefulSets = static_cast<int>(list->items.size());
  std::vector<double> samples;
  for (int u = 0; u < updates; ++u) {
    // Spread over the StatefulSets; a prime stride visits different ones each time.
    const int sts = (u * 7919) % statefulSets;
    const int cm = sts * cmPer + (u % cmPer);
    const std::string stsName = numbered("sts-", sts);
    const std::string cmName = numbered("cm-", cm);
    const std::string key = "configmap.restarter.stackable.tech/" + cmName;
    // Polls the StatefulSet every millisecond after the PATCH (a GET costs ~1-3 ms here): the
    // sample is an upper bound by at most one poll.
    const auto started = std::chrono::steady_clock::now();
    const std::string nonce = std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
    auto patched = client->mergePatch(kube::resources::configMaps(), ns, cmName, {{"data", {{"v", nonce}}}});
    if (!patched) {
      std::cerr << "bench: " << patched.error().describe() << "\n";
      return 1;
    }
    const std::string expected = (*patched)["metadata"]["uid"].get<std::string>() + "/" +
                                 (*patched)["metadata"]["resourceVersion"].get<std::string>();
    std::optional<std::chrono::steady_clock::time_point> seen;
    while (std::chrono::steady_clock::now() - started < std::chrono::seconds(30)) {
      auto now = client->get(kube::resources::statefulSets(), ns, stsName);
      if (now && templateAnnotation(*now, key) == expected) {
        seen = std::chrono::steady_clock::now();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!seen) {
      std::cerr << "bench: update " << u << " of " << cmName << " never reached " << stsName << "\n";
      return 1;
    }
    samples.push_back(std::chrono::duration<double, std::milli>(*seen - started).count());
  }
  std::sort(samples.begin(), samples.end());
  auto pct = [&](double p) {
    const auto index = static_cast<std::size_t>(p * static_cast<double>(samples.size() - 1) + 0.5);
    return samples[std::min(index, samples.size() - 1)];
  };
  double sum = 0;
  for (double s : samples) sum += s;
  std::cout << std::fixed << std::setprecision(1) << "latency ms over " << samples.size()
            << " updates: min " << samples.front() << " p50 " << pct(0.5) << " p90 " << pct(0.9)
            << " p99 " << pct(0.99) << " max " << samples.back() << " mean "
            << sum / static_cast<double>(samples.size()) << "\n";
  return 0;
}

int writes() {
  auto client = connect();
  auto text = client->getRaw("/metrics");
  if (!text) {
    std::cerr << "bench: " << text.error().describe() << "\n";
    return 1;
  }
  std::map<std::string, double> totals;
  std::istringstream lines(*text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("apiserver_request_total{", 0) != 0) continue;
    auto label = [&](const std::string& name) {
      const std::string needle = name + "=\"";
      auto at = line.find(needle);
      if (at == std::string::npos) return std::string();
      at += needle.size();
      return line.substr(at, line.find('"', at) - at);
    };
    const std::string verb = label("verb");
    const std::string resource = label("resource");
    if (verb != "PATCH" && verb != "APPLY" && verb != "POST" && verb != "PUT" && verb != "DELETE") continue;
    if (resource != "statefulsets" && resource != "events") continue;
    totals[resource + " " + verb] += std::stod(line.substr(line.rfind(' ') + 1));
  }
  for (const auto& [name, value] : totals) std::cout << name << " " << static_cast<long long>(value) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 5 && args[0] == "populate")
    return populate(args[1], std::stoi(args[2]), std::stoi(args[3]), std::stoi(args[4]));
  if (args.size() == 5 && args[0] == "wait-annotated")
    return waitAnnotated(args[1], std::stoi(args[2]), static_cast<std::size_t>(std::stoi(args[3])), std::stoi(args[4]));
  if (args.size() == 4 && args[0] == "latency") return latency(args[1], std::stoi(args[2]), std::stoi(args[3]));
  if (args.size() == 1 && args[0] == "writes") return writes();
  std::cerr << "usage: controller_bench populate|wait-annotated|latency|writes ... (see the source)\n";
  return 2;
}
