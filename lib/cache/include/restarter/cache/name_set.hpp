#pragma once
// NameSet: which objects exist, at 8 bytes of table per object, without their names
// (docs/architecture.md, "Memory that follows references"). A store keeps the objects no workload
// references here instead of as entries (store.hpp: BasicStore::setRetention): the controller then
// knows that such an object exists, so a later reference to it costs one GET, and that any other
// does not, so a reference to a missing object costs none.
//
// A key is held as the first 8 bytes of SHA-256 over a random salt drawn once per process and the
// key: names are chosen by whoever may create ConfigMaps, and without the salt a tenant could pick
// two that collide. Two keys of one set collide with probability about n^2 / 2^65 (at a million
// objects 3 in 100 million); a collision only matters when one of the pair is deleted while the
// other stays unreferenced, and then makes the other look absent until its next change.
//
// Not thread-safe: its owner (a store) locks around it. Move-only.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace restarter::cache {

class NameSet {
 public:
  NameSet();
  ~NameSet();
  NameSet(NameSet&& other) noexcept;
  NameSet& operator=(NameSet&& other) noexcept;
  NameSet(const NameSet&) = delete;
  NameSet& operator=(const NameSet&) = delete;

  // True when `key` was not in the set.
  bool insert(std::string_view key);
  // True when `key` was in the set.
  bool erase(std::string_view key);
  bool contains(std::string_view key) const;
  std::size_t size() const noexcept;
  // The bytes the set's table holds (its slots and their metadata), for tests and benchmarks.
  std::size_t tableBytes() const noexcept;
  void clear();

  // The salted digest a key is held as (tests: the same key gives the same digest in one process).
  static std::uint64_t digestOf(std::string_view key);

 private:
  struct Table;
  std::unique_ptr<Table> table_;
};

}  // namespace restarter::cache
