#include "restarter/testing/builders.hpp"

namespace restarter::testing {

using nlohmann::json;

json statefulSet(const json& patch) {
  json object = {{"apiVersion", "apps/v1"},
                 {"kind", "StatefulSet"},
                 {"metadata",
                  {{"name", "web"},
                   {"namespace", "ns"},
                   {"uid", "sts-uid"},
                   {"resourceVersion", "10"},
                   {"generation", 1}}}};
  object.merge_patch(patch);
  return object;
}

}  // namespace restarter::testing
