#include "restarter/cache/store.hpp"

namespace restarter::cache {
namespace {

// The member object[key] or nullptr; never inserts, never throws. (Written against a reference,
// not an iterator, as lib/core does: g++ -O2 -Wnull-dereference flags nlohmann's iterator
// internals when find() is called through an iterator.)
const nlohmann::json* member(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end()) return nullptr;
  return &*it;
}

std::string stringField(const nlohmann::json& object, const char* field) {
  const nlohmann::json* metadata = member(object, "metadata");
  if (metadata == nullptr) return {};
  const nlohmann::json* value = member(*metadata, field);
  if (value == nullptr || !value->is_string()) return {};
  return value->get<std::string>();
}

}  // namespace

std::string objectKey(std::string_view namespace_, std::string_view name) {
  if (namespace_.empty()) return std::string(name);
  std::string key(namespace_);
  key += '/';
  key += name;
  return key;
}

std::string objectKey(const nlohmann::json& object) {
  if (!object.is_object()) return {};
  std::string name = stringField(object, "name");
  if (name.empty()) return {};
  return objectKey(stringField(object, "namespace"), name);
}

void Store::addIndex(const std::string& name, IndexFunc function) {
  indexFunctions_[name] = std::move(function);
}

void Store::addHandlers(Handlers handlers) { handlers_.push_back(std::move(handlers)); }

void Store::indexAdd(IndexMap& indexes, const std::string& key, const nlohmann::json& object) const {
  for (const auto& [name, function] : indexFunctions_) {
    for (const auto& value : function(object)) indexes[name][value].insert(key);
  }
}

void Store::indexRemove(IndexMap& indexes, const std::string& key,
                        const nlohmann::json& object) const {
  for (const auto& [name, function] : indexFunctions_) {
    auto& index = indexes[name];
    for (const auto& value : function(object)) {
      auto it = index.find(value);
      if (it == index.end()) continue;
      it->second.erase(key);
      if (it->second.empty()) index.erase(it);
    }
  }
}

std::size_t Store::replace(std::vector<nlohmann::json> objects, std::string resourceVersion) {
  // Build the new content without the lock, swap it in at once.
  std::map<std::string, ObjectPtr> fresh;
  IndexMap indexes;
  std::size_t skipped = 0;
  for (auto& object : objects) {
    std::string key = objectKey(object);
    if (key.empty()) {
      ++skipped;
      continue;
    }
    auto pointer = std::make_shared<const nlohmann::json>(std::move(object));
    indexAdd(indexes, key, *pointer);
    fresh[key] = std::move(pointer);
  }
  std::map<std::string, ObjectPtr> old;
  {
    std::unique_lock lock(mutex_);
    old.swap(objects_);
    objects_ = fresh;  // copies pointers only
    indexes_.swap(indexes);
    resourceVersion_ = std::move(resourceVersion);
    synced_ = true;
  }
  {
    std::lock_guard lock(syncMutex_);
  }
  syncCv_.notify_all();
  if (handlers_.empty()) return skipped;
  for (const auto& [key, now] : fresh) {
    auto before = old.find(key);
    for (const auto& h : handlers_) {
      if (before == old.end()) {
        if (h.onAdd) h.onAdd(now);
      } else if (stringField(*before->second, "resourceVersion") != stringField(*now, "resourceVersion")) {
        if (h.onUpdate) h.onUpdate(before->second, now);
      }
    }
  }
  for (const auto& [key, last] : old) {
    if (fresh.count(key) != 0) continue;
    for (const auto& h : handlers_)
      if (h.onDelete) h.onDelete(last);
  }
  return skipped;
}

bool Store::upsert(nlohmann::json object) {
  std::string key = objectKey(object);
  if (key.empty()) return false;
  auto now = std::make_shared<const nlohmann::json>(std::move(object));
  ObjectPtr before;
  {
    std::unique_lock lock(mutex_);
    auto it = objects_.find(key);
    if (it != objects_.end()) {
      before = it->second;
      indexRemove(indexes_, key, *before);
      it->second = now;
    } else {
      objects_.emplace(key, now);
    }
    indexAdd(indexes_, key, *now);
    std::string rv = stringField(*now, "resourceVersion");
    if (!rv.empty()) resourceVersion_ = rv;
  }
  for (const auto& h : handlers_) {
    if (before) {
      if (h.onUpdate) h.onUpdate(before, now);
    } else if (h.onAdd) {
      h.onAdd(now);
    }
  }
  return true;
}

bool Store::erase(const nlohmann::json& object) {
  std::string key = objectKey(object);
  if (key.empty()) return false;
  ObjectPtr last;
  {
    std::unique_lock lock(mutex_);
    auto it = objects_.find(key);
    if (it != objects_.end()) {
      last = it->second;
      indexRemove(indexes_, key, *last);
      objects_.erase(it);
    }
    std::string rv = stringField(object, "resourceVersion");
    if (!rv.empty()) resourceVersion_ = rv;
  }
  if (last) {
    // The deleted object's final state (as the DELETED event carries it) is what handlers see.
    auto final = std::make_shared<const nlohmann::json>(object);
    for (const auto& h : handlers_)
      if (h.onDelete) h.onDelete(final);
  }
  return true;
}

void Store::setResourceVersion(std::string resourceVersion) {
  std::unique_lock lock(mutex_);
  resourceVersion_ = std::move(resourceVersion);
}

core::Status Store::checkSynced() const {
  if (!synced_) {
    return core::makeError(core::ErrorKind::Unavailable,
                           "cache not synced: the initial list is not complete");
  }
  return core::okStatus();
}

core::Result<ObjectPtr> Store::get(std::string_view key) const {
  std::shared_lock lock(mutex_);
  if (auto s = checkSynced(); !s) return std::move(s).error();
  auto it = objects_.find(std::string(key));
  return it == objects_.end() ? ObjectPtr() : it->second;
}

core::Result<std::vector<ObjectPtr>> Store::list() const {
  std::shared_lock lock(mutex_);
  if (auto s = checkSynced(); !s) return std::move(s).error();
  std::vector<ObjectPtr> out;
  out.reserve(objects_.size());
  for (const auto& [key, object] : objects_) out.push_back(object);
  return out;
}

core::Result<std::vector<ObjectPtr>> Store::byIndex(const std::string& index,
                                                    const std::string& value) const {
  std::shared_lock lock(mutex_);
  if (auto s = checkSynced(); !s) return std::move(s).error();
  if (indexFunctions_.count(index) == 0)
    return core::makeError(core::ErrorKind::Internal, "no index named \"" + index + "\"");
  std::vector<ObjectPtr> out;
  auto byName = indexes_.find(index);
  if (byName == indexes_.end()) return out;
  auto keys = byName->second.find(value);
  if (keys == byName->second.end()) return out;
  for (const auto& key : keys->second) {
    auto it = objects_.find(key);
    if (it != objects_.end()) out.push_back(it->second);
  }
  return out;
}

std::size_t Store::size() const {
  std::shared_lock lock(mutex_);
  return objects_.size();
}

std::string Store::resourceVersion() const {
  std::shared_lock lock(mutex_);
  return resourceVersion_;
}

bool Store::synced() const {
  std::shared_lock lock(mutex_);
  return synced_;
}

bool Store::waitForSync(std::chrono::milliseconds timeout, std::stop_token stop) const {
  std::unique_lock lock(syncMutex_);
  return syncCv_.wait_for(lock, stop, timeout, [this] { return synced(); });
}

}  // namespace restarter::cache
