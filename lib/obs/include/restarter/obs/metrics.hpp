#pragma once
// Prometheus metrics: counters, gauges and histograms in labeled families, rendered in the text
// exposition format (version 0.0.4).
//
// Thread-safety: every operation may be called from any thread. A metric reference returned by
// `Family::with` stays valid as long as its Registry lives, so hot paths look a series up once.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace restarter::obs {

class Counter {
 public:
  void inc(double amount = 1.0) noexcept;
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Gauge {
 public:
  void set(double value) noexcept { value_.store(value, std::memory_order_relaxed); }
  void inc(double amount = 1.0) noexcept;
  void dec(double amount = 1.0) noexcept { inc(-amount); }
  double value() const noexcept { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Histogram {
 public:
  // `bounds` are the upper bounds of the buckets, ascending; +Inf is implicit.
  explicit Histogram(std::vector<double> bounds);
  void observe(double value) noexcept;

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<std::uint64_t> cumulative;  // per bound, then +Inf
    double sum = 0;
    std::uint64_t count = 0;
  };
  Snapshot snapshot() const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::vector<std::uint64_t> counts_;  // per bucket (not cumulative), last is +Inf
  double sum_ = 0;
};

// Default latency buckets in seconds: 1 ms to 10 s.
std::vector<double> latencyBuckets();

template <typename Metric>
class Family {
 public:
  Family(std::string name, std::string help, std::vector<std::string> labelNames,
         std::vector<double> bounds = {})
      : name_(std::move(name)),
        help_(std::move(help)),
        labelNames_(std::move(labelNames)),
        bounds_(std::move(bounds)) {}

  // The series for these label values (as many as label names; missing ones are empty).
  Metric& with(std::vector<std::string> labelValues = {});

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  const std::vector<std::string>& labelNames() const { return labelNames_; }

  // Calls visit(labelValues, metric) for each series, in label order.
  template <typename Visit>
  void forEach(Visit&& visit) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [labels, metric] : series_) visit(labels, *metric);
  }

 private:
  std::string name_;
  std::string help_;
  std::vector<std::string> labelNames_;
  std::vector<double> bounds_;
  mutable std::mutex mutex_;
  std::map<std::vector<std::string>, std::unique_ptr<Metric>> series_;
};

class Registry {
 public:
  Registry();
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  Family<Counter>& counter(const std::string& name, const std::string& help,
                           std::vector<std::string> labelNames = {});
  Family<Gauge>& gauge(const std::string& name, const std::string& help,
                       std::vector<std::string> labelNames = {});
  Family<Histogram>& histogram(const std::string& name, const std::string& help,
                               std::vector<std::string> labelNames = {},
                               std::vector<double> bounds = latencyBuckets());

  // The whole registry in the Prometheus text format; families in registration order.
  std::string render() const;

 private:
  struct Entry;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace restarter::obs
