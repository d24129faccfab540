#include "restarter/webhook/fetch.hpp"

#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace restarter::webhook {

namespace {

// Shared by the waiting request and the lookup threads; the last owner frees it, so a thread that
// outlives the deadline writes into memory that is still alive.
struct Pending {
  std::mutex mutex;
  std::condition_variable done;
  std::vector<std::optional<core::ObjectState>> states;
  std::size_t remaining = 0;
};

core::ObjectState safeGet(const ObjectGetter& get, const core::Reference& ref, const std::string& ns) {
  try {
    return get(ref.kind, ns, ref.name);
  } catch (const std::exception& e) {
    return core::ObjectState::unknown(std::string("lookup failed: ") + e.what());
  } catch (...) {
    return core::ObjectState::unknown("lookup failed");
  }
}

}  // namespace

ReferenceStates fetchReferences(const ObjectGetter& get, const std::string& namespace_,
                                const std::vector<core::Reference>& refs,
                                std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pending = std::make_shared<Pending>();
  pending->states.resize(refs.size());
  pending->remaining = refs.size();
  auto finish = [](const std::shared_ptr<Pending>& p, std::size_t index, core::ObjectState state) {
    std::lock_guard<std::mutex> lock(p->mutex);
    p->states[index] = std::move(state);
    if (--p->remaining == 0) p->done.notify_all();
  };
  for (std::size_t i = 1; i < refs.size(); ++i) {
    try {
      std::thread([pending, get, ref = refs[i], namespace_, i, finish] {
        finish(pending, i, safeGet(get, ref, namespace_));
      }).detach();
    } catch (const std::system_error& e) {
      finish(pending, i, core::ObjectState::unknown(std::string("cannot start a lookup: ") + e.what()));
    }
  }
  if (!refs.empty()) finish(pending, 0, safeGet(get, refs[0], namespace_));

  ReferenceStates states;
  std::unique_lock<std::mutex> lock(pending->mutex);
  pending->done.wait_until(lock, deadline, [&] { return pending->remaining == 0; });
  for (std::size_t i = 0; i < refs.size(); ++i) {
    core::ObjectState state = pending->states[i]
                                  ? *pending->states[i]
                                  : core::ObjectState::unknown("no answer within " +
                                                               std::to_string(timeout.count()) + " ms");
    states.emplace(std::pair{refs[i].kind, refs[i].name}, std::move(state));
  }
  return states;
}

ObjectGetter apiGetter(kube::Client& client) {
  return [&client](core::RefKind kind, const std::string& ns, const std::string& name) {
    const kube::ResourceRef ref =
        kind == core::RefKind::ConfigMap ? kube::resources::configMaps() : kube::resources::secrets();
    auto object = client.get(ref, ns, name, kube::GetOptions{/*metadataOnly=*/true});
    if (!object) {
      if (object.error().kind == core::ErrorKind::NotFound) return core::ObjectState::absent();
      return core::ObjectState::unknown(object.error().describe());
    }
    const auto meta = object->find("metadata");
    if (meta == object->end()) return core::ObjectState::unknown("the answer has no metadata");
    auto state = core::objectStateFromMetadata(*meta);
    if (!state) return core::ObjectState::unknown(state.error().describe());
    return std::move(state).value();
  };
}

ReferenceFetcher makeFetcher(ObjectGetter get, std::chrono::milliseconds timeout) {
  return [get = std::move(get), timeout](const std::string& ns, const std::vector<core::Reference>& refs) {
    return fetchReferences(get, ns, refs, timeout);
  };
}

}  // namespace restarter::webhook
