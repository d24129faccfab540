#pragma once
// The watch table (docs/architecture.md, "Watches and dispatch"): which cache events queue which
// reconciler's keys, and after how long. In the manner of controller-runtime's builder
// (For/Owns/Watches with predicates) and kube-rs's Controller::watches (with a mapper), written as
// rows: one row is one store's events queuing the keys of one reconciler (reconcile.hpp), or with
// a mapper the keys it names. Each reconciler's row of the reconciler table (reconciler_table.hpp)
// declares its watches, and the controller installs each as one set of store handlers; adding a
// reconciler is adding its row, dispatch does not change (the key names the reconciler,
// queue_key.hpp).
//
// Threads: a row's handlers run on the thread of the reflector that writes the store
// (cache/store.hpp), with no lock held; predicates and mappers must not block. The reconcilers a
// row names are owned by the controller and outlive its stores' handlers.

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/cache/store.hpp"
#include "restarter/controller/queue_key.hpp"
#include "restarter/controller/work_queue.hpp"
#include "restarter/core/json_access.hpp"

namespace restarter::controller {

// Queues `key` after `delay` for `reason` (the work queue's add: a key queued again within its delay
// is queued once, with both reasons).
using Enqueue = std::function<void(QueueKey key, milliseconds delay, QueueReason reason)>;

// One row of the watch table over a store of T (cache::BasicStore<T>).
template <typename T>
struct Watch {
  using Ptr = typename cache::BasicStore<T>::Ptr;

  // Whose key an event of the object makes (the object's own namespace and name); nullptr: `map`
  // names the keys.
  Reconciler* reconciler = nullptr;
  // How long a key waits after an add or an update (the debounce, work_queue.hpp).
  milliseconds delay{0};
  // After a delete; nullopt: a delete queues nothing.
  std::optional<milliseconds> deleteDelay = milliseconds(0);
  // An update queues only when this holds (predicates.hpp); empty: every update.
  std::function<bool(const Ptr& before, const Ptr& after)> updated{};
  // The keys an event queues instead of the object's own (the workloads that reference a
  // ConfigMap); empty: the object's own key for `reconciler`.
  std::function<std::vector<QueueKey>(const Ptr& object)> map{};
};

// The name of a cached object, as a queue key holds it.
inline ObjectName objectNameOf(const cache::ObjectIdentity& object) {
  return {object.namespace_.str(), object.name};
}
inline ObjectName objectNameOf(const nlohmann::json& object) {
  return {core::metadataString(object, "namespace"), core::metadataString(object, "name")};
}

// Adds `row` to `store` as one set of handlers that queue through `enqueue`: the object's own key
// for QueueReason::ObjectChanged, or the keys `row.map` names for QueueReason::RelatedChanged. An
// object without a name queues nothing.
template <typename T>
void installWatch(cache::BasicStore<T>& store, Watch<T> row, Enqueue enqueue) {
  using Ptr = typename Watch<T>::Ptr;
  auto queueFor = [row, enqueue](const Ptr& object, milliseconds delay) {
    if (row.map) {
      for (QueueKey& key : row.map(object)) {
        if (!key.object.name.empty()) enqueue(std::move(key), delay, QueueReason::RelatedChanged);
      }
      return;
    }
    ObjectName name = objectNameOf(*object);
    if (!name.name.empty())
      enqueue(QueueKey{row.reconciler, std::move(name)}, delay, QueueReason::ObjectChanged);
  };
  typename cache::BasicStore<T>::Handlers handlers;
  handlers.onAdd = [queueFor, delay = row.delay](const Ptr& object) { queueFor(object, delay); };
  handlers.onUpdate = [queueFor, delay = row.delay, updated = row.updated](const Ptr& before,
                                                                           const Ptr& after) {
    if (!updated || updated(before, after)) queueFor(after, delay);
  };
  if (row.deleteDelay) {
    handlers.onDelete = [queueFor, delay = *row.deleteDelay](const Ptr& last) { queueFor(last, delay); };
  }
  store.addHandlers(std::move(handlers));
}

}  // namespace restarter::controller
