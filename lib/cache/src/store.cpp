#include "restarter/cache/store.hpp"

#include <algorithm>
#include <limits>
#include <string_view>
#include <utility>

#include "restarter/core/constants.hpp"
#include "restarter/core/json_access.hpp"

namespace restarter::cache {
namespace {

// metadata.{namespace, name, resourceVersion}; false when the name is missing or empty.
bool readIdentity(const nlohmann::json& object, ObjectIdentity& identity) {
  identity.name = core::metadataString(object, "name");
  if (identity.name.empty()) return false;
  identity.namespace_ = core::metadataString(object, "namespace");
  identity.resourceVersion = core::metadataString(object, "resourceVersion");
  return true;
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
  std::string name = core::metadataString(object, "name");
  if (name.empty()) return {};
  return objectKey(core::metadataString(object, "namespace"), name);
}

std::string objectKey(const ObjectIdentity& identity) { return objectKey(identity.namespace_, identity.name); }

const std::string* ObjectMeta::label(std::string_view key) const {
  auto it = std::lower_bound(labels.begin(), labels.end(), key,
                             [](const auto& entry, std::string_view k) { return entry.first < k; });
  return it != labels.end() && it->first == key ? &it->second : nullptr;
}

PackedBytes::PackedBytes(std::span<const std::uint8_t> bytes) {
  size_ = static_cast<std::uint32_t>(bytes.size());
  data_ = std::make_unique_for_overwrite<std::uint8_t[]>(size_);
  std::copy(bytes.begin(), bytes.end(), data_.get());
}

nlohmann::json PackedObject::unpack() const {
  // Exceptions stop here (docs/architecture.md, "No exception across modules"); none expected.
  const std::span<const std::uint8_t> packed = bytes.view();
  try {
    return nlohmann::json::from_msgpack(packed.begin(), packed.end());
  } catch (const nlohmann::json::exception&) {
    return nullptr;
  }
}

std::optional<PackedObject> packObject(const nlohmann::json& object) {
  PackedObject packed;
  if (!readIdentity(object, packed)) return std::nullopt;
  std::vector<std::uint8_t> bytes;
  try {
    bytes = nlohmann::json::to_msgpack(object);
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;  // not representable (not expected for parsed JSON): skipped and reported
  }
  // Over 4 GiB: never from the apiserver, whose objects are ~1.5 MiB at most.
  if (bytes.size() > std::numeric_limits<std::uint32_t>::max()) return std::nullopt;
  packed.bytes = PackedBytes(bytes);
  return packed;
}

std::optional<ObjectMeta> objectMetaOf(const nlohmann::json& object) {
  ObjectMeta meta;
  if (!readIdentity(object, meta)) return std::nullopt;
  meta.uid = core::metadataString(object, "uid");
  if (const nlohmann::json* labels = core::valueAt(object, {"metadata", "labels"});
      labels != nullptr && labels->is_object()) {
    // nlohmann::json objects iterate in key order, so `labels` ends up sorted (label() relies on
    // it).
    for (const auto& [key, value] : labels->items()) {
      if (value.is_string()) meta.labels.emplace_back(key, value.get<std::string>());
    }
  }
  meta.labels.shrink_to_fit();
  meta.reloaderMatch =
      core::stringAt(object, {"metadata", "annotations", core::kReloaderMatchAnnotation}) == "true";
  meta.reloaderIgnore =
      core::stringAt(object, {"metadata", "annotations", core::kReloaderIgnoreAnnotation}) == "true";
  return meta;
}

std::optional<nlohmann::json> EntryTraits<nlohmann::json>::fromObject(nlohmann::json&& object) {
  if (objectKey(object).empty()) return std::nullopt;
  return std::move(object);
}

std::string EntryTraits<nlohmann::json>::resourceVersion(const nlohmann::json& object) {
  return core::metadataString(object, "resourceVersion");
}

template <typename T>
void BasicStore<T>::addIndex(const std::string& name, IndexFunc function) {
  indexFunctions_[name] = std::move(function);
}

template <typename T>
void BasicStore<T>::addHandlers(Handlers handlers) {
  handlers_.push_back(std::move(handlers));
}

template <typename T>
std::vector<std::uint64_t> BasicStore<T>::distinctDigests(const IndexFunc& function, const T& object) {
  std::vector<std::uint64_t> digests;
  for (const std::string& value : function(object)) digests.push_back(NameSet::digestOf(value));
  std::sort(digests.begin(), digests.end());
  digests.erase(std::unique(digests.begin(), digests.end()), digests.end());
  return digests;
}

template <typename T>
void BasicStore<T>::put(EntrySet& entries, Ptr entry) {
  auto [it, inserted] = entries.insert(entry);
  if (inserted) return;
  // A set's elements are constant: the entry of the key is replaced by erasing and inserting at
  // the same place.
  auto next = entries.erase(it);
  entries.insert(next, std::move(entry));
}

template <typename T>
void BasicStore<T>::indexAdd(IndexMap& indexes, const Ptr& object) const {
  for (const auto& [name, function] : indexFunctions_) {
    auto& index = indexes[name];
    for (std::uint64_t digest : distinctDigests(function, *object)) index.emplace(digest, object);
  }
}

template <typename T>
void BasicStore<T>::indexRemove(IndexMap& indexes, const Ptr& object) const {
  for (const auto& [name, function] : indexFunctions_) {
    auto found = indexes.find(name);
    if (found == indexes.end()) continue;
    auto& index = found->second;
    for (std::uint64_t digest : distinctDigests(function, *object)) {
      auto [first, last] = index.equal_range(digest);
      for (auto it = first; it != last; ++it) {
        if (it->second == object) {
          index.erase(it);
          break;
        }
      }
    }
  }
}

template <typename T>
void BasicStore<T>::setRetention(RetainFunc retain) {
  retain_ = std::move(retain);
}

template <typename T>
void BasicStore<T>::setEntryMaker(EntryMaker make) {
  make_ = std::move(make);
}

template <typename T>
std::size_t BasicStore<T>::stage(std::vector<nlohmann::json> objects) {
  // Each object is converted (and its JSON freed) before the next page is parsed, so a list of
  // many pages never holds more than one page as JSON.
  std::size_t skipped = 0;
  for (auto& object : objects) {
    std::string key = objectKey(object);
    if (!key.empty() && !retained(key)) {
      object = nullptr;
      // A later page may repeat a key (never expected): the last one counts.
      if (auto repeated = staged_.find(splitKey(key)); repeated != staged_.end()) staged_.erase(repeated);
      stagedUnloaded_.insert(key);
      continue;
    }
    std::optional<T> entry = makeEntry(std::move(object));
    object = nullptr;
    if (!entry) {
      ++skipped;
      continue;
    }
    Ptr staged = std::make_shared<const T>(std::move(*entry));
    stagedUnloaded_.erase(EntryTraits<T>::key(*staged));
    put(staged_, std::move(staged));
  }
  return skipped;
}

template <typename T>
void BasicStore<T>::discardStaged() {
  staged_.clear();
  stagedUnloaded_.clear();
}

template <typename T>
void BasicStore<T>::commitList(std::string resourceVersion) {
  // Build the new content without the lock, swap it in at once.
  EntrySet staged;
  staged.swap(staged_);
  NameSet unloaded = std::move(stagedUnloaded_);
  IndexMap indexes;
  for (const Ptr& pointer : staged) indexAdd(indexes, pointer);
  // The new entries, for the handlers below: promote() may add to objects_ once the lock is
  // released, so they compare against this list, not objects_.
  std::vector<Ptr> fresh;
  if (!handlers_.empty()) {
    fresh.reserve(staged.size());
    fresh.assign(staged.begin(), staged.end());
  }
  EntrySet old;
  {
    std::unique_lock lock(mutex_);
    old.swap(objects_);
    // Moved, not copied: a copy would double the entries' map nodes and keys for a moment and
    // leave the freed originals as holes between the live entries (at 200,000 objects about
    // 40 MB of heap that stays resident).
    objects_ = std::move(staged);
    unloaded_ = std::move(unloaded);
    indexes_.swap(indexes);
    resourceVersion_ = std::move(resourceVersion);
    synced_ = true;
  }
  { std::lock_guard lock(syncMutex_); }
  syncCv_.notify_all();
  if (handlers_.empty()) return;
  for (const Ptr& now : fresh) {
    auto before = old.find(EntryTraits<T>::keyView(*now));
    for (const auto& h : handlers_) {
      if (before == old.end()) {
        if (h.onAdd) h.onAdd(now);
      } else if (EntryTraits<T>::resourceVersion(**before) != EntryTraits<T>::resourceVersion(*now)) {
        if (h.onUpdate) h.onUpdate(*before, now);
      }
    }
    if (before != old.end()) old.erase(before);
  }
  // What is left of the old entries was not listed as an entry: deleted, or no longer retained.
  for (const Ptr& last : old) {
    for (const auto& h : handlers_)
      if (h.onDelete) h.onDelete(last);
  }
}

template <typename T>
bool BasicStore<T>::upsert(nlohmann::json object) {
  const std::string key = objectKey(object);
  if (key.empty()) return false;
  if (!retained(key)) {
    // Kept as "exists" only; an entry it had (referenced until now) goes without handlers.
    std::string rv = core::metadataString(object, "resourceVersion");
    std::unique_lock lock(mutex_);
    if (auto it = objects_.find(splitKey(key)); it != objects_.end()) {
      indexRemove(indexes_, *it);
      objects_.erase(it);
    }
    unloaded_.insert(key);
    if (!rv.empty()) resourceVersion_ = std::move(rv);
    return true;
  }
  std::optional<T> entry = makeEntry(std::move(object));
  if (!entry) return false;
  auto now = std::make_shared<const T>(std::move(*entry));
  Ptr before;
  {
    std::unique_lock lock(mutex_);
    if (auto it = objects_.find(splitKey(key)); it != objects_.end()) {
      before = *it;
      indexRemove(indexes_, before);
    }
    put(objects_, now);
    unloaded_.erase(key);
    indexAdd(indexes_, now);
    std::string rv = EntryTraits<T>::resourceVersion(*now);
    if (!rv.empty()) resourceVersion_ = std::move(rv);
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

template <typename T>
bool BasicStore<T>::erase(nlohmann::json object) {
  const std::string key = objectKey(object);
  if (key.empty()) return false;
  bool existed = false;
  {
    std::unique_lock lock(mutex_);
    auto it = objects_.find(splitKey(key));
    if (it != objects_.end()) {
      existed = true;
      indexRemove(indexes_, *it);
      objects_.erase(it);
    }
    unloaded_.erase(key);
    if (std::string rv = core::metadataString(object, "resourceVersion"); !rv.empty())
      resourceVersion_ = std::move(rv);
  }
  if (!existed || handlers_.empty()) return true;
  // The deleted object's final state (as the DELETED event carries it) is what handlers see.
  std::optional<T> entry = makeEntry(std::move(object));
  if (!entry) return true;
  auto final = std::make_shared<const T>(std::move(*entry));
  for (const auto& h : handlers_)
    if (h.onDelete) h.onDelete(final);
  return true;
}

template <typename T>
core::Result<typename BasicStore<T>::Ptr> BasicStore<T>::promote(nlohmann::json object) {
  const std::string key = objectKey(object);
  if (key.empty())
    return core::makeError(core::ErrorKind::InvalidInput, "an object to keep has no metadata.name");
  // Converted before the lock: an object whose entry turns out to be there already costs a
  // conversion for nothing, a rare race, rather than every reader waiting on it.
  std::optional<T> entry = makeEntry(std::move(object));
  if (!entry) return core::makeError(core::ErrorKind::InvalidInput, "an object to keep has no metadata.name");
  std::unique_lock lock(mutex_);
  if (auto s = checkSynced(); !s) return std::move(s).error();
  if (auto it = objects_.find(splitKey(key)); it != objects_.end()) return *it;
  if (!unloaded_.erase(key)) return Ptr();
  auto now = std::make_shared<const T>(std::move(*entry));
  objects_.insert(now);
  indexAdd(indexes_, now);
  return Ptr(now);
}

template <typename T>
void BasicStore<T>::setResourceVersion(std::string resourceVersion) {
  std::unique_lock lock(mutex_);
  resourceVersion_ = std::move(resourceVersion);
}

template <typename T>
core::Status BasicStore<T>::checkSynced() const {
  if (!synced_) {
    return core::makeError(core::ErrorKind::Unavailable, "cache not synced: the initial list is not complete");
  }
  return core::okStatus();
}

template <typename T>
core::Result<typename BasicStore<T>::Ptr> BasicStore<T>::get(std::string_view key) const {
  std::shared_lock lock(mutex_);
  if (auto s = checkSynced(); !s) return std::move(s).error();
  auto it = objects_.find(splitKey(key));
  return it == objects_.end() ? Ptr() : *it;
}

template <typename T>
core::Result<typename BasicStore<T>::Found> BasicStore<T>::find(std::string_view key) const {
  std::shared_lock lock(mutex_);
  if (auto s = checkSynced(); !s) return std::move(s).error();
  if (auto it = objects_.find(splitKey(key)); it != objects_.end()) return Found{*it, false};
  return Found{Ptr(), unloaded_.contains(key)};
}

template <typename T>
bool BasicStore<T>::hasIndexed(const std::string& index, const std::string& value) const {
  std::shared_lock lock(mutex_);
  if (!synced_) return false;
  auto byName = indexes_.find(index);
  return byName != indexes_.end() && byName->second.contains(NameSet::digestOf(value));
}

template <typename T>
core::Result<std::vector<typename BasicStore<T>::Ptr>> BasicStore<T>::list() const {
  std::shared_lock lock(mutex_);
  if (auto s = checkSynced(); !s) return std::move(s).error();
  return std::vector<Ptr>(objects_.begin(), objects_.end());
}

template <typename T>
core::Result<std::vector<typename BasicStore<T>::Ptr>> BasicStore<T>::byIndex(const std::string& index,
                                                                              const std::string& value) const {
  std::shared_lock lock(mutex_);
  if (auto s = checkSynced(); !s) return std::move(s).error();
  if (indexFunctions_.count(index) == 0)
    return core::makeError(core::ErrorKind::Internal, "no index named \"" + index + "\"");
  std::vector<Ptr> out;
  auto byName = indexes_.find(index);
  if (byName == indexes_.end()) return out;
  for (auto [it, last] = byName->second.equal_range(NameSet::digestOf(value)); it != last; ++it)
    out.push_back(it->second);
  // In key order, as the objects are listed.
  std::sort(out.begin(), out.end(), ByKey());
  return out;
}

template <typename T>
std::size_t BasicStore<T>::size() const {
  std::shared_lock lock(mutex_);
  return objects_.size() + unloaded_.size();
}

template <typename T>
std::size_t BasicStore<T>::unloadedSize() const {
  std::shared_lock lock(mutex_);
  return unloaded_.size();
}

template <typename T>
std::size_t BasicStore<T>::unloadedBytes() const {
  std::shared_lock lock(mutex_);
  return unloaded_.tableBytes();
}

template <typename T>
std::string BasicStore<T>::resourceVersion() const {
  std::shared_lock lock(mutex_);
  return resourceVersion_;
}

template <typename T>
bool BasicStore<T>::synced() const {
  std::shared_lock lock(mutex_);
  return synced_;
}

template <typename T>
bool BasicStore<T>::waitForSync(std::chrono::milliseconds timeout, std::stop_token stop) const {
  std::unique_lock lock(syncMutex_);
  return syncCv_.wait_for(lock, stop, timeout, [this] { return synced(); });
}

template class BasicStore<nlohmann::json>;
template class BasicStore<ObjectMeta>;
template class BasicStore<PackedObject>;

}  // namespace restarter::cache
