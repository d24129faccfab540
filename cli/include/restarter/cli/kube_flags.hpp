#pragma once
// The kubectl-style connection flags every API-talking subcommand shares: --kubeconfig, --context
// and -n/--namespace, resolved exactly as kubectl resolves them (lib/kube/config.hpp: KUBECONFIG
// merging, in-cluster fallback, exec credential plugins).

#include <memory>
#include <string>

#include "restarter/core/result.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/config.hpp"

namespace cxxopts {
class Options;
class ParseResult;
}  // namespace cxxopts

namespace restarter::cli {

// Adds --kubeconfig, --context and -n/--namespace to `options`.
void addKubeFlags(cxxopts::Options& options);

// The load options from parsed flags.
kube::LoadOptions kubeLoadOptions(const cxxopts::ParseResult& flags);

}  // namespace restarter::cli
