#pragma once
// restarter::cache — what the controller reads instead of asking the apiserver each time.
//
//   store.hpp      this file: objects of one resource by key, secondary indexes, change handlers
//   reflector.hpp  keeps a Store in step with the API (list, then watch; relist on 410)
//
// Store contract:
//   - One writer (a Reflector), many readers. Readers never see a half-applied write: the initial
//     list (and every relist) is swapped in at once, however many pages it arrived in. The one
//     other write, promote(), may come from any thread: it only turns an unloaded object into an
//     entry (below), under the store's lock.
//   - Retention (setRetention, optional): an object whose key the retention function rejects is
//     not kept as an entry but only as "exists" in a NameSet (name_set.hpp, 8 bytes): find() says
//     it is unloaded, and whoever needs it reads it from the API and hands it to promote(). Such
//     objects fire no handlers (they were judged of no interest); one that becomes interesting
//     is kept as an entry at its next change (an add for the handlers) or when promoted (none).
//     docs/architecture.md, "Memory that follows references".
//   - Nothing is served before the first list is committed (docs/architecture.md, "No serving before sync"): get/list/
//     byIndex answer Unavailable until then, so "absent" is never confused with "not loaded yet".
//   - Objects are immutable snapshots (shared_ptr<const T>): a reader may keep one as long as it
//     likes; the store replaces, never mutates.
//   - Indexes and handlers are registered before the writer starts (not synchronized with writes).
//   - Handlers run on the writer's thread, after the store is updated and with no lock held, in
//     the order of the changes. They must not throw; they may read the store.
//   - Keys are "<namespace>/<name>", or "<name>" for cluster-scoped objects.
//
// Three entry types (BasicStore<T>; the writer side, StoreBase, always takes JSON as the API
// sends it, and an entry maker turns it into an entry: EntryTraits<T>::fromObject, or one a caller
// sets with setEntryMaker to fill the entry's typed fields from the whole object):
//   - Store = BasicStore<nlohmann::json>: the object as received (after the reflector's
//     transform), ready to read (pods: few, small).
//   - PackedStore = BasicStore<PackedObject>: the object as MessagePack bytes, parsed when read;
//     for objects read once per reconcile but large as nlohmann::json, whose every key and value
//     is a separate allocation (a workload's pod template with 20 references and their 20
//     annotations is several times smaller packed; docs/benchmarks.md, "Memory: allocator
//     and cache entries").
//   - MetaStore = BasicStore<ObjectMeta>: name, namespace, uid, resourceVersion and labels only,
//     as plain strings, for caches of many objects of which only identity and version matter
//     (ConfigMaps and Secrets: tens of thousands), a fraction of the same fields as nlohmann::json
//     (measured with tests/bench/controller: docs/benchmarks.md); the namespace is shared and the
//     uid kept as 16 bytes (compact_text.hpp; docs/architecture.md, "Compact cache entries").

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/cache/compact_text.hpp"
#include "restarter/cache/key_view.hpp"
#include "restarter/cache/name_set.hpp"
#include "restarter/core/content.hpp"
#include "restarter/core/result.hpp"

namespace restarter::cache {

// The metadata of one object, as a MetaStore keeps it.
// Where an entry lives and which version it is: what every compact entry keeps at hand.
struct ObjectIdentity {
  SharedText namespace_;  // one copy per namespace, shared by its entries (compact_text.hpp)
  std::string name;
  std::string resourceVersion;
};

struct ObjectMeta : ObjectIdentity {
  CompactUid uid;                                           // 16 bytes for an apiserver uid (compact_text.hpp)
  std::vector<std::pair<std::string, std::string>> labels;  // string-valued labels, by key
  // What the store's entry maker derived from the object's content before dropping it
  // (setEntryMaker; the controller's: controller/slim.hpp), typed beside the metadata, never read
  // from the object's JSON:
  // The content digest (16 bytes, inline); nullopt when the content was not read
  // (docs/architecture.md, "Content-aware restarts").
  std::optional<core::ContentDigest> contentDigest;
  // The content's digest of the one other scheme or key whose record entries the controller still
  // compares (the h1 digest, or h2 under the previous key during a rotation; which one is the
  // controller's to know: docs/architecture.md, "Keyed digests").
  std::optional<core::ContentDigest> otherDigest;
  // The key digests (core::KeyDigests, 16 bytes a key), when keyDigestsKnown (not for a kind whose
  // content is not read, or more than core::kMaxKeyDigests keys): what a reference reading some
  // keys compares (docs/architecture.md, "Key-level tracking"). Inline (an empty vector costs no
  // allocation); lookups share it through the entry's own shared_ptr.
  core::KeyDigests keyDigests;
  // Reloader's annotations reloader.stakater.com/match and .../ignore with the value "true"
  // (core/reloader.hpp): booleans, which fit in the padding after contentDigest, not strings
  // (docs/architecture.md, "Compact cache entries").
  bool reloaderMatch = false;
  bool reloaderIgnore = false;
  bool keyDigestsKnown = false;

  // The value of label `key`, or nullptr.
  const std::string* label(std::string_view key) const;
};

// MessagePack bytes held at exactly their size (at most 4 GiB): a pointer and a 4-byte size, 16
// bytes with alignment where a std::vector takes 24, which leaves PackedObject room for its
// PackedTrim within the size it had without it.
class PackedBytes {
 public:
  PackedBytes() = default;
  explicit PackedBytes(std::span<const std::uint8_t> bytes);  // a copy; `bytes` at most 4 GiB
  std::span<const std::uint8_t> view() const noexcept { return {data_.get(), size_}; }

 private:
  std::unique_ptr<std::uint8_t[]> data_;
  std::uint32_t size_ = 0;
};

// What an entry maker (BasicStore::setEntryMaker) learnt of an object while trimming it before
// packing, kept typed beside the packed bytes (never as fields of the packed JSON).
struct PackedTrim {
  // The bytes (keys plus values) of the metadata annotations trimmed away, which a size check of
  // the whole object still counts (the controller: core::WriteOptions::omittedAnnotationsBytes).
  // The apiserver limits them to 256 KiB, far below this type's range.
  std::uint32_t omittedAnnotationsBytes = 0;
  // Kept as a stub, its identity only: the maker judged the object of no interest (the
  // controller: a workload its selection does not opt in); readers leave it alone.
  bool stub = false;
};

// A whole object as MessagePack (nlohmann::json::to_msgpack), with its identity at hand.
struct PackedObject : ObjectIdentity {
  PackedBytes bytes;
  PackedTrim trim;  // nothing trimmed unless an entry maker says so

  // The object again; null if the bytes cannot be decoded (never for bytes packObject made).
  nlohmann::json unpack() const;
};

// `object` packed; nullopt when metadata.name is missing or not a non-empty string.
std::optional<PackedObject> packObject(const nlohmann::json& object);

// metadata.{namespace, name, uid, resourceVersion, labels} and whether Reloader's match and ignore
// annotations are "true" of `object` (no content digests: an entry maker adds them); nullopt when
// metadata.name is missing or not a non-empty string. Fields of another type read as empty (and
// non-string labels are left out): the reader decides whether an empty uid is a problem.
std::optional<ObjectMeta> objectMetaOf(const nlohmann::json& object);

// "<namespace>/<name>" or "<name>"; empty when metadata.name is missing or not a string.
std::string objectKey(const nlohmann::json& object);
std::string objectKey(std::string_view namespace_, std::string_view name);
std::string objectKey(const ObjectIdentity& identity);

// How a BasicStore<T> makes and reads its entries (specialized for the two entry types).
template <typename T>
struct EntryTraits;

template <>
struct EntryTraits<nlohmann::json> {
  static std::optional<nlohmann::json> fromObject(nlohmann::json&& object);  // nullopt: no name
  static std::string key(const nlohmann::json& object) { return objectKey(object); }
  static KeyView keyView(const nlohmann::json& object) noexcept { return keyViewOf(object); }
  static std::string resourceVersion(const nlohmann::json& object);
};

template <>
struct EntryTraits<ObjectMeta> {
  static std::optional<ObjectMeta> fromObject(nlohmann::json&& object) { return objectMetaOf(object); }
  static std::string key(const ObjectMeta& meta) { return objectKey(meta); }
  static KeyView keyView(const ObjectMeta& meta) noexcept { return {meta.namespace_, meta.name}; }
  static std::string resourceVersion(const ObjectMeta& meta) { return meta.resourceVersion; }
};

template <>
struct EntryTraits<PackedObject> {
  static std::optional<PackedObject> fromObject(nlohmann::json&& object) { return packObject(object); }
  static std::string key(const PackedObject& object) { return objectKey(object); }
  static KeyView keyView(const PackedObject& object) noexcept { return {object.namespace_, object.name}; }
  static std::string resourceVersion(const PackedObject& object) { return object.resourceVersion; }
};

// The side of a store that does not depend on its entry type: what a Reflector writes (objects
// as the API sends them) and whether the store has synced.
class StoreBase {
 public:
  virtual ~StoreBase() = default;

  // Writer. A list arrives in pages: stage() each page (returns how many objects had no name and
  // were skipped), then commitList() swaps the staged content in at once at `resourceVersion`:
  // handlers see adds, updates (resourceVersion changed) and deletes relative to the previous
  // content, and the store is synced. discardStaged() drops a list that failed half-way.
  virtual std::size_t stage(std::vector<nlohmann::json> objects) = 0;
  virtual void commitList(std::string resourceVersion) = 0;
  virtual void discardStaged() = 0;
  // stage(objects) then commitList(resourceVersion): a list in one page.
  std::size_t replace(std::vector<nlohmann::json> objects, std::string resourceVersion) {
    std::size_t skipped = stage(std::move(objects));
    commitList(std::move(resourceVersion));
    return skipped;
  }
  virtual bool upsert(nlohmann::json object) = 0;  // false: no name, skipped
  // The object of a DELETED event gone (false: no name, skipped). Its key and resourceVersion are
  // read from the JSON; an entry is made of it (the entry maker's work) only when it was an entry
  // and handlers are to see its final state, never for an unloaded or unknown object.
  virtual bool erase(nlohmann::json object) = 0;
  virtual void setResourceVersion(std::string resourceVersion) = 0;

  // Readers (thread-safe).
  virtual std::size_t size() const = 0;
  virtual std::size_t unloadedSize() const = 0;
  virtual std::string resourceVersion() const = 0;
  virtual bool synced() const = 0;
  // Blocks until synced, `timeout` passes or `stop` is requested. True when synced.
  virtual bool waitForSync(std::chrono::milliseconds timeout, std::stop_token stop = {}) const = 0;
};

template <typename T>
class BasicStore final : public StoreBase {
 public:
  using Ptr = std::shared_ptr<const T>;
  // The values an object is indexed under (e.g. the names of the ConfigMaps a workload
  // references). Must not throw; gets an entry with a name.
  using IndexFunc = std::function<std::vector<std::string>(const T& object)>;
  // How an object (as the API sent it, after the reflector's transform) becomes an entry
  // (setEntryMaker): what a caller derives from the whole object before trimming it (a digest of
  // content it then drops, the size of what it cut) goes into the entry's typed fields here, never
  // into the object's JSON. nullopt: the object has no name (skipped). Must keep metadata.namespace
  // and metadata.name as they are and must not throw; runs on the writer's thread and on
  // promote()'s callers', so possibly on several threads at once.
  using EntryMaker = std::function<std::optional<T>(nlohmann::json&& object)>;
  // Whether the object of `key` is kept as an entry (setRetention). Runs on the writer's thread
  // with no lock of this store held; must not throw.
  using RetainFunc = std::function<bool(std::string_view key)>;
  // What find() knows of a key: its entry, or that it exists unloaded, or (neither) that it is absent.
  struct Found {
    Ptr entry;
    bool unloaded = false;
  };
  struct Handlers {
    std::function<void(const Ptr& object)> onAdd;
    std::function<void(const Ptr& before, const Ptr& after)> onUpdate;
    std::function<void(const Ptr& last)> onDelete;
  };

  BasicStore() = default;
  BasicStore(const BasicStore&) = delete;
  BasicStore& operator=(const BasicStore&) = delete;

  // Setup, before the writer starts.
  void addIndex(const std::string& name, IndexFunc function);
  void addHandlers(Handlers handlers);
  // Keeps only the objects `retain` accepts as entries, the others as unloaded (see the contract).
  void setRetention(RetainFunc retain);
  // Makes entries with `make` instead of EntryTraits<T>::fromObject (the default).
  void setEntryMaker(EntryMaker make);

  std::size_t stage(std::vector<nlohmann::json> objects) override;
  void commitList(std::string resourceVersion) override;
  void discardStaged() override;
  bool upsert(nlohmann::json object) override;
  bool erase(nlohmann::json object) override;
  void setResourceVersion(std::string resourceVersion) override;

  // Readers (thread-safe). Unavailable until synced.
  core::Result<Ptr> get(std::string_view key) const;  // nullptr when absent or unloaded
  core::Result<Found> find(std::string_view key) const;
  // Whether any entry is indexed under `value` in `index` (false until synced): what byIndex would
  // find, without copying it.
  bool hasIndexed(const std::string& index, const std::string& value) const;
  // Any thread: `object` (as the API returned it, after the reflector's transform) as the entry
  // of an unloaded object. Returns the entry that is there if the writer already made one, nullptr
  // if the object is no longer known (deleted meanwhile: the caller treats it as absent) and
  // InvalidInput if `object` has no name. Fires no handlers.
  core::Result<Ptr> promote(nlohmann::json object);
  core::Result<std::vector<Ptr>> list() const;
  core::Result<std::vector<Ptr>> byIndex(const std::string& index, const std::string& value) const;
  std::size_t size() const override;  // entries and unloaded objects
  std::size_t unloadedSize() const override;
  std::size_t unloadedBytes() const;  // the NameSet's table (NameSet::tableBytes)
  std::string resourceVersion() const override;
  bool synced() const override;
  bool waitForSync(std::chrono::milliseconds timeout, std::stop_token stop = {}) const override;

 private:
  // The entries by key, found through the names each entry holds (KeyView): a key is stored once,
  // in its entry, not again as the set's key (docs/architecture.md, "Memory that follows
  // references").
  struct ByKey {
    using is_transparent = void;
    static KeyView view(const Ptr& entry) noexcept { return EntryTraits<T>::keyView(*entry); }
    static KeyView view(const KeyView& key) noexcept { return key; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const noexcept {
      return compareKeys(view(a), view(b)) < 0;
    }
  };
  using EntrySet = std::set<Ptr, ByKey>;
  // Index name -> (the value's salted digest, NameSet::digestOf -> entry), one node per distinct
  // value of each entry: an entry is found by the pointer it is stored under, and a value by its
  // 8-byte digest, so the index holds no copy of a name. Two values of one index share a digest
  // with probability about n^2 / 2^65 (name_set.hpp); then byIndex of one also gives the entries
  // of the other, which a caller re-reading its entries treats as unchanged.
  using IndexMap = std::map<std::string, std::multimap<std::uint64_t, Ptr>>;
  void indexAdd(IndexMap& indexes, const Ptr& object) const;
  void indexRemove(IndexMap& indexes, const Ptr& object) const;
  // The digests of the distinct values `function` gives `object` (an object may reference one
  // name twice).
  static std::vector<std::uint64_t> distinctDigests(const IndexFunc& function, const T& object);
  // Puts `entry` in `entries`, in place of the entry of its key if there is one.
  static void put(EntrySet& entries, Ptr entry);
  std::optional<T> makeEntry(nlohmann::json&& object) const {
    return make_ ? make_(std::move(object)) : EntryTraits<T>::fromObject(std::move(object));
  }
  core::Status checkSynced() const;
  bool retained(std::string_view key) const { return !retain_ || retain_(key); }

  std::map<std::string, IndexFunc> indexFunctions_;
  std::vector<Handlers> handlers_;
  RetainFunc retain_;
  EntryMaker make_;

  // The list being received (writer thread only).
  EntrySet staged_;
  NameSet stagedUnloaded_;

  mutable std::shared_mutex mutex_;
  EntrySet objects_;
  NameSet unloaded_;  // never also in objects_
  IndexMap indexes_;
  std::string resourceVersion_;
  bool synced_ = false;

  mutable std::mutex syncMutex_;
  mutable std::condition_variable_any syncCv_;
};

extern template class BasicStore<nlohmann::json>;
extern template class BasicStore<ObjectMeta>;
extern template class BasicStore<PackedObject>;

using Store = BasicStore<nlohmann::json>;
using ObjectPtr = Store::Ptr;
using IndexFunc = Store::IndexFunc;
using Handlers = Store::Handlers;

using MetaStore = BasicStore<ObjectMeta>;
using MetaPtr = MetaStore::Ptr;

using PackedStore = BasicStore<PackedObject>;
using PackedPtr = PackedStore::Ptr;

}  // namespace restarter::cache
