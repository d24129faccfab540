#pragma once
// `restarter rotate-digest-key`: rotating the key of content digests without a restart
// (docs/architecture.md, "Keyed digests"; the procedure is docs/operations.md's).
//
//   rotate-digest-key            a new key in data.key, the current one kept in data.previous
//                                (kube::rotateDigestKey); then restart serve-controller
//   rotate-digest-key --finish   once no workload's content record holds an entry under the
//                                previous key, removes data.previous (kube::finishDigestKeyRotation)
//
// Exit codes: 0 done; 1 the API failed, a rotation is under way already, or (--finish) records
// still use the previous key (each named, and how many); 2 bad command line; 4 access denied.

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "restarter/cli/subcommand.hpp"

namespace restarter::cli {

Subcommand rotateDigestKeyCommand();

// "<kind>/<namespace>/<name>" of each workload in `workloads` (StatefulSets, Deployments or
// DaemonSets as the API lists them, `kind` their kind's name) whose content record holds an entry
// under the key `keyId`.
std::vector<std::string> workloadsUsingKey(const std::vector<nlohmann::json>& workloads,
                                           const std::string& kind, const std::string& keyId);

}  // namespace restarter::cli
