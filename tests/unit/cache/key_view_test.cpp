#include "restarter/cache/key_view.hpp"

#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "restarter/cache/store.hpp"

using restarter::cache::compareKeys;
using restarter::cache::KeyView;
using restarter::cache::keyViewOf;
using restarter::cache::objectKey;
using restarter::cache::splitKey;

namespace {
template <typename Object>
constexpr bool viewable = requires(Object&& object) {
  keyViewOf(std::forward<Object>(object));
};
}  // namespace

TEST_CASE("a key splits at its first slash into namespace and name", "[cache][key_view]") {
  KeyView namespaced = splitKey("ns/a");
  CHECK(namespaced.namespace_ == "ns");
  CHECK(namespaced.name == "a");
  KeyView clusterScoped = splitKey("node-1");
  CHECK(clusterScoped.namespace_.empty());
  CHECK(clusterScoped.name == "node-1");
  KeyView empty = splitKey("");
  CHECK(empty.namespace_.empty());
  CHECK(empty.name.empty());
}

TEST_CASE("keys compare exactly as the key strings they stand for", "[cache][key_view]") {
  // Namespaces that are prefixes of one another, characters on both sides of '/', cluster-scoped
  // names that equal a namespace, empty names: every pair must order as objectKey's strings do.
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"a", "x"},  {"a-b", "x"}, {"a", "x-"}, {"a", ""},  {"ab", "x"},  {"a.b", "x"}, {"a0", "x"},
      {"", "a"},   {"", "a/x"},  {"", "a-b"}, {"", "a0"}, {"", ""},     {"a", "x/"},  {"b", "a"},
      {"a", "xy"}, {"", "b"},    {"a", "w"},  {"", "a."}, {"", "\xff"}, {"a", "\x01"}};
  for (const auto& [nsA, nameA] : keys) {
    for (const auto& [nsB, nameB] : keys) {
      const std::string a = objectKey(nsA, nameA);
      const std::string b = objectKey(nsB, nameB);
      INFO("\"" << a << "\" against \"" << b << "\"");
      CHECK(compareKeys(KeyView{nsA, nameA}, KeyView{nsB, nameB}) == (a <=> b));
    }
  }
}

TEST_CASE("an object's key view reads its metadata strings and nothing else", "[cache][key_view]") {
  const nlohmann::json object = {{"metadata", {{"namespace", "ns"}, {"name", "a"}}}};
  KeyView view = keyViewOf(object);
  CHECK(view.namespace_ == "ns");
  CHECK(view.name == "a");
  // Views into the object, not copies.
  CHECK(view.name.data() == object["metadata"]["name"].get_ref<const std::string&>().data());

  const nlohmann::json node = {{"metadata", {{"name", "n"}}}};
  KeyView clusterScoped = keyViewOf(node);
  CHECK(clusterScoped.namespace_.empty());
  CHECK(clusterScoped.name == "n");
  // A view of a temporary object is refused at compile time: it would dangle after the statement.
  STATIC_REQUIRE(viewable<const nlohmann::json&>);
  STATIC_REQUIRE_FALSE(viewable<nlohmann::json>);
  for (const nlohmann::json& odd :
       {nlohmann::json(nullptr), nlohmann::json::array(), nlohmann::json({{"metadata", 1}}),
        nlohmann::json({{"metadata", {{"name", 1}, {"namespace", {1}}}}})}) {
    INFO(odd.dump());
    KeyView none = keyViewOf(odd);
    CHECK(none.namespace_.empty());
    CHECK(none.name.empty());
  }
}
