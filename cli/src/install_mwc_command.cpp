#include "restarter/cli/install_mwc.hpp"

#include <ostream>

#include <cxxopts.hpp>

#include "command_flags.hpp"
#include "restarter/certs/secret_data.hpp"
#include "restarter/cli/flag_table.hpp"
#include "restarter/cli/flags.hpp"
#include "restarter/cli/kube_flags.hpp"
#include "restarter/cli/mwc_flags.hpp"
#include "restarter/cli/selection_flags.hpp"
#include "restarter/core/yaml_writer.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/config.hpp"
#include "restarter/kube/files.hpp"
#include "restarter/webhook/certificates.hpp"

namespace restarter::cli {

// This file's own names, in a namespace of their own: a unity batch holds several subcommands
// (cmake/unity.cmake).
namespace install_mwc {
namespace {

constexpr const char* kName = "install-mwc";

// install-mwc's flags, bound to `out` (whose values are the defaults), with the rules that need
// several of them.
FlagTable flagTable(InstallMwcOptions& out) {
  FlagTable table;
  table.text({"name", "configuration name", "NAME"}, out.mwc.name)
      .text({"service", "webhook Service name (in cluster)", "NAME"}, out.mwc.serviceName)
      .text({"webhook-url", "out of cluster: https://HOST[:PORT]/mutate", "URL"}, out.mwc.url)
      .text({"ca-bundle-file",
             "PEM file with the CA(s) that signed the serving certificate (gen-certs' ca.crt)", "FILE"},
            out.caBundleFile)
      .text({"ca-bundle-secret", "NAMESPACE/NAME of a Secret holding ca-bundle.crt or ca.crt", "NS/NAME"},
            out.caBundleSecret);
  addServiceNamespaceFlag(table, out.mwc.serviceNamespace, "webhook Service namespace");
  addMwcShapeFlags(table, out.mwc, "");
  addReloaderAnnotationsFlag(table, out.mwc.reloaderAnnotations);
  addArgoRolloutsFlag(table, out.mwc.argoRollouts);
  table.toggle({"dry-run", "print the configuration as YAML instead of applying it", ""}, out.dryRun)
      .toggle({"delete", "delete the configuration", ""}, out.remove);
  addConnectionFlags(table, out.kubeconfig, out.context);
  table
      .rule([&out](const FlagTable&) {
        if (out.dryRun && out.remove) return flagProblem("--dry-run and --delete exclude each other");
        if (!out.caBundleFile.empty() && !out.caBundleSecret.empty())
          return flagProblem("give --ca-bundle-file or --ca-bundle-secret, not both");
        if (!out.caBundleSecret.empty() && out.caBundleSecret.find('/') == std::string::npos)
          return flagProblem("--ca-bundle-secret must be NAMESPACE/NAME");
        return core::okStatus();
      })
      .rule([&out](const FlagTable&) {
        if (out.remove) return core::okStatus();
        // The shape, checked now (a usage error); the bundle, read later, does not change it.
        if (auto built = webhook::buildMutatingWebhookConfiguration(out.mwc); !built)
          return flagProblem(built.error().message);
        return core::okStatus();
      });
  return table;
}

cxxopts::Options makeOptions(const Io& io, const FlagTable& table) {
  cxxopts::Options options(
      io.programName + " " + kName,
      "Create or update the MutatingWebhookConfiguration that sends labeled StatefulSets,\n"
      "Deployments and DaemonSets (CREATE, UPDATE) to serve-webhook: failurePolicy Ignore,\n"
      "sideEffects None, admissionReviewVersions [v1], reinvocationPolicy IfNeeded, an objectSelector\n"
      "on restarter.stackable.tech/enabled=true. Applied by server-side apply. Without a CA bundle\n"
      "flag, serve-webhook's managed certificates publish it.\n");
  options.custom_help("[flags]");
  table.declare(options);
  return options;
}

const CommandFlags<InstallMwcOptions> kFlags{kName, flagTable, makeOptions};

core::Result<std::unique_ptr<kube::Client>> makeClient(const InstallMwcOptions& options) {
  kube::LoadOptions load;
  load.kubeconfigPath = options.kubeconfig;
  load.context = options.context;
  return kube::Client::connect(load);
}

}  // namespace
}  // namespace install_mwc

std::optional<int> parseInstallMwcFlags(const std::vector<std::string>& args, Io& io, InstallMwcOptions& out) {
  return install_mwc::kFlags.parse(args, io, out).flags.exitNow;
}

int runInstallMwc(InstallMwcOptions options, Io& io) {
  const std::string prefix = io.programName + " " + install_mwc::kName + ": ";
  auto fail = [&](const std::string& message) {
    io.err << prefix << message << "\n";
    return kExitFailure;
  };
  const auto resource = kube::resources::mutatingWebhookConfigurations();
  std::unique_ptr<kube::Client> client;
  if (!options.dryRun || !options.caBundleSecret.empty()) {
    auto made = install_mwc::makeClient(options);
    if (!made) return fail(made.error().describe());
    client = std::move(made).value();
  }
  if (options.remove) {
    core::Status removed = client->remove(resource, "", options.mwc.name);
    if (!removed && removed.error().kind != core::ErrorKind::NotFound) return fail(removed.error().describe());
    io.err << "mutatingwebhookconfiguration " << options.mwc.name << (removed ? " deleted\n" : " not found\n");
    return kExitOk;
  }
  if (!options.caBundleFile.empty()) {
    auto pem = kube::readFile(options.caBundleFile);
    if (!pem) return fail(pem.error().describe());
    options.mwc.caBundlePem = *pem;
  } else if (!options.caBundleSecret.empty()) {
    const auto slash = options.caBundleSecret.find('/');
    const std::string ns = options.caBundleSecret.substr(0, slash);
    const std::string name = options.caBundleSecret.substr(slash + 1);
    auto secret = client->get(kube::resources::secrets(), ns, name);
    if (!secret) return fail(secret.error().describe());
    const certs::SecretPems pems = certs::decodeSecretData(*secret);
    for (const char* key : {certs::kCaBundleKey, certs::kCaCertKey}) {
      if (auto found = pems.find(key); found != pems.end()) {
        options.mwc.caBundlePem = found->second;
        break;
      }
    }
    if (options.mwc.caBundlePem.empty())
      return fail("Secret " + options.caBundleSecret + " has no ca-bundle.crt or ca.crt");
  }
  if (!options.mwc.caBundlePem.empty()) {
    if (auto info = certs::inspect(options.mwc.caBundlePem); !info) {
      return fail("the CA bundle is not PEM certificates: " + info.error().describe());
    }
  }
  auto object = webhook::buildMutatingWebhookConfiguration(options.mwc);
  if (!object) return fail(object.error().describe());
  if (options.dryRun) {
    io.out << core::toYaml(*object);
    return kExitOk;
  }
  kube::ApplyOptions apply;
  apply.fieldManager = webhook::kInstallFieldManager;
  // install-mwc is the owner of these settings: take them back from whoever changed them.
  apply.force = true;
  auto applied = client->apply(resource, "", options.mwc.name, *object, apply);
  if (!applied) return fail(applied.error().describe());
  io.err << "mutatingwebhookconfiguration " << options.mwc.name << " applied\n";
  return kExitOk;
}

Subcommand installMwcCommand() {
  return Subcommand{install_mwc::kName, "create, update, print or delete the MutatingWebhookConfiguration",
                    [](const std::vector<std::string>& args, Io& io) {
                      InstallMwcOptions options;
                      if (auto exit = parseInstallMwcFlags(args, io, options)) return *exit;
                      return runInstallMwc(std::move(options), io);
                    },
                    [](const Io& io) { return install_mwc::kFlags.describe(io); }};
}

}  // namespace restarter::cli
