#include "restarter/cache/reflector.hpp"

#include <algorithm>
#include <cmath>

#include "restarter/core/json_access.hpp"
#include "restarter/kube/errors.hpp"

namespace restarter::cache {

const char* reflectorStateName(Reflector::State state) noexcept {
  switch (state) {
    case Reflector::State::Listing: return "listing";
    case Reflector::State::Watching: return "watching";
    case Reflector::State::Backoff: return "backoff";
    case Reflector::State::Stopped: return "stopped";
  }
  return "?";
}

void dropManagedFields(nlohmann::json& object) {
  if (!object.is_object()) return;
  auto metadata = object.find("metadata");
  if (metadata == object.end()) return;
  nlohmann::json& m = *metadata;
  if (m.is_object()) m.erase("managedFields");
}

std::chrono::milliseconds backoffDelay(const BackoffPolicy& policy, int failures, double random) {
  double base = static_cast<double>(policy.initial.count()) *
                std::pow(2.0, static_cast<double>(std::max(failures, 1) - 1));
  base = std::min(base, static_cast<double>(policy.max.count()));
  double jitter = std::clamp(policy.jitter, 0.0, 1.0);
  double r = std::clamp(random, 0.0, 1.0);
  double delay = base * (1.0 - jitter) + base * jitter * r;
  return std::chrono::milliseconds(static_cast<std::int64_t>(delay));
}

Reflector::Reflector(kube::Client& client, StoreBase& store, ReflectorOptions options, base::Clock& clock,
                     base::Random& random)
    : client_(client), store_(store), options_(std::move(options)), clock_(clock), random_(random) {}

void Reflector::report(const core::Error& error) {
  if (options_.onError) options_.onError(error);
}

void Reflector::reportSkipped(std::size_t skipped) {
  if (skipped == 0) return;
  report(core::makeError(
      core::ErrorKind::InvalidInput,
      std::to_string(skipped) + " listed " + options_.resource.plural + " without a name were skipped"));
}

void Reflector::backoff(std::stop_token stop, const core::Error& error) {
  State resume = state_.load();
  state_ = State::Backoff;
  ++failures_;
  auto delay = backoffDelay(options_.backoff, failures_, random_.uniform());
  if (auto asked = kube::retryAfter(error))
    delay = std::max(delay, std::chrono::duration_cast<std::chrono::milliseconds>(*asked));
  clock_.waitFor(delay, stop);
  state_ = resume;
}

bool Reflector::list(std::stop_token stop) {
  kube::ListOptions options;
  options.labelSelector = options_.labelSelector;
  options.fieldSelector = options_.fieldSelector;
  options.metadataOnly = options_.metadataOnly;
  options.limit = options_.pageSize;
  ++lists_;
  std::size_t skipped = 0;
  std::string resourceVersion;
  for (;;) {
    auto page = client_.listPage(options_.resource, options_.namespace_, options);
    if (stop.stop_requested()) {
      store_.discardStaged();
      return false;
    }
    if (!page) {
      // A 410 on a continue token (the snapshot expired) lands here too: list again from the start.
      store_.discardStaged();
      report(page.error());
      backoff(stop, page.error());
      return false;
    }
    if (options_.transform)
      for (auto& item : page->items) options_.transform(item);
    skipped += store_.stage(std::move(page->items));
    resourceVersion = std::move(page->resourceVersion);
    if (page->continueToken.empty()) break;
    options.continueToken = std::move(page->continueToken);
    options.resourceVersion.clear();  // the continue token pins the snapshot
  }
  resourceVersion_ = resourceVersion;
  store_.commitList(std::move(resourceVersion));
  reportSkipped(skipped);
  failures_ = 0;
  return true;
}

kube::WatchOptions Reflector::watchOptions() const {
  kube::WatchOptions options;
  options.resourceVersion = resourceVersion_;
  options.labelSelector = options_.labelSelector;
  options.fieldSelector = options_.fieldSelector;
  options.metadataOnly = options_.metadataOnly;
  options.allowBookmarks = true;
  options.timeout = options_.watchTimeout;
  return options;
}

bool Reflector::applyEvent(kube::WatchEvent&& event) {
  std::string rv = core::metadataString(event.object, "resourceVersion");
  if (options_.transform && event.type != kube::WatchEvent::Type::Bookmark) options_.transform(event.object);
  bool stored = true;
  switch (event.type) {
    case kube::WatchEvent::Type::Added:
    case kube::WatchEvent::Type::Modified: stored = store_.upsert(std::move(event.object)); break;
    case kube::WatchEvent::Type::Deleted: stored = store_.erase(event.object); break;
    case kube::WatchEvent::Type::Bookmark:
      if (!rv.empty()) store_.setResourceVersion(rv);
      break;
    case kube::WatchEvent::Type::Error: break;  // the client turns these into errors
  }
  if (!stored) {
    report(core::makeError(core::ErrorKind::InvalidInput,
                           "a watched " + options_.resource.kind + " without a name was skipped"));
  }
  if (!rv.empty()) resourceVersion_ = rv;
  return true;
}

bool Reflector::afterWatch(const core::Result<kube::WatchEnd>& result, std::stop_token stop,
                           std::size_t delivered) {
  if (delivered > 0) failures_ = 0;
  if (stop.stop_requested()) return true;
  if (result.ok()) return !options_.relistOnStreamEnd;
  if (result.error().kind == core::ErrorKind::Gone) {
    report(result.error());
    return false;  // relist at once: the resourceVersion is too old
  }
  report(result.error());
  backoff(stop, result.error());
  return true;
}

// Returns true to keep watching, false to relist.
bool Reflector::watch(std::stop_token stop) {
  ++watches_;
  std::size_t delivered = 0;
  auto onEvent = [&](kube::WatchEvent&& event) {
    ++delivered;
    return applyEvent(std::move(event));
  };
  auto result = client_.watch(options_.resource, options_.namespace_, watchOptions(), onEvent, stop);
  return afterWatch(result, stop, delivered);
}

// True when the initial events arrived (the store is synced) and the stream should go on as a
// watch; false to list again (streaming again, or by pages once unsupported).
bool Reflector::streamList(std::stop_token stop) {
  kube::WatchOptions options = watchOptions();
  options.resourceVersion.clear();  // a consistent read: everything as of now
  options.sendInitialEvents = true;
  ++lists_;
  ++watches_;
  bool initialEventsEnded = false;
  bool notStreaming = false;  // a change before the end bookmark: the server ignored the request
  std::size_t delivered = 0;
  std::size_t skipped = 0;
  std::vector<nlohmann::json> batch;
  auto stageBatch = [&] {
    if (batch.empty()) return;
    skipped += store_.stage(std::move(batch));
    batch.clear();
  };
  auto onEvent = [&](kube::WatchEvent&& event) {
    ++delivered;
    if (initialEventsEnded) return applyEvent(std::move(event));
    if (event.type == kube::WatchEvent::Type::Added) {
      if (options_.transform) options_.transform(event.object);
      batch.push_back(std::move(event.object));
      if (static_cast<std::int64_t>(batch.size()) >= std::max<std::int64_t>(options_.pageSize, 1)) stageBatch();
      return true;
    }
    if (event.type == kube::WatchEvent::Type::Bookmark) {
      const nlohmann::json* end =
          core::valueAt(event.object, {"metadata", "annotations", kube::kInitialEventsEndAnnotation});
      if (end == nullptr || !end->is_string() || end->get<std::string>() != "true") return true;  // progress
      stageBatch();
      resourceVersion_ = core::metadataString(event.object, "resourceVersion");
      store_.commitList(resourceVersion_);
      initialEventsEnded = true;
      failures_ = 0;
      return true;
    }
    notStreaming = true;
    return false;
  };
  auto result = client_.watch(options_.resource, options_.namespace_, options, onEvent, stop);
  if (initialEventsEnded) {
    reportSkipped(skipped);
    return afterWatch(result, stop, delivered);
  }
  store_.discardStaged();
  if (stop.stop_requested()) return false;
  // Not supported: 422 (or 400) before any event; the stream ended without the end bookmark; or
  // a change came before it. Then list by pages, at once and from now on.
  if (notStreaming || result.ok() || (result.error().kind == core::ErrorKind::InvalidInput && delivered == 0)) {
    streamingUnsupported_ = true;
    std::string why = notStreaming  ? "a change arrived before the initial events ended"
                      : result.ok() ? "the stream ended without the initial-events-end bookmark"
                                    : result.error().describe();
    report(core::makeError(core::ErrorKind::InvalidInput, "the apiserver cannot stream a list of " +
                                                              options_.resource.plural + " (" + why +
                                                              "); listing by pages from now on"));
    return false;
  }
  report(result.error());
  backoff(stop, result.error());
  return false;
}

void Reflector::run(std::stop_token stop) {
  state_ = State::Listing;
  while (!stop.stop_requested()) {
    if (state_ == State::Listing) {
      if (streaming() ? streamList(stop) : list(stop)) state_ = State::Watching;
    } else {
      if (!watch(stop)) state_ = State::Listing;
    }
  }
  state_ = State::Stopped;
}

}  // namespace restarter::cache
