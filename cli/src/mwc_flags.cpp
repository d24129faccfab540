#include "restarter/cli/mwc_flags.hpp"

#include "restarter/cli/flag_table.hpp"

namespace restarter::cli {

void addMwcShapeFlags(FlagTable& table, webhook::MwcOptions& out, const std::string& helpPrefix) {
  const auto help = [&helpPrefix](const char* text) { return std::string(helpPrefix).append(text); };
  table
      .integer({"service-port", help("the webhook Service's port, which the apiserver calls"), "PORT"},
               out.servicePort, {.min = 1, .max = 65535})
      .integer({"timeout-seconds", help("how long the apiserver waits for the webhook (1-30)"), "N"},
               out.timeoutSeconds, {.min = 1, .max = 30})
      .list({"exclude-namespace", help("namespace never sent to the webhook (repeatable)"), "NS"},
            out.excludeNamespaces)
      .list({"only-namespace", help("send only these namespaces (repeatable; not with --exclude-namespace)"),
             "NS"},
            out.onlyNamespaces)
      .rule([&out](const FlagTable&) {
        if (!out.excludeNamespaces.empty() && !out.onlyNamespaces.empty()) {
          return flagProblem("give --exclude-namespace or --only-namespace, not both");
        }
        return core::okStatus();
      });
}

void addServiceNamespaceFlag(FlagTable& table, std::string& out, const std::string& help) {
  table.text({"service-namespace", help, "NS"}, out).deprecatedAlias("namespace", "service-namespace");
}

}  // namespace restarter::cli
