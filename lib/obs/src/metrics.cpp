#include "restarter/obs/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <variant>

namespace restarter::obs {

void Counter::inc(double amount) noexcept {
  if (!(amount >= 0)) return;  // counters only go up; NaN and negatives are dropped
  double current = value_.load(std::memory_order_relaxed);
  while (!value_.compare_exchange_weak(current, current + amount, std::memory_order_relaxed)) {
  }
}

void Gauge::inc(double amount) noexcept {
  double current = value_.load(std::memory_order_relaxed);
  while (!value_.compare_exchange_weak(current, current + amount, std::memory_order_relaxed)) {
  }
}

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)) {
  std::sort(bounds_.begin(), bounds_.end());
  counts_.assign(bounds_.size() + 1, 0);
}

void Histogram::observe(double value) noexcept {
  if (std::isnan(value)) return;
  const auto bucket =
      static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  std::lock_guard<std::mutex> lock(mutex_);
  ++counts_[bucket];
  sum_ += value;
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.bounds = bounds_;
  std::lock_guard<std::mutex> lock(mutex_);
  std::uint64_t running = 0;
  for (std::uint64_t c : counts_) {
    running += c;
    s.cumulative.push_back(running);
  }
  s.count = running;
  s.sum = sum_;
  return s;
}

std::vector<double> latencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}

template <typename Metric>
Metric& Family<Metric>::with(std::vector<std::string> labelValues) {
  labelValues.resize(labelNames_.size());
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = series_[labelValues];
  if (!slot) {
    if constexpr (std::is_same_v<Metric, Histogram>) {
      slot = std::make_unique<Histogram>(bounds_);
    } else {
      slot = std::make_unique<Metric>();
    }
  }
  return *slot;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

struct Registry::Entry {
  std::variant<std::unique_ptr<Family<Counter>>, std::unique_ptr<Family<Gauge>>,
               std::unique_ptr<Family<Histogram>>>
      family;
};

Registry::Registry() = default;
Registry::~Registry() = default;

Family<Counter>& Registry::counter(const std::string& name, const std::string& help,
                                   std::vector<std::string> labelNames) {
  auto family = std::make_unique<Family<Counter>>(name, help, std::move(labelNames));
  Family<Counter>& ref = *family;
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_back(std::make_unique<Entry>(Entry{std::move(family)}));
  return ref;
}

Family<Gauge>& Registry::gauge(const std::string& name, const std::string& help,
                               std::vector<std::string> labelNames) {
  auto family = std::make_unique<Family<Gauge>>(name, help, std::move(labelNames));
  Family<Gauge>& ref = *family;
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_back(std::make_unique<Entry>(Entry{std::move(family)}));
  return ref;
}

Family<Histogram>& Registry::histogram(const std::string& name, const std::string& help,
                                       std::vector<std::string> labelNames, std::vector<double> bounds) {
  auto family = std::make_unique<Family<Histogram>>(name, help, std::move(labelNames), std::move(bounds));
  Family<Histogram>& ref = *family;
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.push_back(std::make_unique<Entry>(Entry{std::move(family)}));
  return ref;
}

namespace {

std::string escapeHelp(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string escapeLabelValue(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"')
      out += "\\\"";
    else
      out += c;
  }
  return out;
}

std::string number(double value) {
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (std::isnan(value)) return "NaN";
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

// `{a="x",b="y"}` plus an optional extra label (for histogram buckets); "" when empty.
std::string labelSet(const std::vector<std::string>& names, const std::vector<std::string>& values,
                     const std::string& extraName = "", const std::string& extraValue = "") {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += (out.empty() ? "" : ",") + names[i] + "=\"" + escapeLabelValue(values[i]) + "\"";
  }
  if (!extraName.empty()) out += (out.empty() ? "" : ",") + extraName + "=\"" + extraValue + "\"";
  return out.empty() ? out : "{" + out + "}";
}

template <typename F>
void header(std::string& out, const F& family, const char* type) {
  out += "# HELP " + family.name() + " " + escapeHelp(family.help()) + "\n";
  out += "# TYPE " + family.name() + " " + type + "\n";
}

}  // namespace

std::string Registry::render() const {
  std::string out;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& entry : entries_) {
    if (const auto* counter = std::get_if<std::unique_ptr<Family<Counter>>>(&entry->family)) {
      const auto& f = **counter;
      header(out, f, "counter");
      f.forEach([&](const auto& labels, const Counter& c) {
        out += f.name() + labelSet(f.labelNames(), labels) + " " + number(c.value()) + "\n";
      });
    } else if (const auto* gauge = std::get_if<std::unique_ptr<Family<Gauge>>>(&entry->family)) {
      const auto& f = **gauge;
      header(out, f, "gauge");
      f.forEach([&](const auto& labels, const Gauge& g) {
        out += f.name() + labelSet(f.labelNames(), labels) + " " + number(g.value()) + "\n";
      });
    } else {
      const auto& f = *std::get<std::unique_ptr<Family<Histogram>>>(entry->family);
      header(out, f, "histogram");
      f.forEach([&](const auto& labels, const Histogram& h) {
        const Histogram::Snapshot s = h.snapshot();
        for (std::size_t i = 0; i < s.bounds.size(); ++i) {
          out += f.name() + "_bucket" + labelSet(f.labelNames(), labels, "le", number(s.bounds[i])) + " " +
                 std::to_string(s.cumulative[i]) + "\n";
        }
        out += f.name() + "_bucket" + labelSet(f.labelNames(), labels, "le", "+Inf") + " " +
               std::to_string(s.count) + "\n";
        out += f.name() + "_sum" + labelSet(f.labelNames(), labels) + " " + number(s.sum) + "\n";
        out += f.name() + "_count" + labelSet(f.labelNames(), labels) + " " + std::to_string(s.count) + "\n";
      });
    }
  }
  return out;
}

}  // namespace restarter::obs
