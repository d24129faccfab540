#include "restarter/cache/list_watch.hpp"

#include <algorithm>
#include <cmath>

#include "restarter/core/json_access.hpp"
#include "restarter/kube/errors.hpp"

namespace restarter::cache {

std::chrono::milliseconds backoffDelay(const BackoffPolicy& policy, int failures, double random) {
  double base = static_cast<double>(policy.initial.count()) *
                std::pow(2.0, static_cast<double>(std::max(failures, 1) - 1));
  base = std::min(base, static_cast<double>(policy.max.count()));
  double jitter = std::clamp(policy.jitter, 0.0, 1.0);
  double r = std::clamp(random, 0.0, 1.0);
  double delay = base * (1.0 - jitter) + base * jitter * r;
  return std::chrono::milliseconds(static_cast<std::int64_t>(delay));
}

ListWatch::ListWatch(kube::Client& client, ListWatchOptions options, ListWatchSink& sink, base::Clock& clock,
                     base::Random& random)
    : client_(client), options_(std::move(options)), sink_(sink), clock_(clock), random_(random) {}

void ListWatch::listed(std::string resourceVersion) {
  resourceVersion_ = std::move(resourceVersion);
  failures_ = 0;
}

void ListWatch::backoff(std::stop_token stop, const core::Error& error) {
  ++failures_;
  if (gaveUp()) return;
  sink_.backingOff(true);
  auto delay = backoffDelay(options_.backoff, failures_, random_.uniform());
  if (auto asked = kube::retryAfter(error))
    delay = std::max(delay, std::chrono::duration_cast<std::chrono::milliseconds>(*asked));
  clock_.waitFor(delay, stop);
  sink_.backingOff(false);
}

bool ListWatch::list(std::stop_token stop) {
  kube::ListOptions options;
  options.labelSelector = options_.labelSelector;
  options.fieldSelector = options_.fieldSelector;
  options.metadataOnly = options_.metadataOnly;
  options.limit = options_.pageSize;
  std::size_t skipped = 0;
  std::string resourceVersion;
  for (;;) {
    auto page = client_.listPage(options_.resource, options_.namespace_, options);
    if (stop.stop_requested()) {
      sink_.discardStaged();
      return false;
    }
    if (!page) {
      // A 410 on a continue token (the snapshot expired) lands here too: list again from the start.
      sink_.discardStaged();
      sink_.report(page.error(), true);
      backoff(stop, page.error());
      return false;
    }
    skipped += sink_.stage(std::move(page->items));
    resourceVersion = std::move(page->resourceVersion);
    if (page->continueToken.empty()) break;
    options.continueToken = std::move(page->continueToken);
    options.resourceVersion.clear();  // the continue token pins the snapshot
  }
  sink_.commitList(resourceVersion, skipped);
  listed(std::move(resourceVersion));
  return true;
}

kube::WatchOptions ListWatch::watchOptions() const {
  kube::WatchOptions options;
  options.resourceVersion = resourceVersion_;
  options.labelSelector = options_.labelSelector;
  options.fieldSelector = options_.fieldSelector;
  options.metadataOnly = options_.metadataOnly;
  options.allowBookmarks = true;
  options.timeout = options_.watchTimeout;
  return options;
}

bool ListWatch::afterWatch(const core::Result<kube::WatchEnd>& result, std::stop_token stop,
                           std::size_t delivered) {
  if (delivered > 0) failures_ = 0;
  if (stop.stop_requested()) return true;
  if (result.ok()) return !options_.relistOnStreamEnd;
  sink_.report(result.error(), false);
  if (result.error().kind == core::ErrorKind::Gone) return false;  // relist at once: the RV is too old
  backoff(stop, result.error());
  return true;
}

core::Result<kube::WatchEnd> ListWatch::watchStream(const kube::WatchOptions& options,
                                                    const kube::WatchHandler& handler, std::stop_token stop) {
  return client_.watch(options_.resource, options_.namespace_, options, handler, stop);
}

bool ListWatch::watch(std::stop_token stop) {
  std::size_t delivered = 0;
  auto onEvent = [&](kube::WatchEvent&& event) {
    ++delivered;
    std::string rv = core::metadataString(event.object, "resourceVersion");
    sink_.apply(std::move(event));
    if (!rv.empty()) resourceVersion_ = std::move(rv);
    return true;
  };
  auto result = watchStream(watchOptions(), onEvent, stop);
  return afterWatch(result, stop, delivered);
}

bool ListWatch::step(std::stop_token stop) {
  if (stop.stop_requested() || gaveUp()) return false;
  if (resourceVersion_.empty()) {
    list(stop);
  } else if (!watch(stop)) {
    needRelist();
  }
  return !stop.stop_requested() && !gaveUp();
}

}  // namespace restarter::cache
