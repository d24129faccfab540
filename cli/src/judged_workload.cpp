// Reading one workload for explain-restart and roll (see judged_workload.hpp).
#include "restarter/cli/judged_workload.hpp"

#include <ostream>

#include "restarter/cli/app.hpp"
#include "restarter/core/explain.hpp"

namespace restarter::cli {

std::variant<JudgedWorkload, int> readJudgedWorkload(const kube::LoadOptions& connection,
                                                     const WorkloadTarget& target,
                                                     const inspect::JudgementOptions& judgement, bool withQueue,
                                                     Io& io, const std::string& prefix) {
  auto client = kube::Client::connect(connection);
  if (!client) {
    io.err << prefix << client.error().describe() << "\n";
    return kExitFailure;
  }
  JudgedWorkload workload;
  workload.client = std::move(*client);
  workload.namespace_ = workload.client->defaultNamespace();
  workload.what =
      std::string(core::workloadKindName(target.kind)) + " " + workload.namespace_ + "/" + target.name;
  const auto digestKey = inspect::readJudgementDigestKey(*workload.client, judgement, io.err);
  auto input = inspect::readJudgedInput(*workload.client, target.kind, workload.namespace_, target.name,
                                        judgement, digestKey ? &*digestKey : nullptr, withQueue);
  if (!input) {
    const core::Error& error = input.error();
    if (error.kind == core::ErrorKind::NotFound) {
      io.err << prefix << workload.what << " not found\n";
    } else if (error.kind == core::ErrorKind::Forbidden || error.kind == core::ErrorKind::Unauthorized) {
      io.err << prefix << "access denied: " << error.describe() << "\n";
    } else {
      io.err << prefix << error.describe() << "\n";
    }
    return exitForReadError(error);
  }
  workload.input = std::move(*input);
  return workload;
}

}  // namespace restarter::cli
