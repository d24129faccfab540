// rotate-digest-key --finish's check: which workloads still hold a record entry under the previous
// key (docs/architecture.md, "Keyed digests").
#include "restarter/cli/rotate_digest_key.hpp"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "restarter/core/constants.hpp"

using nlohmann::json;

namespace {

json workload(const std::string& ns, const std::string& name, const std::string& record) {
  json object = {{"metadata", {{"namespace", ns}, {"name", name}}}};
  if (!record.empty())
    object["metadata"]["annotations"] = {{std::string(restarter::core::kContentDigestsAnnotation), record}};
  return object;
}

const std::string kDigest = "00112233445566778899aabbccddeeff";

}  // namespace

TEST_CASE("workloadsUsingKey names each workload with an entry under the key once", "[cli][rotate]") {
  const std::vector<json> workloads = {
      workload("a", "old", "configmap/x=u/1/h2.0a1b2c3d." + kDigest + ",secret/y=u/2/h2.0a1b2c3d." + kDigest),
      workload("a", "h1", "configmap/x=u/1/h1.0a1b2c3d." + kDigest),
      workload("b", "new", "configmap/x=u/1/h2.ffffffff." + kDigest),
      workload("b", "none", ""),
      workload("b", "broken", "configmap/x=u/1/h2.0a1b2c3d.short"),
  };
  CHECK(restarter::cli::workloadsUsingKey(workloads, "statefulset", "0a1b2c3d") ==
        std::vector<std::string>{"statefulset/a/old", "statefulset/a/h1"});
  CHECK(restarter::cli::workloadsUsingKey(workloads, "deployment", "ffffffff") ==
        std::vector<std::string>{"deployment/b/new"});
  CHECK(restarter::cli::workloadsUsingKey(workloads, "deployment", "12345678").empty());
}
