#pragma once
// KeyView: an object's store key, "<namespace>/<name>" (or "<name>" when cluster-scoped), as views
// into text held elsewhere, so a store can find its entries by the names the entries themselves
// hold, each name stored once (docs/architecture.md, "Memory that follows references").
//
// Views only: a KeyView is valid while the text it views is (an entry held by a store, a key string
// the caller keeps). Plain values, no state: any thread.

#include <compare>
#include <string_view>

#include <nlohmann/json.hpp>

namespace restarter::cache {

struct KeyView {
  std::string_view namespace_;  // empty for a cluster-scoped object
  std::string_view name;
};

// `key` split at its first '/' (neither a namespace nor an object's name contains one): the view of
// a key made by objectKey (store.hpp).
KeyView splitKey(std::string_view key) noexcept;

// metadata.namespace and metadata.name of `object` as views into it; a field that is missing or
// not a string views "".
KeyView keyViewOf(const nlohmann::json& object) noexcept;
// Views of a temporary would dangle at the end of the statement: refused at compile time.
KeyView keyViewOf(const nlohmann::json&& object) = delete;

// Orders keys as their strings order ("a-b/x" before "a/x": '-' sorts before '/'), without making
// the strings, so a store's entries list in the order their keys would.
std::strong_ordering compareKeys(const KeyView& a, const KeyView& b) noexcept;

}  // namespace restarter::cache
