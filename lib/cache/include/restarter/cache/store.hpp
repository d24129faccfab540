#pragma once
// restarter::cache — what the controller reads instead of asking the apiserver each time.
//
//   store.hpp      this file: objects of one resource by key, secondary indexes, change handlers
//   reflector.hpp  keeps a Store in step with the API (list, then watch; relist on 410)
//
// Store contract:
//   - One writer (a Reflector), many readers. Readers never see a half-applied write: the initial
//     list (and every relist) is swapped in at once.
//   - Nothing is served before the first replace() (design.md invariant 3): get/list/byIndex
//     answer Unavailable until then, so "absent" is never confused with "not loaded yet".
//   - Objects are immutable snapshots (shared_ptr<const json>): a reader may keep one as long as it
//     likes; the store replaces, never mutates.
//   - Indexes and handlers are registered before the writer starts (not synchronized with writes).
//   - Handlers run on the writer's thread, after the store is updated and with no lock held, in
//     the order of the changes. They must not throw; they may read the store.
//   - Keys are "<namespace>/<name>", or "<name>" for cluster-scoped objects.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/core/result.hpp"

namespace restarter::cache {

using ObjectPtr = std::shared_ptr<const nlohmann::json>;

// The values an object is indexed under (e.g. the names of the ConfigMaps a workload references).
// Must not throw; gets a well-formed object (metadata.name is a string).
using IndexFunc = std::function<std::vector<std::string>(const nlohmann::json& object)>;

struct Handlers {
  std::function<void(const ObjectPtr& object)> onAdd;
  std::function<void(const ObjectPtr& before, const ObjectPtr& after)> onUpdate;
  std::function<void(const ObjectPtr& last)> onDelete;
};

// "<namespace>/<name>" or "<name>"; empty when metadata.name is missing or not a string.
std::string objectKey(const nlohmann::json& object);
std::string objectKey(std::string_view namespace_, std::string_view name);

class Store {
 public:
  Store() = default;
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Setup, before the writer starts.
  void addIndex(const std::string& name, IndexFunc function);
  void addHandlers(Handlers handlers);

  // Writer. Objects without a name are skipped (the count is returned for reporting).
  // replace: the whole content at `resourceVersion`; handlers see adds, updates (resourceVersion
  // changed) and deletes relative to the previous content; marks the store synced.
  std::size_t replace(std::vector<nlohmann::json> objects, std::string resourceVersion);
  bool upsert(nlohmann::json object);  // false: no name, skipped
  bool erase(const nlohmann::json& object);
  void setResourceVersion(std::string resourceVersion);

  // Readers (thread-safe). Unavailable until synced.
  core::Result<ObjectPtr> get(std::string_view key) const;  // nullptr when absent
  core::Result<std::vector<ObjectPtr>> list() const;
  core::Result<std::vector<ObjectPtr>> byIndex(const std::string& index, const std::string& value) const;
  std::size_t size() const;
  std::string resourceVersion() const;
  bool synced() const;
  // Blocks until synced, `timeout` passes or `stop` is requested. True when synced.
  bool waitForSync(std::chrono::milliseconds timeout, std::stop_token stop = {}) const;

 private:
  using IndexMap = std::map<std::string, std::map<std::string, std::set<std::string>>>;
  void indexAdd(IndexMap& indexes, const std::string& key, const nlohmann::json& object) const;
  void indexRemove(IndexMap& indexes, const std::string& key, const nlohmann::json& object) const;
  core::Status checkSynced() const;

  std::map<std::string, IndexFunc> indexFunctions_;
  std::vector<Handlers> handlers_;

  mutable std::shared_mutex mutex_;
  std::map<std::string, ObjectPtr> objects_;
  IndexMap indexes_;
  std::string resourceVersion_;
  bool synced_ = false;

  mutable std::mutex syncMutex_;
  mutable std::condition_variable_any syncCv_;
};

}  // namespace restarter::cache
