#pragma once
// One workload read as explain-restart and roll judge it: the connection, the key of content
// digests and the workload's judged input (inspect/explain.hpp), with the failures both commands
// say the same way.

#include <memory>
#include <string>
#include <variant>

#include "restarter/cli/explain_restart.hpp"
#include "restarter/cli/subcommand.hpp"
#include "restarter/inspect/explain.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/config.hpp"

namespace restarter::cli {

struct JudgedWorkload {
  std::unique_ptr<kube::Client> client;  // for what the command reads or writes next
  std::string namespace_;                // the client's default namespace, where the workload is
  std::string what;                      // "StatefulSet shop/web", for messages
  inspect::ExplainInput input;
};

// Connects with `connection`, reads the key of content digests (inspect::readJudgementDigestKey,
// its warnings on io.err) and `target` judged under `judgement` (inspect::readJudgedInput, with
// its place in the rollout queue when `withQueue`). A failure is said on io.err after `prefix`
// ("restarter roll: "): "<what> not found", "access denied: ...", or the error; the result is then
// its exit code: kExitNotFound, kExitForbidden, else kExitFailure.
std::variant<JudgedWorkload, int> readJudgedWorkload(const kube::LoadOptions& connection,
                                                     const WorkloadTarget& target,
                                                     const inspect::JudgementOptions& judgement, bool withQueue,
                                                     Io& io, const std::string& prefix);

}  // namespace restarter::cli
