#include "restarter/cache/reflector.hpp"

#include <algorithm>

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

namespace {

ListWatchOptions listWatchOptions(const ReflectorOptions& options) {
  ListWatchOptions out;
  out.resource = options.resource;
  out.namespace_ = options.namespace_;
  out.labelSelector = options.labelSelector;
  out.fieldSelector = options.fieldSelector;
  out.metadataOnly = options.metadataOnly;
  out.pageSize = options.pageSize;
  out.watchTimeout = options.watchTimeout;
  out.relistOnStreamEnd = options.relistOnStreamEnd;
  out.backoff = options.backoff;
  return out;
}

}  // namespace

Reflector::Reflector(kube::Client& client, StoreBase& store, ReflectorOptions options, base::Clock& clock,
                     base::Random& random)
    : store_(store),
      options_(std::move(options)),
      listWatch_(client, listWatchOptions(options_), *this, clock, random) {}

void Reflector::report(const core::Error& error) {
  if (options_.onError) options_.onError(error);
}

void Reflector::report(const core::Error& error, bool /*listing*/) { report(error); }

void Reflector::backingOff(bool waiting) {
  if (waiting) {
    resumeAfterBackoff_ = state_.load();
    state_ = State::Backoff;
  } else {
    state_ = resumeAfterBackoff_;
  }
}

void Reflector::reportSkipped(std::size_t skipped) {
  if (skipped == 0) return;
  report(core::makeError(
      core::ErrorKind::InvalidInput,
      std::to_string(skipped) + " listed " + options_.resource.plural + " without a name were skipped"));
}

std::size_t Reflector::stage(std::vector<nlohmann::json>&& page) {
  if (options_.transform)
    for (auto& item : page) options_.transform(item);
  return store_.stage(std::move(page));
}

void Reflector::commitList(const std::string& resourceVersion, std::size_t skipped) {
  store_.commitList(resourceVersion);
  reportSkipped(skipped);
}

void Reflector::discardStaged() { store_.discardStaged(); }

void Reflector::apply(kube::WatchEvent&& event) {
  if (options_.transform && event.type != kube::WatchEvent::Type::Bookmark) options_.transform(event.object);
  bool stored = true;
  switch (event.type) {
    case kube::WatchEvent::Type::Added:
    case kube::WatchEvent::Type::Modified: stored = store_.upsert(std::move(event.object)); break;
    case kube::WatchEvent::Type::Deleted: stored = store_.erase(std::move(event.object)); break;
    case kube::WatchEvent::Type::Bookmark:
      if (std::string rv = core::metadataString(event.object, "resourceVersion"); !rv.empty())
        store_.setResourceVersion(rv);
      break;
    case kube::WatchEvent::Type::Error: break;  // the client turns these into errors
  }
  if (!stored) {
    report(core::makeError(core::ErrorKind::InvalidInput,
                           "a watched " + options_.resource.kind + " without a name was skipped"));
  }
}

// True when the initial events arrived (the store is synced) and the stream should go on as a
// watch; false to list again (streaming again, or by pages once unsupported).
bool Reflector::streamList(std::stop_token stop) {
  kube::WatchOptions options = listWatch_.watchOptions();
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
    if (initialEventsEnded) {
      std::string rv = core::metadataString(event.object, "resourceVersion");
      apply(std::move(event));
      if (!rv.empty()) listWatch_.advance(std::move(rv));
      return true;
    }
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
      std::string rv = core::metadataString(event.object, "resourceVersion");
      store_.commitList(rv);
      listWatch_.listed(std::move(rv));
      initialEventsEnded = true;
      return true;
    }
    notStreaming = true;
    return false;
  };
  auto result = listWatch_.watchStream(options, onEvent, stop);
  if (initialEventsEnded) {
    reportSkipped(skipped);
    return listWatch_.afterWatch(result, stop, delivered);
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
  listWatch_.backoff(stop, result.error());
  return false;
}

void Reflector::run(std::stop_token stop) {
  state_ = State::Listing;
  while (!stop.stop_requested()) {
    if (state_ == State::Listing) {
      if (!streaming()) ++lists_;
      if (streaming() ? streamList(stop) : listWatch_.list(stop)) state_ = State::Watching;
    } else {
      ++watches_;
      if (!listWatch_.watch(stop)) state_ = State::Listing;
    }
  }
  state_ = State::Stopped;
}

}  // namespace restarter::cache
