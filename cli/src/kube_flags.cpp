#include "restarter/cli/kube_flags.hpp"

#include "restarter/cli/flag_table.hpp"

namespace restarter::cli {

void addConnectionFlags(FlagTable& table, std::string& kubeconfig, std::string& context) {
  table.group("Connection")
      .text({"kubeconfig", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)",
             "FILE"},
            kubeconfig)
      .text({"context", "kubeconfig context to use (default: its current-context)", "NAME"}, context)
      .group("");
}

void addKubeFlags(FlagTable& table, kube::LoadOptions& load) {
  addConnectionFlags(table, load.kubeconfigPath, load.context);
  table.group("Connection")
      .text({"n,namespace", "namespace (default: the context's, else \"default\")", "NS"}, load.namespace_)
      .group("");
}

}  // namespace restarter::cli
