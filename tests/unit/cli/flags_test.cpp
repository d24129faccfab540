// Every subcommand's flags, walked: a flag name means one thing in every subcommand, is declared
// once per subcommand, and an old spelling lives on only as a deprecated alias of its new name.

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "restarter/cli/flags.hpp"
#include "restarter/cli/subcommand.hpp"

using namespace restarter::cli;

namespace {

// What each flag name means, in one line, whichever subcommand declares it. A new flag is added
// here with its meaning; a flag that would mean something else needs a new name.
const std::map<std::string, std::string> kMeanings = {
    {"help", "show the subcommand's help"},
    {"kubeconfig", "the kubeconfig file (kube_flags.cpp)"},
    {"context", "the kubeconfig context (kube_flags.cpp)"},
    {"namespace", "kubectl's -n: the namespace(s) the command works in"},
    {"output", "output format"},
    {"watch", "keep printing as things change"},
    {"no-color", "never colour the output"},
    {"target", "the positional KIND/NAME"},
    {"dry-run", "write nothing; show what would be written"},
    {"debounce", "the controller's wait after a first change"},
    {"min-rollout-interval", "the least time between two rollouts of one workload"},
    {"max-concurrent-rollouts", "the most rollouts by restarter in progress at once, fleet-wide"},
    {"leader-elect", "run only while holding the Lease (a bool)"},
    {"leader-election-namespace", "namespace of the Lease"},
    {"leader-election-id", "name of the Lease"},
    {"metrics-bind-address", "plain HTTP /metrics address"},
    {"health-probe-bind-address", "plain HTTP /healthz and /readyz address"},
    {"max-writes-per-second", "global write rate limit"},
    {"write-burst", "writes allowed at once"},
    {"log-format", "text or json logs"},
    {"log-level", "least log level written"},
    {"bind-address", "the webhook's HTTPS host"},
    {"port", "the webhook's HTTPS port"},
    {"cert-dir", "serve certificate files from this directory"},
    {"service", "the webhook Service's name"},
    {"service-namespace", "the webhook Service's namespace"},
    {"cluster-domain", "the cluster DNS domain"},
    {"webhook-url", "the URL the apiserver calls, out of cluster"},
    {"secret-name", "the Secret holding the managed certificates"},
    {"secret", "the Secret gen-certs writes the certificates into"},
    {"secret-namespace", "the namespace of the certificates' Secret"},
    {"configuration-name", "the MutatingWebhookConfiguration's name"},
    {"name", "the MutatingWebhookConfiguration's name (install-mwc)"},
    {"manage-configuration", "serve-webhook keeps the MutatingWebhookConfiguration"},
    {"service-port", "the webhook Service's port"},
    {"timeout-seconds", "the configuration's timeoutSeconds"},
    {"exclude-namespace", "a namespace never sent to the webhook"},
    {"only-namespace", "a namespace sent to the webhook"},
    {"validity", "the serving certificate's lifetime"},
    {"ca-validity", "the CA's lifetime"},
    {"ca-propagation", "how long a new CA is published before use"},
    {"key-type", "the certificates' key type"},
    {"cert-check-interval", "how often certificates are checked"},
    {"lookup-timeout", "deadline of the webhook's reference lookups"},
    {"threads", "the webhook's worker threads"},
    {"max-lookups-per-review", "the most lookups one AdmissionReview may cause"},
    {"max-lookups-per-second", "global limit on the webhook's lookups per second"},
    {"lookup-burst", "lookups allowed at once before the rate applies"},
    {"lookup-share", "the share of the lookup rate and burst one namespace's reviews may take"},
    {"client-ca-file", "the CA a webhook caller's client certificate must chain to"},
    {"client-allowed-names", "the client certificate names a webhook caller may have"},
    {"out-dir", "directory gen-certs writes to"},
    {"dns", "a DNS name for the certificate"},
    {"ip", "an IP address for the certificate"},
    {"force", "overwrite what exists"},
    {"print-ca-bundle", "print the caBundle value"},
    {"ca-bundle-file", "a PEM file with the CA bundle"},
    {"ca-bundle-secret", "a Secret holding the CA bundle"},
    {"delete", "delete the configuration"},
    {"content-aware", "which referenced kinds' content is read to tell a metadata-only change"},
    {"digest-key-secret", "the Secret holding the key of content digests"},
    {"digest-key-namespace", "namespace of --digest-key-secret"},
    {"reloader-annotations", "also manage workloads opted in with Reloader's annotations (a bool)"},
    {"auto-reload-all", "with --reloader-annotations: Reloader's --auto-reload-all (a bool)"},
    {"argo-rollouts", "also manage Argo Rollouts' Rollouts, watched while their CRD is installed (a bool)"},
    {"crd-check-interval", "how often a missing CRD of a managed kind is looked for (a duration)"},
    {"roll-on-opt-in", "roll a workload at opt-in instead of recording the baseline its pods run with"},
    {"ondelete-ready-timeout", "when a replacement pod of an OnDelete roll counts as stuck"},
    {"rollout-window", "when a workload without its own window annotation may start a rollout"},
    {"all-namespaces", "kubectl's -A: every namespace"},
    {"selector", "kubectl's -l: a further label selector"},
    {"fail-if-pending", "exit 1 while a restart is due"},
    {"now", "roll: consult no gate (the rollout hold, a window, the queue) for this one workload"},
    {"finish", "end a rotation of the digest key"},
};

// Old spellings kept working (they warn): old name -> its new name. Nothing else may be deprecated.
const std::map<std::string, std::string> kDeprecated = {
    {"health-bind-address", "health-probe-bind-address"},
    {"namespace", "service-namespace"},
};

// Flags declared once for every subcommand (kube_flags.cpp): the same help text everywhere.
const std::set<std::string> kOneDeclaration = {"kubeconfig", "context"};

struct Declaration {
  std::string subcommand;
  FlagInfo flag;
};

}  // namespace

TEST_CASE("every flag name means one thing in every subcommand", "[cli][flags]") {
  std::ostringstream out, err;
  Io io{out, err, "restarter"};
  std::map<std::string, Declaration> byName;       // first non-deprecated declaration of each name
  std::map<std::string, std::string> longByShort;  // one-letter name -> long name
  for (const Subcommand& sub : subcommands()) {
    INFO(sub.name);
    REQUIRE(sub.flags);
    std::set<std::string> names;
    std::set<std::string> shorts;
    const std::vector<FlagInfo> flags = sub.flags(io);
    CHECK(flags.size() > 1);
    for (const FlagInfo& flag : flags) {
      INFO("--" << flag.name);
      CHECK(names.insert(flag.name).second);  // declared once
      if (!flag.shortName.empty()) {
        CHECK(shorts.insert(flag.shortName).second);
        const auto [it, inserted] = longByShort.emplace(flag.shortName, flag.name);
        CHECK(it->second == flag.name);  // -x is one flag everywhere
      }
      if (flag.help.rfind("deprecated:", 0) == 0) {
        const auto deprecated = kDeprecated.find(flag.name);
        REQUIRE(deprecated != kDeprecated.end());
        CHECK(flag.help == deprecatedHelp(deprecated->second));
        continue;
      }
      CHECK(kMeanings.count(flag.name) == 1);  // say what a new flag means in kMeanings
      const auto [first, inserted] = byName.emplace(flag.name, Declaration{sub.name, flag});
      if (inserted) continue;
      INFO("also declared by " << first->second.subcommand);
      CHECK(first->second.flag.takesValue == flag.takesValue);  // a switch here, a value there: two things
      if (kOneDeclaration.count(flag.name) > 0) CHECK(first->second.flag.help == flag.help);
    }
    // A deprecated spelling lives beside its new name, never without it.
    for (const FlagInfo& flag : flags) {
      if (flag.help.rfind("deprecated:", 0) == 0) {
        INFO("--" << flag.name);
        CHECK(names.count(kDeprecated.at(flag.name)) == 1);
      }
    }
  }
  for (const std::string& name : kOneDeclaration) CHECK(byName.count(name) == 1);
}

TEST_CASE("every subcommand that talks to the API takes --kubeconfig and --context", "[cli][flags]") {
  std::ostringstream out, err;
  Io io{out, err, "restarter"};
  for (const Subcommand& sub : subcommands()) {
    INFO(sub.name);
    // `version` reads only the binary (unlike kubectl's, it asks no server).
    if (sub.name == "version") continue;
    std::set<std::string> names;
    for (const FlagInfo& flag : sub.flags(io)) names.insert(flag.name);
    CHECK(names.count("kubeconfig") == 1);
    CHECK(names.count("context") == 1);
  }
}

TEST_CASE("every duration flag reads one syntax and says which flag was wrong", "[cli][flags]") {
  // Each is a FlagTable::duration row (core::parseDuration): same text, same answer everywhere.
  const std::set<std::string> durations = {"debounce",       "min-rollout-interval",  "validity",
                                           "ca-validity",    "ca-propagation",        "cert-check-interval",
                                           "lookup-timeout", "ondelete-ready-timeout"};
  std::ostringstream out, err;
  Io io{out, err, "restarter"};
  int checked = 0;
  for (const Subcommand& sub : subcommands()) {
    for (const FlagInfo& flag : sub.flags(io)) {
      if (durations.count(flag.name) == 0) continue;
      INFO(sub.name << " --" << flag.name);
      std::ostringstream flagOut, flagErr;
      Io flagIo{flagOut, flagErr, "restarter"};
      std::vector<std::string> args = {"--" + flag.name, "1.5h"};
      if (sub.name == "explain-restart") args.push_back("statefulset/web");  // its one positional
      CHECK(sub.run(args, flagIo) == kExitUsage);
      CHECK_THAT(flagErr.str(),
                 Catch::StartsWith("restarter " + sub.name + ": --" + flag.name + ": not a duration"));
      ++checked;
    }
  }
  CHECK(checked >= 8);
}

namespace {

// docs/configuration.md's "Every flag, by subcommand": subcommand -> flag long name -> its row's
// default column (backticks dropped).
std::map<std::string, std::map<std::string, std::string>> documentedFlags() {
  std::ifstream doc(std::string(RESTARTER_SOURCE_DIR) + "/docs/configuration.md");
  REQUIRE(doc);
  std::map<std::string, std::map<std::string, std::string>> documented;
  const std::regex section("^### (\\S+) flags$");
  const std::regex row("^\\| `[^`]*?--([a-z0-9-]+)[^`]*` \\| ([^|]*) \\|");
  bool inReference = false;
  std::string subcommand;
  std::string line;
  while (std::getline(doc, line)) {
    if (line.rfind("## ", 0) == 0) inReference = line == "## Every flag, by subcommand";
    if (!inReference) continue;
    std::smatch match;
    if (std::regex_match(line, match, section)) {
      subcommand = match[1];
      documented[subcommand];
    } else if (!subcommand.empty() && std::regex_search(line, match, row)) {
      std::string value = match[2];
      value.erase(std::remove(value.begin(), value.end(), '`'), value.end());
      while (!value.empty() && value.back() == ' ') value.pop_back();
      documented[subcommand][match[1]] = value;
    }
  }
  return documented;
}

}  // namespace

TEST_CASE("the flag reference in the docs lists every flag with the default the code has", "[cli][flags]") {
  // The defaults live in the options structs (flag_table.hpp); the docs may not drift from them.
  std::ostringstream out, err;
  Io io{out, err, "restarter"};
  const auto documented = documentedFlags();
  for (const Subcommand& sub : subcommands()) {
    INFO(sub.name);
    const auto section = documented.find(sub.name);
    REQUIRE(section != documented.end());
    std::set<std::string> declared;
    for (const FlagInfo& flag : sub.flags(io)) {
      if (flag.name == "help" || flag.name == "target") continue;
      declared.insert(flag.name);
      INFO("--" << flag.name);
      const auto row = section->second.find(flag.name);
      // Every flag has its row (a deprecated spelling may be told in its new name's row instead).
      if (flag.help.rfind("deprecated:", 0) == 0 && row == section->second.end()) continue;
      CHECK(row != section->second.end());
      if (row == section->second.end() || !flag.takesValue) continue;
      CHECK(row->second == flag.defaultValue);
    }
    for (const auto& [name, value] : section->second) {
      INFO("documented --" << name);
      CHECK(declared.count(name) == 1);  // no row for a flag the subcommand does not take
    }
  }
}
