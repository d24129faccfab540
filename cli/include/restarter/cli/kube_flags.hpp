#pragma once
// The kubectl-style connection flags, declared once here for every subcommand that talks to the
// API: --kubeconfig and --context (addConnectionFlags), plus -n/--namespace with kubectl's meaning
// (addKubeFlags), resolved exactly as kubectl resolves them (lib/kube/config.hpp: KUBECONFIG
// merging, in-cluster fallback, exec credential plugins). serve-controller declares its own
// repeatable -n/--namespace (the namespaces it works in), the same meaning for several.

#include <string>

#include "restarter/kube/config.hpp"

namespace restarter::cli {

class FlagTable;

// Adds --kubeconfig and --context, in the "Connection" help group, bound to `kubeconfig` and
// `context` ("" when not given: kube::loadConfig's defaults).
void addConnectionFlags(FlagTable& table, std::string& kubeconfig, std::string& context);

// Adds --kubeconfig, --context and -n/--namespace, bound to `load`.
void addKubeFlags(FlagTable& table, kube::LoadOptions& load);

}  // namespace restarter::cli
