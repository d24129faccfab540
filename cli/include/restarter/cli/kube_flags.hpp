#pragma once
// The kubectl-style connection flags, declared once here for every subcommand that talks to the
// API: --kubeconfig and --context (addConnectionFlags), plus -n/--namespace with kubectl's meaning
// (addKubeFlags), resolved exactly as kubectl resolves them (lib/kube/config.hpp: KUBECONFIG
// merging, in-cluster fallback, exec credential plugins). serve-controller declares its own
// repeatable -n/--namespace (the namespaces it works in), the same meaning for several.

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

// Adds --kubeconfig and --context to `options`, in the "Connection" help group.
void addConnectionFlags(cxxopts::Options& options);

// Adds --kubeconfig, --context and -n/--namespace to `options`.
void addKubeFlags(cxxopts::Options& options);

// The load options from parsed addConnectionFlags: --kubeconfig and --context when given.
kube::LoadOptions connectionLoadOptions(const cxxopts::ParseResult& flags);

// The load options from parsed addKubeFlags: connectionLoadOptions and -n/--namespace.
kube::LoadOptions kubeLoadOptions(const cxxopts::ParseResult& flags);

}  // namespace restarter::cli
