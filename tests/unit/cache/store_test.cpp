#include "restarter/cache/store.hpp"

#include <set>
#include <thread>

#include <catch2/catch.hpp>

using restarter::core::ErrorKind;
using namespace restarter::cache;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {
json object(const std::string& ns, const std::string& name, const std::string& rv,
            const std::string& ref = "") {
  json o = {{"metadata", {{"namespace", ns}, {"name", name}, {"resourceVersion", rv}}}};
  if (!ref.empty()) o["spec"]["ref"] = ref;
  return o;
}
std::string nameOf(const ObjectPtr& o) { return (*o)["metadata"]["name"].get<std::string>(); }
}  // namespace

TEST_CASE("nothing is served before the first replace", "[cache][store]") {
  Store store;
  CHECK_FALSE(store.synced());
  CHECK(store.get("a/b").error().kind == ErrorKind::Unavailable);
  CHECK_FALSE(store.list().ok());
  CHECK_FALSE(store.waitForSync(10ms));
  store.replace({}, "1");
  CHECK(store.synced());
  CHECK(store.waitForSync(0ms));
  auto absent = store.get("a/b");
  REQUIRE(absent.ok());
  CHECK(*absent == nullptr);
}

TEST_CASE("replace diffs against the old content for the handlers", "[cache][store]") {
  Store store;
  std::vector<std::string> log;
  store.addHandlers({[&](const ObjectPtr& o) { log.push_back("add " + nameOf(o)); },
                     [&](const ObjectPtr& b, const ObjectPtr& a) {
                       log.push_back("update " + nameOf(a) + " " +
                                     (*b)["metadata"]["resourceVersion"].get<std::string>() + "->" +
                                     (*a)["metadata"]["resourceVersion"].get<std::string>());
                     },
                     [&](const ObjectPtr& o) { log.push_back("delete " + nameOf(o)); }});
  store.replace({object("n", "a", "1"), object("n", "b", "1"), json{{"metadata", json::object()}}}, "1");
  CHECK(log == std::vector<std::string>{"add a", "add b"});
  log.clear();
  auto skipped = store.replace({object("n", "b", "1"), object("n", "c", "2"), object("n", "a", "3")}, "3");
  CHECK(skipped == 0);
  CHECK(log == std::vector<std::string>{"update a 1->3", "add c"});
  log.clear();
  store.replace({object("n", "c", "2")}, "4");
  CHECK(log == std::vector<std::string>{"delete a", "delete b"});
  CHECK(store.resourceVersion() == "4");
  CHECK(store.size() == 1);
}

TEST_CASE("upsert and erase keep the secondary index in step", "[cache][store]") {
  Store store;
  store.addIndex("ref", [](const json& o) {
    std::vector<std::string> out;
    if (auto spec = o.find("spec"); spec != o.end() && spec->contains("ref")) out.push_back((*spec)["ref"]);
    return out;
  });
  store.replace(
      {object("n", "w1", "1", "cm-a"), object("n", "w2", "1", "cm-a"), object("n", "w3", "1", "cm-b")}, "1");
  CHECK(store.byIndex("ref", "cm-a")->size() == 2);
  store.upsert(object("n", "w1", "2", "cm-b"));
  CHECK(store.byIndex("ref", "cm-a")->size() == 1);
  CHECK(store.byIndex("ref", "cm-b")->size() == 2);
  store.erase(object("n", "w3", "3"));
  auto b = store.byIndex("ref", "cm-b");
  REQUIRE(b->size() == 1);
  CHECK(nameOf(b->at(0)) == "w1");
  CHECK(store.byIndex("ref", "none")->empty());
  CHECK(store.byIndex("nope", "x").error().kind == ErrorKind::Internal);
  CHECK(store.resourceVersion() == "3");
  CHECK_FALSE(store.upsert(json::array()));
  CHECK_FALSE(store.erase(json{{"metadata", {{"name", 5}}}}));
}

TEST_CASE("an index lists an object once however often it names a value and in key order until it changes",
          "[cache][store]") {
  Store store;
  // Every value of spec.refs, duplicates included (a workload may name one ConfigMap twice).
  store.addIndex("ref", [](const json& o) {
    std::vector<std::string> out;
    if (auto spec = o.find("spec"); spec != o.end() && spec->contains("refs"))
      for (const auto& r : (*spec)["refs"]) out.push_back(r);
    return out;
  });
  auto with = [](const std::string& name, const std::string& rv, std::vector<std::string> refs) {
    json o = object("n", name, rv);
    o["spec"]["refs"] = refs;
    return o;
  };
  store.replace({with("w2", "1", {"cm-a", "cm-a"}), with("w1", "1", {"cm-a", "cm-b", "cm-a"})}, "1");
  auto a = store.byIndex("ref", "cm-a");
  REQUIRE(a->size() == 2);
  CHECK(nameOf(a->at(0)) == "w1");
  CHECK(nameOf(a->at(1)) == "w2");
  store.upsert(with("w1", "2", {"cm-b", "cm-b"}));  // no longer names cm-a
  a = store.byIndex("ref", "cm-a");
  REQUIRE(a->size() == 1);
  CHECK(nameOf(a->at(0)) == "w2");
  auto b = store.byIndex("ref", "cm-b");
  REQUIRE(b->size() == 1);
  CHECK((*b->at(0))["metadata"]["resourceVersion"] == "2");  // the current entry, not the old one
  store.erase(with("w2", "3", {}));
  CHECK(store.byIndex("ref", "cm-a")->empty());
  store.erase(with("w1", "4", {}));
  CHECK(store.byIndex("ref", "cm-b")->empty());
}

TEST_CASE("entries list and are found in the order of their key strings across namespaces", "[cache][store]") {
  Store store;
  store.addIndex("ref", [](const json& o) {
    std::vector<std::string> out;
    if (auto spec = o.find("spec"); spec != o.end() && spec->contains("ref")) out.push_back((*spec)["ref"]);
    return out;
  });
  // "a-b/x" sorts before "a/x" as strings ('-' before '/') though namespace "a" sorts before "a-b".
  json clusterScoped = {{"metadata", {{"name", "a"}, {"resourceVersion", "1"}}}, {"spec", {{"ref", "cm"}}}};
  store.replace({object("a", "x", "1", "cm"), object("a-b", "x", "1", "cm"), object("ab", "x", "1", "cm"),
                 clusterScoped, object("a", "w", "1", "cm")},
                "1");
  const std::vector<std::string> expected = {"a", "a-b/x", "a/w", "a/x", "ab/x"};
  auto all = store.list();
  REQUIRE(all.ok());
  std::vector<std::string> listed;
  for (const ObjectPtr& o : *all) listed.push_back(objectKey(*o));
  CHECK(listed == expected);
  auto found = store.byIndex("ref", "cm");
  REQUIRE(found.ok());
  std::vector<std::string> indexed;
  for (const ObjectPtr& o : *found) indexed.push_back(objectKey(*o));
  CHECK(indexed == expected);
  for (const std::string& key : expected) {
    INFO(key);
    REQUIRE(*store.get(key) != nullptr);
    CHECK(objectKey(**store.get(key)) == key);
  }
  CHECK(*store.get("a-b") == nullptr);
  CHECK(*store.get("a/x-") == nullptr);
}

TEST_CASE("a key listed twice in one list keeps its last object", "[cache][store]") {
  MetaStore store;
  store.stage({object("n", "a", "1"), object("n", "b", "1")});
  store.stage({object("n", "a", "2")});
  store.commitList("2");
  CHECK(store.size() == 2);
  REQUIRE(*store.get("n/a") != nullptr);
  CHECK((*store.get("n/a"))->resourceVersion == "2");
  // The same through upsert: the entry of the key is replaced, not added beside it.
  store.upsert(object("n", "a", "3"));
  CHECK(store.size() == 2);
  CHECK((*store.get("n/a"))->resourceVersion == "3");
}

TEST_CASE("a staged list is invisible until committed and a discarded one never appears", "[cache][store]") {
  Store store;
  store.stage({object("n", "a", "1")});
  CHECK_FALSE(store.synced());
  store.discardStaged();
  CHECK(store.stage({object("n", "b", "2"), json::array()}) == 1);
  CHECK(store.stage({object("n", "c", "2")}) == 0);
  CHECK_FALSE(store.get("n/b").ok());
  store.commitList("2");
  REQUIRE(store.synced());
  CHECK(store.size() == 2);
  CHECK(*store.get("n/a") == nullptr);
  CHECK(*store.get("n/c") != nullptr);
  // The next list starts empty: nothing staged before is carried over.
  store.replace({object("n", "d", "3")}, "3");
  CHECK(store.size() == 1);
}

TEST_CASE("a MetaStore keeps name and namespace and uid and version and string labels only", "[cache][store]") {
  MetaStore store;
  std::vector<std::string> deleted;
  store.addHandlers({{}, {}, [&](const MetaPtr& m) { deleted.push_back(m->name + "@" + m->resourceVersion); }});
  json full = {{"kind", "PartialObjectMetadata"},
               {"metadata",
                {{"name", "cm"},
                 {"namespace", "n"},
                 {"uid", "u1"},
                 {"resourceVersion", "5"},
                 {"labels", {{"z", "1"}, {"a", "2"}, {"bad", 3}}},
                 {"managedFields", json::array({{{"manager", "kubectl"}}})}}},
               {"data", {{"big", std::string(1000, 'x')}}}};
  CHECK(store.replace({full, json{{"metadata", {{"name", ""}}}}, json("x")}, "5") == 2);
  auto got = store.get("n/cm");
  REQUIRE(got.ok());
  REQUIRE(*got != nullptr);
  const ObjectMeta& meta = **got;
  CHECK(meta.uid == "u1");
  CHECK(meta.resourceVersion == "5");
  CHECK(objectKey(meta) == "n/cm");
  CHECK(meta.labels == std::vector<std::pair<std::string, std::string>>{{"a", "2"}, {"z", "1"}});
  REQUIRE(meta.label("z") != nullptr);
  CHECK(*meta.label("z") == "1");
  CHECK(meta.label("bad") == nullptr);
  CHECK(meta.label("b") == nullptr);
  // Wrong types read as empty rather than failing: the reader decides.
  CHECK(store.upsert(json{{"metadata", {{"name", "odd"}, {"namespace", "n"}, {"uid", 7}, {"labels", "no"}}}}));
  CHECK((*store.get("n/odd"))->uid.empty());
  CHECK((*store.get("n/odd"))->labels.empty());
  CHECK(store.erase(json{{"metadata", {{"name", "cm"}, {"namespace", "n"}, {"resourceVersion", "9"}}}}));
  CHECK(deleted == std::vector<std::string>{"cm@9"});
  CHECK(store.resourceVersion() == "9");
}

TEST_CASE("a PackedStore gives each object back as it was stored", "[cache][store]") {
  PackedStore store;
  store.addIndex("ref", [](const PackedObject& p) {
    json o = p.unpack();
    std::vector<std::string> out;
    if (o.contains("spec")) out.push_back(o["spec"]["ref"]);
    return out;
  });
  json w = object("n", "w", "4", "cm-a");
  w["spec"]["template"] = {
      {"metadata", {{"annotations", {{"k", "v"}}}}}, {"n", 1.5}, {"list", {1, "x", nullptr, true}}};
  CHECK(store.replace({w, json{{"metadata", json::object()}}}, "4") == 1);
  auto got = store.get("n/w");
  REQUIRE(got.ok());
  REQUIRE(*got != nullptr);
  CHECK((*got)->unpack() == w);
  CHECK((*got)->resourceVersion == "4");
  CHECK(objectKey(**got) == "n/w");
  CHECK(store.byIndex("ref", "cm-a")->size() == 1);
  // Bytes that are not MessagePack decode to null, never an exception.
  PackedObject broken{{"n", "b", "1"}, PackedBytes(std::vector<std::uint8_t>{0xc1}), {}};
  CHECK(broken.unpack().is_null());
  // The trim kept beside the bytes costs no more than the std::vector the bytes once were.
  STATIC_REQUIRE(sizeof(PackedObject) <= sizeof(ObjectIdentity) + sizeof(std::vector<std::uint8_t>));
}

TEST_CASE("an entry maker fills the typed fields of every entry the store makes", "[cache][store]") {
  // What the maker derives from the whole object (here: its spec.size, then dropped) reaches the
  // entry however the object arrives: listed, watched, deleted or promoted.
  PackedStore store;
  std::vector<std::uint32_t> deleted;
  store.addHandlers(
      {{}, {}, [&](const PackedPtr& last) { deleted.push_back(last->trim.omittedAnnotationsBytes); }});
  store.setRetention([](std::string_view key) { return key != "n/unloaded"; });
  store.setEntryMaker([](json&& whole) -> std::optional<PackedObject> {
    const auto size = whole["spec"].value("size", 0U);
    whole.erase("spec");
    auto packed = packObject(whole);
    if (packed) packed->trim = PackedTrim{size, size == 0};
    return packed;
  });
  auto sized = [](const std::string& name, const std::string& rv, unsigned size) {
    json o = object("n", name, rv);
    o["spec"]["size"] = size;
    return o;
  };
  store.replace({sized("listed", "1", 7), sized("unloaded", "1", 8)}, "1");
  CHECK(store.upsert(sized("watched", "2", 9)));
  const auto trimOf = [&](const std::string& key) { return (*store.get(key))->trim.omittedAnnotationsBytes; };
  CHECK(trimOf("n/listed") == 7);
  CHECK(trimOf("n/watched") == 9);
  CHECK((*store.get("n/listed"))->unpack() == object("n", "listed", "1"));
  auto promoted = store.promote(sized("unloaded", "1", 0));
  REQUIRE(promoted.ok());
  REQUIRE(*promoted != nullptr);
  CHECK((*promoted)->trim.stub);
  CHECK(store.erase(sized("watched", "3", 11)));
  CHECK(deleted == std::vector<std::uint32_t>{11});
  // Without a maker nothing is trimmed.
  PackedStore plain;
  plain.replace({sized("listed", "1", 7)}, "1");
  CHECK((*plain.get("n/listed"))->trim.omittedAnnotationsBytes == 0);
  CHECK((*plain.get("n/listed"))->unpack()["spec"]["size"] == 7);
}

TEST_CASE("a deletion makes an entry only when handlers see one it removed", "[cache][store]") {
  // The maker's work (a content digest, for ConfigMaps and Secrets) is spent on a DELETED event only
  // for an object that was an entry and only when a handler is to see its final state.
  PackedStore store;
  int made = 0;
  std::vector<std::string> deleted;
  store.setRetention([](std::string_view key) { return key != "n/unloaded"; });
  store.setEntryMaker([&](json&& whole) {
    ++made;
    return packObject(whole);
  });
  store.addHandlers({{}, {}, [&](const PackedPtr& last) { deleted.push_back(last->resourceVersion); }});
  store.replace({object("n", "kept", "1"), object("n", "unloaded", "1")}, "1");
  const int listed = made;
  CHECK(store.erase(object("n", "unloaded", "2")));
  CHECK(store.erase(object("n", "unknown", "3")));
  CHECK(made == listed);
  CHECK(deleted.empty());
  CHECK(store.resourceVersion() == "3");
  CHECK(store.erase(object("n", "kept", "4")));
  CHECK(made == listed + 1);
  CHECK(deleted == std::vector<std::string>{"4"});
  CHECK(store.size() == 0);
  // Without handlers nobody would read the entry: none is made.
  PackedStore quiet;
  int quietMade = 0;
  quiet.setEntryMaker([&](json&& whole) {
    ++quietMade;
    return packObject(whole);
  });
  quiet.replace({object("n", "kept", "1")}, "1");
  CHECK(quiet.erase(object("n", "kept", "2")));
  CHECK(quietMade == 1);
  CHECK(quiet.size() == 0);
}

TEST_CASE("cluster-scoped keys have no namespace part", "[cache][store]") {
  CHECK(objectKey(json{{"metadata", {{"name", "x"}}}}) == "x");
  CHECK(objectKey(json{{"metadata", {{"name", "x"}, {"namespace", "n"}}}}) == "n/x");
  CHECK(objectKey(json("str")).empty());
  CHECK(objectKey("n", "x") == "n/x");
}

TEST_CASE("readers see either the old or the new list never a mix", "[cache][store]") {
  Store store;
  std::vector<json> first, second;
  for (int i = 0; i < 200; ++i) {
    first.push_back(object("n", "a" + std::to_string(i), "1"));
    second.push_back(object("n", "b" + std::to_string(i), "2"));
  }
  store.replace(first, "1");
  std::atomic<bool> done{false};
  std::atomic<int> mixed{0};
  std::thread reader([&] {
    while (!done) {
      auto all = store.list();
      std::set<std::string> versions;
      for (const auto& o : *all) versions.insert((*o)["metadata"]["resourceVersion"].get<std::string>());
      if (versions.size() != 1 || all->size() != 200) ++mixed;
    }
  });
  for (int round = 0; round < 50; ++round) store.replace(round % 2 ? first : second, std::to_string(round));
  done = true;
  reader.join();
  CHECK(mixed == 0);
}

TEST_CASE("waitForSync wakes when another thread syncs and honours stop", "[cache][store]") {
  Store store;
  std::thread writer([&] {
    std::this_thread::sleep_for(20ms);
    store.replace({object("n", "a", "1")}, "1");
  });
  CHECK(store.waitForSync(10s));
  writer.join();

  Store never;
  std::stop_source stop;
  stop.request_stop();
  CHECK_FALSE(never.waitForSync(10s, stop.get_token()));
}

namespace {
// A MetaStore that keeps as entries the keys of `wanted` (what the controller's retention asks of
// its workload indexes; read at each change, so a test changes it between changes) and logs
// "add NAME@VERSION", "update NAME" and "delete NAME" into `log`.
struct RetainingStore {
  std::set<std::string> wanted;
  std::vector<std::string> log;
  MetaStore store;

  RetainingStore() {
    store.setRetention([this](std::string_view key) { return wanted.count(std::string(key)) != 0; });
    store.addHandlers({[this](const MetaPtr& o) { log.push_back("add " + o->name + "@" + o->resourceVersion); },
                       [this](const MetaPtr&, const MetaPtr& a) { log.push_back("update " + a->name); },
                       [this](const MetaPtr& o) { log.push_back("delete " + o->name); }});
  }
};
json metaObject(const std::string& name, const std::string& rv) {
  return {{"metadata", {{"namespace", "n"}, {"name", name}, {"uid", "u-" + name}, {"resourceVersion", rv}}}};
}
}  // namespace

TEST_CASE_METHOD(RetainingStore,
                 "a store with retention keeps unretained objects as unloaded and not as entries",
                 "[cache][store]") {
  wanted = {"n/a"};
  store.stage({metaObject("a", "1"), metaObject("b", "1")});
  store.stage({metaObject("c", "2")});
  store.commitList("2");
  CHECK(log == std::vector<std::string>{"add a@1"});
  CHECK(store.size() == 3);
  CHECK(store.unloadedSize() == 2);
  auto a = store.find("n/a");
  REQUIRE(a.ok());
  REQUIRE(a->entry != nullptr);
  CHECK_FALSE(a->unloaded);
  auto b = store.find("n/b");
  REQUIRE(b.ok());
  CHECK(b->entry == nullptr);
  CHECK(b->unloaded);
  auto missing = store.find("n/z");
  REQUIRE(missing.ok());
  CHECK(missing->entry == nullptr);
  CHECK_FALSE(missing->unloaded);
  CHECK(*store.get("n/b") == nullptr);

  log.clear();
  store.upsert(metaObject("b", "3"));  // still unretained: no entry, no handler
  CHECK(log.empty());
  CHECK(store.find("n/b")->unloaded);
  store.erase(metaObject("c", "4"));  // an unloaded object deleted: gone, no handler
  CHECK(log.empty());
  CHECK_FALSE(store.find("n/c")->unloaded);
  CHECK(store.size() == 2);
  CHECK(store.resourceVersion() == "4");
}

TEST_CASE_METHOD(RetainingStore, "an unloaded object becomes an entry at its next change once retained",
                 "[cache][store]") {
  store.replace({metaObject("a", "1")}, "1");
  wanted.insert("n/a");
  store.upsert(metaObject("a", "2"));
  CHECK(log == std::vector<std::string>{"add a@2"});
  CHECK(store.unloadedSize() == 0);
  REQUIRE(store.find("n/a")->entry != nullptr);

  // No longer retained: back to unloaded at the next change, without handlers.
  log.clear();
  wanted.clear();
  store.upsert(metaObject("a", "3"));
  CHECK(log.empty());
  CHECK(store.find("n/a")->unloaded);
}

TEST_CASE_METHOD(RetainingStore,
                 "promote turns an unloaded object into an entry once and only while it is known",
                 "[cache][store]") {
  CHECK(store.promote(metaObject("a", "1")).error().kind == ErrorKind::Unavailable);
  store.replace({metaObject("a", "1"), metaObject("b", "1")}, "1");

  auto promoted = store.promote(metaObject("a", "5"));
  REQUIRE(promoted.ok());
  REQUIRE(*promoted != nullptr);
  CHECK((*promoted)->resourceVersion == "5");
  CHECK(store.find("n/a")->entry == *promoted);
  CHECK(store.unloadedSize() == 1);
  // Promoted twice (two workers raced): the entry that is there wins.
  auto again = store.promote(metaObject("a", "6"));
  REQUIRE(again.ok());
  CHECK(*again == *promoted);
  // Deleted before the read came back: nothing is kept, the caller sees it absent.
  store.erase(metaObject("b", "7"));
  auto gone = store.promote(metaObject("b", "6"));
  REQUIRE(gone.ok());
  CHECK(*gone == nullptr);
  CHECK(store.find("n/b")->entry == nullptr);
  // Never known at all.
  auto unknown = store.promote(metaObject("z", "1"));
  REQUIRE(unknown.ok());
  CHECK(*unknown == nullptr);
  CHECK(store.promote(json{{"metadata", json::object()}}).error().kind == ErrorKind::InvalidInput);
  CHECK(log.empty());
}

TEST_CASE_METHOD(RetainingStore,
                 "a relist moves objects between entries and unloaded with handlers for the entries",
                 "[cache][store]") {
  wanted = {"n/a"};
  store.replace({metaObject("a", "1"), metaObject("b", "1")}, "1");
  REQUIRE(store.promote(metaObject("b", "1")).ok());
  log.clear();
  wanted = {"n/c"};
  store.replace({metaObject("a", "2"), metaObject("b", "2"), metaObject("c", "2")}, "2");
  // c is new as an entry; a and b are no longer entries (the promoted b included).
  CHECK(log == std::vector<std::string>{"add c@2", "delete a", "delete b"});
  CHECK(store.find("n/a")->unloaded);
  CHECK(store.find("n/b")->unloaded);
  CHECK(store.size() == 3);
}

TEST_CASE("hasIndexed says whether byIndex would find anything", "[cache][store]") {
  Store store;
  store.addIndex("ref", [](const json& o) {
    std::vector<std::string> v;
    if (o.contains("spec")) v.push_back(o["spec"]["ref"].get<std::string>());
    return v;
  });
  CHECK_FALSE(store.hasIndexed("ref", "x"));  // not synced
  store.replace({object("n", "a", "1", "x")}, "1");
  CHECK(store.hasIndexed("ref", "x"));
  CHECK_FALSE(store.hasIndexed("ref", "y"));
  CHECK_FALSE(store.hasIndexed("other", "x"));
  store.erase(object("n", "a", "2", "x"));
  CHECK_FALSE(store.hasIndexed("ref", "x"));
}

TEST_CASE_METHOD(RetainingStore, "a list discarded half-way leaves no unloaded names behind",
                 "[cache][store]") {
  store.replace({metaObject("a", "1")}, "1");
  store.stage({metaObject("b", "2"), metaObject("c", "2")});
  store.discardStaged();  // the watch expired (410) during the list: it starts again
  store.stage({metaObject("a", "3")});
  store.commitList("3");
  CHECK(store.find("n/a")->unloaded);
  CHECK_FALSE(store.find("n/b")->unloaded);
  CHECK_FALSE(store.find("n/c")->unloaded);
  CHECK(store.size() == 1);
}

TEST_CASE_METHOD(
    RetainingStore,
    "an object deleted and created again under another name and back is known by its name each time",
    "[cache][store]") {
  // No rename exists in the API: a "rename" is a delete and a create, and back again.
  wanted = {"n/a"};
  store.replace({metaObject("a", "1")}, "1");
  for (int round = 0; round < 3; ++round) {
    const std::string rv = std::to_string(10 * round + 2);
    store.erase(metaObject("a", rv));
    store.upsert(metaObject("b", rv));
    CHECK(store.find("n/a")->entry == nullptr);
    CHECK_FALSE(store.find("n/a")->unloaded);
    CHECK(store.find("n/b")->unloaded);
    store.erase(metaObject("b", rv + "1"));
    store.upsert(metaObject("a", rv + "1"));
    REQUIRE(store.find("n/a")->entry != nullptr);
    CHECK(store.find("n/a")->entry->resourceVersion == rv + "1");
    CHECK_FALSE(store.find("n/b")->unloaded);
    CHECK(store.size() == 1);
    CHECK(store.unloadedSize() == 0);
  }
  // The referenced name's handlers saw each delete and create; the unreferenced one's none.
  CHECK(log == std::vector<std::string>{"add a@1", "delete a", "add a@21", "delete a", "add a@121", "delete a",
                                        "add a@221"});
}
