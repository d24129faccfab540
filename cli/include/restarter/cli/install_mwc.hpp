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

struct InstallMwcOptions {
  webhook::MwcOptions mwc;
  std::string caBundleFile;    // PEM file
  std::string caBundleSecret;  // NAMESPACE/NAME: its ca-bundle.crt, else its ca.crt
  bool dryRun = false;
  bool remove = false;
  std::string kubeconfig;
  std::string context;
};

std::optional<int> parseInstallMwcFlags(const std::vector<std::string>& args, Io& io, InstallMwcOptions& out);
int runInstallMwc(InstallMwcOptions options, Io& io);
Subcommand installMwcCommand();

}  // namespace restarter::cli
