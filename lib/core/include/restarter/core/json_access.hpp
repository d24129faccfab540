#pragma once
// Lenient reads of JSON restarter did not write (API objects, AdmissionReviews, API answers), for
// fields where "" means "not there" (names, namespaces, uids, resourceVersions, kinds): a member
// that is absent, null or of another type reads as "". Nothing throws and nothing is inserted, so
// any JSON value may be passed (docs/architecture.md, "No exception across modules").
//
// Where a field of the wrong type is an error to report, lib/core reads it with the strict helpers
// of its private src/json_access.hpp instead.

#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace restarter::core {

// The value reached from `object` by the member names of `path`, in order ({"spec", "template"}
// is object.spec.template); nullptr when a step is not an object or has no such member. A null
// member is found (it is a value).
const nlohmann::json* valueAt(const nlohmann::json& object, std::initializer_list<std::string_view> path);

// The string at `path` (as valueAt), or "" when there is none there or it is not a string.
std::string stringAt(const nlohmann::json& object, std::initializer_list<std::string_view> path);

// metadata.<field> of an API object as a string, or "": stringAt(object, {"metadata", field}).
std::string metadataString(const nlohmann::json& object, std::string_view field);

}  // namespace restarter::core
