#include "restarter/core/json_access.hpp"

#include <catch2/catch.hpp>

using namespace restarter::core;
using nlohmann::json;

TEST_CASE("metadataString reads a string field of metadata", "[json_access]") {
  const json object = {{"metadata", {{"name", "web"}, {"namespace", "shop"}, {"uid", ""}}}};
  CHECK(metadataString(object, "name") == "web");
  CHECK(metadataString(object, "namespace") == "shop");
  CHECK(metadataString(object, "uid").empty());
}

TEST_CASE("metadataString reads what is not there as empty and never throws", "[json_access]") {
  CHECK(metadataString(json::object(), "name").empty());                                 // no metadata
  CHECK(metadataString(json{{"metadata", "web"}}, "name").empty());                      // not an object
  CHECK(metadataString(json{{"metadata", json::array({"name"})}}, "name").empty());      // an array
  CHECK(metadataString(json{{"metadata", nullptr}}, "name").empty());                    // null
  CHECK(metadataString(json{{"metadata", json::object()}}, "name").empty());             // no field
  CHECK(metadataString(json{{"metadata", {{"generation", 3}}}}, "generation").empty());  // a number
  CHECK(metadataString(json{{"metadata", {{"name", nullptr}}}}, "name").empty());        // null field
  CHECK(metadataString(json{{"metadata", {{"labels", {{"a", "b"}}}}}}, "labels").empty());
  for (const json& notAnObject : {json(nullptr), json("metadata"), json(5), json::array()}) {
    CHECK(metadataString(notAnObject, "name").empty());
  }
}

TEST_CASE("stringAt follows a path of members", "[json_access]") {
  const json object = {{"kind", "Lease"},
                       {"spec", {{"holderIdentity", "a"}, {"strategy", {{"type", "OnDelete"}}}}}};
  CHECK(stringAt(object, {"kind"}) == "Lease");
  CHECK(stringAt(object, {"spec", "holderIdentity"}) == "a");
  CHECK(stringAt(object, {"spec", "strategy", "type"}) == "OnDelete");
  CHECK(stringAt(object, {"spec", "strategy"}).empty());         // an object, not a string
  CHECK(stringAt(object, {"spec", "missing", "type"}).empty());  // a missing step
  CHECK(stringAt(object, {"kind", "type"}).empty());             // a step that is a string
  CHECK(stringAt(object, {}).empty());                           // the object itself
  CHECK(stringAt(json("text"), {}) == "text");
}

TEST_CASE("valueAt finds values of any type and tells null from absent", "[json_access]") {
  const json object = {{"metadata", {{"generation", 2}, {"deletionTimestamp", nullptr}}}};
  const json* generation = valueAt(object, {"metadata", "generation"});
  REQUIRE(generation != nullptr);
  CHECK(*generation == 2);
  const json* deletion = valueAt(object, {"metadata", "deletionTimestamp"});
  REQUIRE(deletion != nullptr);
  CHECK(deletion->is_null());
  CHECK(valueAt(object, {"metadata", "uid"}) == nullptr);
  CHECK(valueAt(object, {"metadata", "generation", "x"}) == nullptr);
  CHECK(valueAt(json::array({1}), {"0"}) == nullptr);
  CHECK(valueAt(object, {}) == &object);
}
