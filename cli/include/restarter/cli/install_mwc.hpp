#pragma once
// `restarter install-mwc`: creates or updates (server-side apply, field manager
// restarter.stackable.tech/install-mwc), prints (--dry-run) or deletes (--delete) the
// MutatingWebhookConfiguration that sends labeled workloads to serve-webhook. The settings and why
// each is what it is: lib/webhook/src/mwc.cpp.

#include <optional>
#include <string>
#include <vector>

#include "restarter/cli/subcommand.hpp"
#include "restarter/webhook/mwc.hpp"

namespace restarter::cli {

// The flags' defaults (flag_table.hpp): webhook::MwcOptions' own, in the Service namespace the
// other webhook commands default to.
struct InstallMwcOptions {
  webhook::MwcOptions mwc = [] {
    webhook::MwcOptions defaults;
    defaults.serviceNamespace = webhook::kDefaultServiceNamespace;
    return defaults;
  }();
  std::string caBundleFile;    // PEM file
  std::string caBundleSecret;  // NAMESPACE/NAME: its ca-bundle.crt, else its ca.crt
  bool dryRun = false;
  bool remove = false;
  std::string kubeconfig;
  std::string context;
};

// Parses the flags after `install-mwc`. Returns an exit code when the command must end now
// (--help: 0; a usage error, reported on io.err: 2), nothing when `out` is ready to run.
std::optional<int> parseInstallMwcFlags(const std::vector<std::string>& args, Io& io, InstallMwcOptions& out);
int runInstallMwc(InstallMwcOptions options, Io& io);
Subcommand installMwcCommand();

}  // namespace restarter::cli
