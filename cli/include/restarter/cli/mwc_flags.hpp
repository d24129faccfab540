#pragma once
// The MutatingWebhookConfiguration settings install-mwc and serve-webhook --manage-configuration
// both take (--service-port, --timeout-seconds, --exclude-namespace, --only-namespace): declared
// once, so both commands build the same configuration from the same flags, defaults and help.
// The defaults are webhook::MwcOptions' own. Also --service-namespace, which the webhook commands
// (serve-webhook, install-mwc, gen-certs) take for the webhook Service's namespace.

#include <optional>
#include <string>

#include "restarter/cli/app.hpp"
#include "restarter/webhook/mwc.hpp"

namespace cxxopts {
class Options;
class ParseResult;
}  // namespace cxxopts

namespace restarter::cli {

// Adds the four flags; `helpPrefix` starts each help text (e.g. "with --manage-configuration: ").
void addMwcShapeFlags(cxxopts::Options& options, const std::string& helpPrefix);

// Adds --service-namespace (default webhook::kDefaultServiceNamespace, help `help`) and its
// deprecated spelling --namespace, which in every other subcommand keeps kubectl's meaning.
void addServiceNamespaceFlag(cxxopts::Options& options, const std::string& help);

// Reads --service-namespace (or --namespace, warning) into `out`; the usage problem when both are given.
std::optional<std::string> readServiceNamespace(const cxxopts::ParseResult& flags, Io& io, std::string& out);

// Copies the four flags into `out` (name, clientConfig and caBundle are left alone). Returns a
// usage error naming the flag when a value is out of range (--service-port 1-65535,
// --timeout-seconds 1-30, both namespace flags given). Throws cxxopts' exceptions on values of the
// wrong type, as reading any flag does.
std::optional<std::string> readMwcShapeFlags(const cxxopts::ParseResult& flags, webhook::MwcOptions& out);

}  // namespace restarter::cli
