#include "restarter/cli/kube_flags.hpp"

#include <cxxopts.hpp>

namespace restarter::cli {

void addConnectionFlags(cxxopts::Options& options) {
  options.add_options("Connection")(
      "kubeconfig", "kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)",
      cxxopts::value<std::string>(),
      "FILE")("context", "kubeconfig context to use (default: its current-context)",
              cxxopts::value<std::string>(), "NAME");
}

void addKubeFlags(cxxopts::Options& options) {
  addConnectionFlags(options);
  options.add_options("Connection")("n,namespace", "namespace (default: the context's, else \"default\")",
                                    cxxopts::value<std::string>(), "NS");
}

kube::LoadOptions connectionLoadOptions(const cxxopts::ParseResult& flags) {
  kube::LoadOptions options;
  if (flags.count("kubeconfig") > 0) options.kubeconfigPath = flags["kubeconfig"].as<std::string>();
  if (flags.count("context") > 0) options.context = flags["context"].as<std::string>();
  return options;
}

kube::LoadOptions kubeLoadOptions(const cxxopts::ParseResult& flags) {
  kube::LoadOptions options = connectionLoadOptions(flags);
  if (flags.count("namespace") > 0) options.namespace_ = flags["namespace"].as<std::string>();
  return options;
}

}  // namespace restarter::cli
