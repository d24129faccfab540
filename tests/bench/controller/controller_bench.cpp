// Benchmark driver for serve-controller (run by controller_bench.sh inside the cluster's network
// namespace; KUBECONFIG from cluster.sh exec):
//
//   controller_bench populate <ns> <statefulsets> <configmaps> <secrets>
//       creates the objects that do not exist yet (each StatefulSet references its own
//       configmaps/statefulsets ConfigMaps and secrets/statefulsets Secrets, or BENCH_CM_REFS and
//       BENCH_SECRET_REFS of them, the rest referenced by none, through envFrom, or with
//       BENCH_READS=keys through env key refs to their one key (key-level records, k2);
//       BENCH_REPLICAS replicas, default 1, pods faked by kwok), so a population grows by running it
//       with larger counts; every ConfigMap and Secret holds one key of BENCH_OBJECT_BYTES bytes
//       (default 1024); each StatefulSet also carries Reloader's opt-in annotation
//       reloader.stakater.com/auto: "true" (restarter ignores it unless --reloader-annotations),
//       so the same population measures Reloader with its default flags
//   controller_bench wait-settled <ns> <statefulsets> <refs-per-statefulset> <seconds>
//       waits until every labeled StatefulSet has each of its references recorded as the
//       controller records it at first look: by default (a StatefulSet created unannotated, no
//       webhook, is one being opted in) an entry of the baseline, the metadata annotation
//       restarter.stackable.tech/baseline, which restarts nothing; after a rollout (or with
//       --roll-on-opt-in) the reference's template annotation; prints how many carry which and
//       how many were rolled at start (generation above 1); fails after <seconds>
//   controller_bench latency <ns> <updates> <configmaps-per-statefulset> [interval-ms]
//       updates ConfigMaps one at a time, starting one at most every interval-ms (default 0: at
//       once after the previous one was seen), each referenced by another StatefulSet, one never
//       rolled (generation 1) when there are enough; for each, the time from just before the PATCH to
//       the watch event of the referencing StatefulSet that first shows the new <uid>/<rv>
//       (restarter's template annotation), or with BENCH_LATENCY_OF=generation the first event
//       with a higher metadata.generation (any change of the pod template: how Reloader's default
//       strategy, an env var per object, is seen); prints p50, p99; with BENCH_SAMPLES=FILE also
//       every latency in ms, one per line, in the order measured
//   controller_bench wait-reloading <ns> <seconds>
//       for a tool that records nothing at start (Reloader): updates cm-00000 once a second until
//       sts-00000, which references it, shows a higher metadata.generation; the tool's time from
//       start to its first reload is then the time to this command's success (an update it saw
//       in its initial list is not a change to it, hence the repeats); fails after <seconds>
//   controller_bench wait-quiet <ns> <quiet-seconds> <seconds>
//       after wait-reloading: until sts-00000's metadata.generation has not changed for
//       <quiet-seconds>, so the tool has worked off the updates wait-reloading sent before it first
//       reloaded (Reloader answers each, one after the other) and what is measured next is not
//       that backlog; prints how many more reloads it made; fails after <seconds>
//   controller_bench requests
//       apiserver_request_total of every verb but WATCH for the workload kinds, events,
//       ConfigMaps and Secrets, status subresources left out (the workload controllers' writes
//       after a rollout); the apiserver's own count, from its /metrics
//
// A measurement, not a test: it prints figures and fails only when it cannot measure.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "../connect_or_exit.hpp"
#include "restarter/core/annotation_keys.hpp"
#include "restarter/core/baseline.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/config.hpp"

using namespace restarter;
using nlohmann::json;

namespace {

// The StatefulSets the benchmark makes and restarter manages.
constexpr const char* kLabeledSelector = "restarter.stackable.tech/enabled=true";

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

// The names of the objects of `resource` in `ns` (a metadata-only list).
std::set<std::string> existingNames(kube::Client& client, const kube::ResourceRef& resource,
                                    const std::string& ns) {
  kube::ListOptions options;
  options.metadataOnly = true;
  std::set<std::string> names;
  auto list = client.list(resource, ns, options);
  if (!list) {
    std::cerr << "bench: " << list.error().describe() << "\n";
    std::exit(1);
  }
  for (const json& item : list->items) names.insert(item["metadata"]["name"].get<std::string>());
  return names;
}

std::size_t objectBytes() {
  const char* bytes = std::getenv("BENCH_OBJECT_BYTES");
  return bytes != nullptr ? static_cast<std::size_t>(std::stoul(bytes)) : 1024;
}

int replicas() {
  const char* replicas = std::getenv("BENCH_REPLICAS");
  return replicas != nullptr ? std::stoi(replicas) : 1;
}

// BENCH_READS=keys: the StatefulSets read their objects' one key through env key refs (each
// reference then records the digest of the keys it reads, k2) instead of envFrom (every key, h2).
bool readsKeys() {
  const char* reads = std::getenv("BENCH_READS");
  return reads != nullptr && std::string(reads) == "keys";
}

// BENCH_CM_REFS, BENCH_SECRET_REFS: how many ConfigMaps (Secrets) each StatefulSet references
// (default: all of them shared out, count / statefulsets); the rest no workload references (the
// realistic population of tests/bench/scale.sh: most objects of a cluster are read by no workload).
int refsPer(const char* variable, int fallback) {
  const char* value = std::getenv(variable);
  return value != nullptr ? std::stoi(value) : fallback;
}

int populate(const std::string& ns, int statefulSets, int configMaps, int secrets) {
  auto client = bench::connectOrExit();
  (void)client->create(kube::resources::namespaces(), "",
                       {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}});
  std::atomic<int> failures{0};
  std::atomic<int> created{0};
  auto check = [&](const core::Result<json>& r) {
    if (!r && r.error().kind != core::ErrorKind::AlreadyExists) {
      if (failures++ < 5) std::cerr << "bench: " << r.error().describe() << "\n";
    } else {
      ++created;
    }
  };
  // The content: printable, not compressible to nothing, the same in every object.
  std::string value(objectBytes(), 'x');
  for (std::size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>('a' + (i * 7 + i / 26) % 26);
  const auto haveConfigMaps = existingNames(*client, kube::resources::configMaps(), ns);
  const auto haveSecrets = existingNames(*client, kube::resources::secrets(), ns);
  const auto haveStatefulSets = existingNames(*client, kube::resources::statefulSets(), ns);
  parallel(configMaps, 4, [&](int i) {
    if (haveConfigMaps.contains(numbered("cm-", i))) return;
    check(client->create(kube::resources::configMaps(), ns,
                         {{"apiVersion", "v1"},
                          {"kind", "ConfigMap"},
                          {"metadata", {{"name", numbered("cm-", i)}}},
                          {"data", {{"v", value}}}}));
  });
  parallel(secrets, 4, [&](int i) {
    if (haveSecrets.contains(numbered("secret-", i))) return;
    check(client->create(kube::resources::secrets(), ns,
                         {{"apiVersion", "v1"},
                          {"kind", "Secret"},
                          {"metadata", {{"name", numbered("secret-", i)}}},
                          {"stringData", {{"v", value}}}}));
  });
  const int cmPer = std::min(refsPer("BENCH_CM_REFS", configMaps / statefulSets), configMaps / statefulSets);
  const int secretPer = std::min(refsPer("BENCH_SECRET_REFS", secrets / statefulSets), secrets / statefulSets);
  const bool keys = readsKeys();
  parallel(statefulSets, 4, [&](int i) {
    json envFrom = json::array();
    json env = json::array();
    for (int k = 0; k < cmPer; ++k) {
      const std::string object = numbered("cm-", i * cmPer + k);
      if (keys) {
        env.push_back({{"name", "CM" + std::to_string(k)},
                       {"valueFrom", {{"configMapKeyRef", {{"name", object}, {"key", "v"}}}}}});
      } else {
        envFrom.push_back({{"configMapRef", {{"name", object}}}});
      }
    }
    for (int k = 0; k < secretPer; ++k) {
      const std::string object = numbered("secret-", i * secretPer + k);
      if (keys) {
        env.push_back({{"name", "S" + std::to_string(k)},
                       {"valueFrom", {{"secretKeyRef", {{"name", object}, {"key", "v"}}}}}});
      } else {
        envFrom.push_back({{"secretRef", {{"name", object}}}});
      }
    }
    const std::string name = numbered("sts-", i);
    if (haveStatefulSets.contains(name)) return;
    json sts = {{"apiVersion", "apps/v1"},
                {"kind", "StatefulSet"},
                {"metadata",
                 {{"name", name},
                  {"labels", {{"restarter.stackable.tech/enabled", "true"}}},
                  {"annotations", {{"reloader.stakater.com/auto", "true"}}}}},
                {"spec",
                 {{"serviceName", name},
                  {"replicas", replicas()},
                  {"selector", {{"matchLabels", {{"app", name}}}}},
                  {"template",
                   {{"metadata", {{"labels", {{"app", name}}}}},
                    {"spec",
                     {{"containers",
                       {{{"name", "app"},
                         {"image", "registry.invalid/app:1"},
                         {"envFrom", envFrom},
                         {"env", env}}}}}}}}}}};
    check(client->create(kube::resources::statefulSets(), ns, sts));
  });
  std::cout << "populated " << ns << ": " << statefulSets << " StatefulSets, " << configMaps << " ConfigMaps, "
            << secrets << " Secrets of " << value.size() << " bytes; created now " << created
            << ", failures=" << failures << "\n";
  return failures == 0 ? 0 : 1;
}

// The references of a StatefulSet that restarter has recorded, as "<kind>/<name>": those with a
// template annotation (written by a rollout) and those with a baseline entry (written at first
// look without a restart; the first rollout empties the baseline and writes every template
// annotation). The benchmark's object names are short, so a template key holds the name itself.
std::set<std::string> recordedReferences(const json& sts) {
  std::set<std::string> recorded;
  const json::json_pointer pointer("/spec/template/metadata/annotations");
  if (sts.contains(pointer) && sts.at(pointer).is_object()) {
    for (const auto& [key, value] : sts.at(pointer).items()) {
      (void)value;
      if (auto parsed = core::parseTemplateAnnotationKey(key))
        recorded.insert(std::string(core::refKindName(parsed->kind)) + "/" + parsed->namePart);
    }
  }
  for (const auto& [key, value] : core::recordedBaseline(sts)) {
    (void)value;
    recorded.insert(key);
  }
  return recorded;
}

// "Synced and settled" with the defaults: every labeled StatefulSet carries a record of each of
// its references (recordedReferences). The StatefulSets are created unannotated and no webhook
// runs, so by default the controller's first look records a baseline (a metadata-only write, no
// rollout); with --roll-on-opt-in it writes the template annotations (a rollout). Either counts.
int waitSettled(const std::string& ns, int statefulSets, std::size_t refs, int seconds) {
  auto client = bench::connectOrExit();
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    kube::ListOptions options;
    options.labelSelector = kLabeledSelector;
    auto list = client->list(kube::resources::statefulSets(), ns, options);
    int done = 0, baselines = 0, annotated = 0, rolled = 0;
    if (list) {
      for (const json& sts : list->items) {
        if (recordedReferences(sts).size() < refs) continue;
        ++done;
        baselines += core::recordedBaseline(sts).empty() ? 0 : 1;
        annotated += sts.contains(json::json_pointer("/spec/template/metadata/annotations")) ? 1 : 0;
        rolled += sts.value("/metadata/generation"_json_pointer, 1) > 1 ? 1 : 0;
      }
    } else {
      std::cerr << "bench: " << list.error().describe() << "\n";
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done >= statefulSets) {
      std::cout << "all " << done << " StatefulSets settled after " << elapsed << " s: " << baselines
                << " with a baseline, " << annotated << " with template annotations, " << rolled
                << " rolled (generation above 1)\n";
      return 0;
    }
    if (elapsed > seconds) {
      std::cerr << "bench: only " << done << " of " << statefulSets << " StatefulSets have their " << refs
                << " references recorded (baseline or template annotations) after " << elapsed << " s\n";
      return 1;
    }
    // A list of every StatefulSet is a large read at scale: every 2 s there, as before; a small
    // population (the smoke run) is looked at more often, so its figure is not a multiple of 2 s.
    std::this_thread::sleep_for(std::chrono::milliseconds(statefulSets > 100 ? 2000 : 200));
  }
}

std::string templateAnnotation(const json& sts, const std::string& key) {
  const json::json_pointer pointer("/spec/template/metadata/annotations");
  if (!sts.contains(pointer)) return {};
  const json& annotations = sts.at(pointer);
  auto it = annotations.find(key);
  return it != annotations.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// Sees StatefulSet changes as they happen: one watch of the namespace's labeled StatefulSets
// (from the list's resourceVersion, so nothing between the list and the watch is missed) records
// when each one first shows an expected annotation value. A watch rather than polling: polling a
// StatefulSet every millisecond adds hundreds of GETs a second to the apiserver the controller
// is waiting for, and so inflates what it measures.
// The labeled StatefulSets of `ns`, what AnnotationWatch watches; nullopt, said on stderr, when
// the list fails.
std::optional<kube::ObjectList> listLabeled(kube::Client& client, const std::string& ns) {
  kube::ListOptions options;
  options.labelSelector = kLabeledSelector;
  auto list = client.list(kube::resources::statefulSets(), ns, options);
  if (!list) {
    std::cerr << "bench: " << list.error().describe() << "\n";
    return std::nullopt;
  }
  return std::move(*list);
}

class AnnotationWatch {
 public:
  // Watches from `listed` (listLabeled), starting from what it holds: the watch sends only what
  // changed since.
  AnnotationWatch(kube::Client& client, const std::string& ns, const kube::ObjectList& listed)
      : thread_([this, &client, ns, resourceVersion = listed.resourceVersion](std::stop_token stop) {
          kube::WatchOptions options;
          options.resourceVersion = resourceVersion;
          options.labelSelector = kLabeledSelector;
          options.timeout = std::chrono::minutes(30);
          auto end = client.watch(
              kube::resources::statefulSets(), ns, options,
              [this](kube::WatchEvent&& event) { return seen(event); }, stop);
          std::lock_guard lock(mutex_);
          ended_ = true;
          if (!end) error_ = end.error().describe();
          cv_.notify_all();
        }) {
    std::lock_guard lock(mutex_);
    for (const json& sts : listed.items) record(sts, std::chrono::steady_clock::now());
  }

  // The highest metadata.generation seen of StatefulSet `name` (0 when none).
  long generation(const std::string& name) {
    std::lock_guard lock(mutex_);
    auto it = generations_.find(name);
    return it == generations_.end() || it->second.empty() ? 0 : it->second.back().first;
  }
  // Expect StatefulSet `name` to show annotation `key` = `value` (perhaps it already has).
  void expect(const std::string& name, const std::string& key, const std::string& value) {
    std::lock_guard lock(mutex_);
    name_ = name;
    key_ = key;
    value_ = value;
    minGeneration_ = 0;
    at_.reset();
    check();
  }
  // Expect StatefulSet `name` to reach metadata.generation `atLeast` (perhaps it already has).
  void expectGeneration(const std::string& name, long atLeast) {
    std::lock_guard lock(mutex_);
    name_ = name;
    key_.clear();
    minGeneration_ = atLeast;
    at_.reset();
    check();
  }
  // When the expectation was met, or nothing after `timeout` (or if the watch ended).
  std::optional<std::chrono::steady_clock::time_point> wait(std::chrono::seconds timeout) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, timeout, [this] { return at_.has_value() || ended_; });
    if (ended_ && !at_) std::cerr << "bench: the watch ended: " << error_ << "\n";
    return at_;
  }

 private:
  // Records when each annotation value of each StatefulSet first appeared, so that an event
  // that arrives before expect() (the controller beat the PATCH's answer) still counts.
  bool seen(const kube::WatchEvent& event) {
    const auto now = std::chrono::steady_clock::now();
    if (event.type != kube::WatchEvent::Type::Added && event.type != kube::WatchEvent::Type::Modified)
      return true;
    std::lock_guard lock(mutex_);
    record(event.object, now);
    check();
    return true;
  }

  // With mutex_ held: what `sts` shows at `now`.
  void record(const json& sts, std::chrono::steady_clock::time_point now) {
    const json::json_pointer name("/metadata/name");
    if (!sts.contains(name) || !sts.at(name).is_string()) return;
    const std::string stsName = sts.at(name).get<std::string>();
    const long generation = sts.value("/metadata/generation"_json_pointer, 0L);
    auto& history = generations_[stsName];
    if (history.empty() || history.back().first < generation) history.emplace_back(generation, now);
    const json::json_pointer annotations("/spec/template/metadata/annotations");
    if (!sts.contains(annotations) || !sts.at(annotations).is_object()) return;
    auto& known = firstSeen_[stsName];
    for (const auto& [key, value] : sts.at(annotations).items()) {
      if (!value.is_string()) continue;
      auto& entry = known[key];
      if (entry.first != value.get<std::string>()) entry = {value.get<std::string>(), now};
    }
  }

  // With mutex_ held.
  void check() {
    if (at_) return;
    if (minGeneration_ > 0) {
      auto history = generations_.find(name_);
      if (history == generations_.end()) return;
      for (const auto& [generation, when] : history->second) {
        if (generation < minGeneration_) continue;
        at_ = when;
        cv_.notify_all();
        return;
      }
      return;
    }
    auto sts = firstSeen_.find(name_);
    if (sts == firstSeen_.end()) return;
    auto entry = sts->second.find(key_);
    if (entry == sts->second.end() || entry->second.first != value_) return;
    at_ = entry->second.second;
    cv_.notify_all();
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::string name_, key_, value_;
  long minGeneration_ = 0;  // > 0: expectGeneration
  std::optional<std::chrono::steady_clock::time_point> at_;
  // StatefulSet -> each higher metadata.generation and when it was first seen
  std::map<std::string, std::vector<std::pair<long, std::chrono::steady_clock::time_point>>> generations_;
  // StatefulSet -> annotation key -> (value, when first seen)
  std::map<std::string, std::map<std::string, std::pair<std::string, std::chrono::steady_clock::time_point>>>
      firstSeen_;
  bool ended_ = false;
  std::string error_;
  std::jthread thread_;  // last: joined (stop requested) before the members it uses go
};

int latency(const std::string& ns, int updates, int cmPer, std::chrono::milliseconds interval) {
  auto client = bench::connectOrExit();
  auto list = listLabeled(*client, ns);
  if (!list) return 1;
  if (list->items.empty()) {
    std::cerr << "bench: no StatefulSets in " << ns << "\n";
    return 1;
  }
  // The StatefulSets never rolled (generation 1), when there are enough of them: a change of one
  // rolled moments before (by an earlier run at a smaller size, or by the other tool) would be held
  // by the default rollout hold, and its latency would be the hold's.
  std::vector<int> candidates, all;
  for (const json& sts : list->items) {
    const std::string name = sts.value("/metadata/name"_json_pointer, std::string());
    if (name.rfind("sts-", 0) != 0) continue;
    const int index = std::stoi(name.substr(4));
    all.push_back(index);
    if (sts.value("/metadata/generation"_json_pointer, 0L) == 1) candidates.push_back(index);
  }
  if (static_cast<int>(candidates.size()) < updates) candidates = all;
  if (candidates.empty()) {
    std::cerr << "bench: no StatefulSet named sts-N in " << ns << "\n";
    return 1;
  }
  std::sort(candidates.begin(), candidates.end());
  const int statefulSets = static_cast<int>(candidates.size());
  std::cout << "updates go to " << statefulSets << " of " << all.size() << " StatefulSets"
            << (statefulSets < static_cast<int>(all.size()) ? " (those never rolled)" : "") << "\n";
  AnnotationWatch watch(*client, ns, *list);
  const char* latencyOf = std::getenv("BENCH_LATENCY_OF");
  const bool byGeneration = latencyOf != nullptr && std::string(latencyOf) == "generation";
  std::vector<double> samples;
  auto nextStart = std::chrono::steady_clock::now();
  for (int u = 0; u < updates; ++u) {
    std::this_thread::sleep_until(nextStart);
    nextStart = std::chrono::steady_clock::now() + interval;
    // Spread over the StatefulSets; a prime stride visits different ones each time.
    const int sts = candidates[static_cast<std::size_t>((static_cast<long>(u) * 7919) % statefulSets)];
    const int cm = sts * cmPer + (u % cmPer);
    const std::string stsName = numbered("sts-", sts);
    const std::string cmName = numbered("cm-", cm);
    const std::string key = "configmap.restarter.stackable.tech/" + cmName;
    const std::string nonce = std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
    // The expected value is known only from the PATCH's answer; an event showing it before
    // expect() is not lost (AnnotationWatch keeps when each value first appeared).
    const long generationBefore = watch.generation(stsName);
    const auto started = std::chrono::steady_clock::now();
    auto patched = client->mergePatch(kube::resources::configMaps(), ns, cmName, {{"data", {{"v", nonce}}}});
    if (!patched) {
      std::cerr << "bench: " << patched.error().describe() << "\n";
      return 1;
    }
    const std::string expected = (*patched)["metadata"]["uid"].get<std::string>() + "/" +
                                 (*patched)["metadata"]["resourceVersion"].get<std::string>();
    if (byGeneration) {
      watch.expectGeneration(stsName, generationBefore + 1);
    } else {
      watch.expect(stsName, key, expected);
    }
    auto seen = watch.wait(std::chrono::seconds(30));
    if (!seen) {
      auto now = client->get(kube::resources::statefulSets(), ns, stsName);
      std::cerr << "bench: update " << u << " of " << cmName << " never seen on " << stsName
                << " within 30 s (now: "
                << (!now ? now.error().describe()
                    : byGeneration
                        ? "generation " + std::to_string(now->value("/metadata/generation"_json_pointer, 0L))
                        : templateAnnotation(*now, key))
                << ")\n";
      return 1;
    }
    samples.push_back(std::chrono::duration<double, std::milli>(*seen - started).count());
  }
  if (const char* path = std::getenv("BENCH_SAMPLES")) {
    std::ofstream out(path);
    for (double sample : samples) out << sample << "\n";
    if (!out) {
      std::cerr << "bench: cannot write " << path << "\n";
      return 1;
    }
  }
  std::sort(samples.begin(), samples.end());
  auto pct = [&](double p) {
    const auto index = static_cast<std::size_t>(p * static_cast<double>(samples.size() - 1) + 0.5);
    return samples[std::min(index, samples.size() - 1)];
  };
  double sum = 0;
  for (double s : samples) sum += s;
  std::cout << std::fixed << std::setprecision(1) << "latency ms over " << samples.size() << " updates: min "
            << samples.front() << " p50 " << pct(0.5) << " p90 " << pct(0.9) << " p99 " << pct(0.99) << " max "
            << samples.back() << " mean " << sum / static_cast<double>(samples.size()) << "\n";
  return 0;
}

// For a tool that writes nothing at start (Reloader with its defaults): how long until it reloads.
int waitReloading(const std::string& ns, int seconds) {
  auto client = bench::connectOrExit();
  const std::string stsName = numbered("sts-", 0);
  const std::string cmName = numbered("cm-", 0);
  auto list = listLabeled(*client, ns);
  if (!list) return 1;
  AnnotationWatch watch(*client, ns, *list);
  const long before = watch.generation(stsName);
  if (before == 0) {
    std::cerr << "bench: no " << stsName << " in " << ns << "\n";
    return 1;
  }
  watch.expectGeneration(stsName, before + 1);
  const auto start = std::chrono::steady_clock::now();
  for (int update = 1;; ++update) {
    const std::string nonce = std::to_string(std::chrono::system_clock::now().time_since_epoch().count());
    auto patched = client->mergePatch(kube::resources::configMaps(), ns, cmName, {{"data", {{"v", nonce}}}});
    if (!patched) std::cerr << "bench: " << patched.error().describe() << "\n";
    if (watch.wait(std::chrono::seconds(1))) {
      std::cout << stsName << " reloaded after update " << update << " of " << cmName << "\n";
      return 0;
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(seconds)) {
      std::cerr << "bench: " << stsName << " not reloaded after " << update << " updates of " << cmName
                << " in " << seconds << " s\n";
      return 1;
    }
  }
}

int waitQuiet(const std::string& ns, int quietSeconds, int seconds) {
  auto client = bench::connectOrExit();
  const std::string stsName = numbered("sts-", 0);
  auto list = listLabeled(*client, ns);
  if (!list) return 1;
  AnnotationWatch watch(*client, ns, *list);
  const long first = watch.generation(stsName);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    watch.expectGeneration(stsName, watch.generation(stsName) + 1);
    if (!watch.wait(std::chrono::seconds(quietSeconds))) {
      std::cout << stsName << " quiet for " << quietSeconds << " s after " << watch.generation(stsName) - first
                << " more reloads\n";
      return 0;
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(seconds)) {
      std::cerr << "bench: " << stsName << " still reloaded after " << seconds << " s\n";
      return 1;
    }
  }
}

int requests() {
  auto client = bench::connectOrExit();
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
    static const std::set<std::string> resources = {
        "statefulsets", "deployments",       "daemonsets", "replicasets", "cronjobs", "jobs",
        "rollouts",     "deploymentconfigs", "events",     "configmaps",  "secrets"};
    const std::string verb = label("verb");
    const std::string resource = label("resource");
    // Status writes are the workload controllers' (after a rollout), not the tool's.
    if (verb == "WATCH" || verb == "WATCHLIST" || !resources.contains(resource) ||
        label("subresource") == "status")
      continue;
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
  if (args.size() == 5 && args[0] == "wait-settled")
    return waitSettled(args[1], std::stoi(args[2]), static_cast<std::size_t>(std::stoi(args[3])),
                       std::stoi(args[4]));
  if ((args.size() == 4 || args.size() == 5) && args[0] == "latency")
    return latency(args[1], std::stoi(args[2]), std::stoi(args[3]),
                   std::chrono::milliseconds(args.size() == 5 ? std::stoi(args[4]) : 0));
  if (args.size() == 3 && args[0] == "wait-reloading") return waitReloading(args[1], std::stoi(args[2]));
  if (args.size() == 4 && args[0] == "wait-quiet")
    return waitQuiet(args[1], std::stoi(args[2]), std::stoi(args[3]));
  if (args.size() == 1 && args[0] == "requests") return requests();
  std::cerr
      << "usage: controller_bench populate|wait-settled|latency|wait-reloading|wait-quiet|requests ... (see "
         "the source)\n";
  return 2;
}
