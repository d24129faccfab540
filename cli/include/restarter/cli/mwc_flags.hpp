#pragma once
// The MutatingWebhookConfiguration settings install-mwc and serve-webhook --manage-configuration
// both take (--service-port, --timeout-seconds, --exclude-namespace, --only-namespace): declared
// once, so both commands build the same configuration from the same flags, defaults and help.
// The defaults are webhook::MwcOptions' own. Also --service-namespace, which the webhook commands
// (serve-webhook, install-mwc, gen-certs) take for the webhook Service's namespace.

#include <string>

#include "restarter/webhook/mwc.hpp"

namespace restarter::cli {

class FlagTable;

// Adds the four flags bound to `out` (name, clientConfig and caBundle are left alone):
// --service-port 1-65535, --timeout-seconds 1-30 (the apiserver's bounds), and the rule that the
// two namespace flags exclude each other. `helpPrefix` starts each help text (e.g. "with
// --manage-configuration: ").
void addMwcShapeFlags(FlagTable& table, webhook::MwcOptions& out, const std::string& helpPrefix);

// Adds --service-namespace bound to `out` (help `help`) and its deprecated spelling --namespace,
// which in every other subcommand keeps kubectl's meaning.
void addServiceNamespaceFlag(FlagTable& table, std::string& out, const std::string& help);

}  // namespace restarter::cli
