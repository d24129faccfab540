#include "restarter/cli/kube_flags.hpp"

#include <cxxopts.hpp>

namespace restarter::cli {

void addKubeFlags(cxxopts::Options& options) {
  options.add_options("Connection")
      ("kubeconfig", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)",
       cxxopts::value<std::string>(), "FILE")
      ("context", "kubeconfig context to use (default: its current-context)",
       cxxopts::value<std::string>(), "NAME")
      ("n,namespace", "namespace (default: the context's, else \"default\")",
       cxxopts::value<std::string>(), "NS");
}

kube::LoadOptions kubeLoadOptions(const cxxopts::ParseResult& flags) {
  kube::LoadOptions options;
  if (flags.count("kubeconfig") > 0) options.kubeconfigPath = flags["kubeconfig"].as<std::string>();
  if (flags.count("context") > 0) options.context = flags["context"].as<std::string>();
  if (flags.count("namespace") > 0) options.namespace_ = flags["namespace"].as<std::string>();
  return options;
}

}  // namespace restarter::cli
