#pragma once
// Builders of the API objects the unit tests share, so that a test spells out only what it is
// about. Each returns a fresh object; none holds state.

#include <nlohmann/json.hpp>

namespace restarter::testing {

// A StatefulSet "web" as the API returns it: apps/v1, namespace "ns", uid "sts-uid",
// resourceVersion "10", generation 1, no spec or status; `patch` is merged into it as a JSON merge
// patch (RFC 7386: objects merge, null removes a field, anything else replaces).
nlohmann::json statefulSet(const nlohmann::json& patch = nlohmann::json::object());

}  // namespace restarter::testing
