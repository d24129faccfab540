#include "restarter/cli/mwc_flags.hpp"

#include <vector>

// g++ 12 at -O2 reports a false -Wrestrict inside std::string, inlined into cxxopts' integer
// parsing in this small file (GCC bug 105651); nothing here copies overlapping memory.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
#include <cxxopts.hpp>

#include "restarter/cli/flags.hpp"

namespace restarter::cli {

void addMwcShapeFlags(cxxopts::Options& options, const std::string& helpPrefix) {
  const webhook::MwcOptions defaults;
  const auto help = [&helpPrefix](const char* text) { return std::string(helpPrefix).append(text); };
  options.add_options()("service-port", help("the webhook Service's port, which the apiserver calls"),
                        cxxopts::value<int>()->default_value(std::to_string(defaults.servicePort)), "PORT")(
      "timeout-seconds", help("how long the apiserver waits for the webhook (1-30)"),
      cxxopts::value<int>()->default_value(std::to_string(defaults.timeoutSeconds)),
      "N")("exclude-namespace", help("namespace never sent to the webhook (repeatable)"),
           cxxopts::value<std::vector<std::string>>(), "NS")(
      "only-namespace", help("send only these namespaces (repeatable; not with --exclude-namespace)"),
      cxxopts::value<std::vector<std::string>>(), "NS");
}

void addServiceNamespaceFlag(cxxopts::Options& options, const std::string& help) {
  options.add_options()("service-namespace", help,
                        cxxopts::value<std::string>()->default_value(webhook::kDefaultServiceNamespace), "NS");
  addDeprecatedAlias(options, "namespace", "service-namespace", "NS");
}

std::optional<std::string> readServiceNamespace(const cxxopts::ParseResult& flags, Io& io, std::string& out) {
  return readRenamedFlag(flags, io, "service-namespace", "namespace", out);
}

std::optional<std::string> readMwcShapeFlags(const cxxopts::ParseResult& flags, webhook::MwcOptions& out) {
  const int port = flags["service-port"].as<int>();
  if (port < 1 || port > 65535) return "--service-port must be 1-65535, got " + std::to_string(port);
  // The apiserver's own bounds for timeoutSeconds.
  const int timeout = flags["timeout-seconds"].as<int>();
  if (timeout < 1 || timeout > 30) return "--timeout-seconds must be 1-30, got " + std::to_string(timeout);
  if (flags.count("exclude-namespace") > 0 && flags.count("only-namespace") > 0) {
    return std::string("give --exclude-namespace or --only-namespace, not both");
  }
  out.servicePort = port;
  out.timeoutSeconds = timeout;
  if (flags.count("exclude-namespace") > 0)
    out.excludeNamespaces = flags["exclude-namespace"].as<std::vector<std::string>>();
  if (flags.count("only-namespace") > 0)
    out.onlyNamespaces = flags["only-namespace"].as<std::vector<std::string>>();
  return std::nullopt;
}

}  // namespace restarter::cli
