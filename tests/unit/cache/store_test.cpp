#include "restarter/cache/store.hpp"

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
  PackedObject broken{{"n", "b", "1"}, {0xc1}};
  CHECK(broken.unpack().is_null());
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
