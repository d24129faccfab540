#include "restarter/cli/serve_webhook.hpp"

#include <charconv>
#include <cstdint>
#include <ostream>
#include <sstream>

#include <cxxopts.hpp>

#include "command_flags.hpp"
#include "restarter/cli/flag_table.hpp"
#include "restarter/cli/flags.hpp"
#include "restarter/cli/kube_flags.hpp"
#include "restarter/cli/mwc_flags.hpp"
#include "restarter/cli/selection_flags.hpp"
#include "restarter/core/rotation.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/config.hpp"
#include "restarter/kube/files.hpp"
#include "restarter/runtime/allocator.hpp"
#include "restarter/runtime/manager.hpp"
#include "restarter/webhook/admission.hpp"
#include "restarter/webhook/mwc.hpp"
#include "restarter/webhook/service.hpp"

namespace restarter::cli {

// This file's own names, in a namespace of their own: a unity batch holds several subcommands
// (cmake/unity.cmake).
namespace serve_webhook {
namespace {

constexpr const char* kName = "serve-webhook";

// --lookup-burst: a whole number of lookups, at least 1, kept as the token bucket's double.
core::Result<double> parseBurst(const std::string& text) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 1 || value > INT32_MAX) {
    return core::makeError(core::ErrorKind::InvalidInput,
                           "must be a whole number, at least 1, got \"" + text + "\"");
  }
  return static_cast<double>(value);
}

// --lookup-share: a fraction above 0, at most 1.
core::Result<double> parseShare(const std::string& text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !(value > 0 && value <= 1)) {
    return core::makeError(core::ErrorKind::InvalidInput,
                           "must be a number above 0 and at most 1, got \"" + text + "\"");
  }
  return value;
}

// serve-webhook's flags, bound to `out` (whose values are the defaults), with the rules that need
// several of them.
FlagTable flagTable(ServeWebhookOptions& out) {
  FlagTable table;
  table.text({"bind-address", "address to serve HTTPS on", "HOST"}, out.server.address.host)
      .integer({"port", "port to serve HTTPS on (0: any free port, logged)", "PORT"}, out.server.address.port,
               {.min = 0, .max = 65535})
      .parsed<std::optional<obs::BindAddress>>(
          {"metrics-bind-address", "plain HTTP /metrics address, or 0 to disable", "ADDR"}, out.metricsAddress,
          obs::parseBindAddress, obs::formatBindAddress)
      .parsed<std::optional<obs::BindAddress>>(
          {"health-probe-bind-address", "plain HTTP /healthz and /readyz address, or 0 to disable", "ADDR"},
          out.healthAddress, obs::parseBindAddress, obs::formatBindAddress)
      .text({"cert-dir",
             "serve tls.crt and tls.key from this directory (reloaded when they change) instead of "
             "managing certificates",
             "DIR"},
            out.server.certDir)
      .text({"service", "webhook Service name (in cluster): the certificate's DNS names", "NAME"}, out.service)
      .text({"cluster-domain", "cluster DNS domain for the Service's DNS names", "DOMAIN"}, out.clusterDomain)
      .text({"webhook-url",
             "out of cluster: the URL the apiserver calls, https://HOST[:PORT]/mutate; its host is the "
             "certificate's only name (an IP SAN for an address)",
             "URL"},
            out.webhookUrl)
      .text({"secret-name", "Secret holding the managed certificates", "NAME"}, out.secretName)
      .text({"secret-namespace", "namespace of that Secret (default: --service-namespace)", "NS"},
            out.secretNamespace)
      .text({"configuration-name", "MutatingWebhookConfiguration to publish the CA bundle into", "NAME"},
            out.configurationName)
      .toggle({"manage-configuration",
               "create the MutatingWebhookConfiguration --configuration-name and keep it (by Service, or by "
               "--webhook-url; caBundle included), as install-mwc would build it; not with --cert-dir",
               ""},
              out.manageConfiguration);
  addServiceNamespaceFlag(table, out.serviceNamespace,
                          "webhook Service namespace; also the Secret's unless --secret-namespace");
  addMwcShapeFlags(table, out.configuration, "with --manage-configuration: ");
  table
      .duration({"validity", "serving certificate lifetime; renewed at 2/3 of it", "DURATION"},
                kPositiveDuration, out.validity)
      .duration({"ca-validity", "CA lifetime; a next CA is staged at 2/3 of it", "DURATION"}, kPositiveDuration,
                out.caValidity)
      .duration({"ca-propagation", "how long a new CA is published before certificates signed by it are served",
                 "DURATION"},
                kPositiveDuration, out.caPropagation)
      .parsed<certs::KeyType>({"key-type", "ecdsa-p256, ecdsa-p384, rsa-2048 or rsa-4096", "TYPE"}, out.keyType,
                              certs::parseKeyType, certs::keyTypeName)
      .duration({"cert-check-interval",
                 "how often the certificates (Secret or files) are checked, by wall-clock time", "DURATION"},
                kPositiveDuration, out.server.certCheckInterval)
      .duration({"lookup-timeout",
                 "deadline for reading the referenced ConfigMaps and Secrets; keep it below the "
                 "configuration's timeoutSeconds",
                 "DURATION"},
                kPositiveDuration, out.server.lookupTimeout);
  addContentAwareFlag(
      table, out.server.contentAware,
      "whose content the lookups read, to write at admission the content record serve-controller "
      "--content-aware keeps (set both alike): all (ConfigMaps and Secrets: their data reaches the "
      "webhook, hashed and dropped at once), configmaps or off (metadata only)");
  addRollOnOptInFlag(table, out.server.rollOnOptIn);
  table
      .integer({"threads",
                "threads answering AdmissionReviews (connections hold none; 4 x N more may queue, 503 "
                "beyond); as many more look up references (a fixed pool)",
                "N"},
               out.server.threads, {.min = 1, .max = 1024})
      .integer({"max-lookups-per-review",
                "the most ConfigMaps and Secrets one AdmissionReview may have looked up; a review naming "
                "more is answered at once without a patch (the controller writes its annotations) and "
                "counted in restarter_webhook_lookup_refusals_total",
                "N"},
               out.server.lookupLimits.maxPerReview, {.min = 1})
      .positive({"max-lookups-per-second",
                 "global limit on reference lookups (API GETs) per second, whoever sends the reviews; a "
                 "review whose lookups do not fit is answered at once without a patch (the controller "
                 "writes its annotations)",
                 "N"},
                out.server.lookupLimits.perSecond)
      .parsed<double>({"lookup-burst",
                       "lookups allowed at once before --max-lookups-per-second applies; a tenth is kept for "
                       "reviews of few references, so a review of more than 90% of it is never looked up",
                       "N"},
                      out.server.lookupLimits.burst, parseBurst,
                      [](const double& burst) { return std::to_string(static_cast<std::int64_t>(burst)); })
      .parsed<double>(
          {"lookup-share",
           "the share of --max-lookups-per-second and of --lookup-burst (at least "
           "--max-lookups-per-review) that the reviews of one namespace may take; a review over its "
           "namespace's share is answered at once without a patch, so a flood of reviews of one "
           "namespace leaves the others the rest. 1: no share",
           "F"},
          out.server.lookupLimits.share, parseShare,
          [](const double& share) {
            std::ostringstream text;
            text << share;
            return text.str();
          })
      .text({"client-ca-file",
             "require every caller to present a TLS client certificate signed by a CA in this PEM file (the "
             "apiserver's certificate for webhooks, given in its admission configuration); connections "
             "without one are refused at the handshake. Read at start. Empty: any caller",
             "FILE"},
            out.clientCaFile)
      .list({"client-allowed-names",
             "with --client-ca-file: accept only client certificates whose common name or a DNS "
             "subjectAltName is one of these (comma-separated, repeatable); empty: any the CA signed",
             "NAME"},
            out.server.clientAllowedNames);
  addLogFlags(table, out.logFormat, out.logLevel);
  addSelectionFlags(table, out.server.selection);
  addArgoRolloutsFlag(table, out.configuration.argoRollouts);
  addDigestKeyFlags(table, out.server.digestKey,
                    "only read (serve-controller creates it); until it is read, reviews that reference what "
                    "--content-aware reads are not patched");
  addConnectionFlags(table, out.kubeconfig, out.context);
  table
      .rule([&out](const FlagTable&) {
        if (!out.server.clientAllowedNames.empty() && out.clientCaFile.empty())
          return flagProblem("--client-allowed-names needs --client-ca-file");
        return core::okStatus();
      })
      .rule([&out](const FlagTable&) {
        // Only managed certificates are rotated; with --cert-dir these durations are unused.
        if (!out.server.certDir.empty()) return core::okStatus();
        const std::vector<std::string> problems = core::checkRotationTimings(
            {.validity = out.validity,
             .caValidity = out.caValidity,
             .caPropagation = out.caPropagation,
             .checkInterval = out.server.certCheckInterval},
            {"--validity", "--ca-validity", "--ca-propagation", "--cert-check-interval"});
        if (!problems.empty()) return flagProblem(joinProblems(problems));
        if (auto names = servingNames(out); !names) return flagProblem(names.error().message);
        return core::okStatus();
      })
      .rule([&out](const FlagTable&) {
        if (!out.manageConfiguration) return core::okStatus();
        // The caBundle comes from the managed Secret; with --cert-dir there is none to publish.
        if (!out.server.certDir.empty())
          return flagProblem("--manage-configuration needs managed certificates (not --cert-dir)");
        if (out.configurationName.empty())
          return flagProblem("--manage-configuration needs a --configuration-name");
        if (auto built = managedConfiguration(out); !built)
          return flagProblem("--manage-configuration: " + built.error().message);
        return core::okStatus();
      });
  return table;
}

cxxopts::Options makeOptions(const Io& io, const FlagTable& table) {
  cxxopts::Options options(
      io.programName + " " + kName,
      "Serve the mutating admission webhook: admission.k8s.io/v1 AdmissionReviews over HTTPS on\n"
      "/mutate. Labeled StatefulSets, Deployments and DaemonSets get their restarter annotations\n"
      "on CREATE and UPDATE, computed from their ConfigMaps and Secrets read fresh from the API.\n"
      "Never denies: on any failure the object passes unchanged (the controller annotates later).\n"
      "Certificates are managed in a Secret (created, renewed, the CA rolled with overlap, the CA\n"
      "bundle published into the MutatingWebhookConfiguration) unless --cert-dir is given.\n");
  options.custom_help("[flags]");
  table.declare(options);
  return options;
}

const CommandFlags<ServeWebhookOptions> kFlags{kName, flagTable, makeOptions};

}  // namespace
}  // namespace serve_webhook

core::Result<webhook::ServingNames> servingNames(const ServeWebhookOptions& options) {
  return webhook::servingNames(options.webhookUrl, options.service, options.serviceNamespace,
                               options.clusterDomain);
}

core::Result<nlohmann::json> managedConfiguration(const ServeWebhookOptions& options) {
  webhook::MwcOptions mwc = options.configuration;
  mwc.name = options.configurationName;
  if (options.webhookUrl.empty()) {
    mwc.serviceName = options.service;
    mwc.serviceNamespace = options.serviceNamespace;
  } else {
    mwc.url = options.webhookUrl;
  }
  return webhook::buildMutatingWebhookConfiguration(mwc);
}

std::optional<int> parseServeWebhookFlags(const std::vector<std::string>& args, Io& io,
                                          ServeWebhookOptions& out) {
  const std::optional<int> exit = serve_webhook::kFlags.parse(args, io, out).flags.exitNow;
  // The managed configuration must send what the handler now calls ours.
  out.configuration.reloaderAnnotations = out.server.selection.reloaderAnnotations;
  return exit;
}

int runServeWebhook(const ServeWebhookOptions& options, Io& io) {
  // A request body is freed when its review is answered; this makes its memory leave the process
  // too, so the in-flight byte budget bounds the RSS (runtime/allocator.hpp).
  runtime::configureAllocator();
  obs::Logger log(io.err, options.logFormat, options.logLevel);
  obs::Registry registry;
  // First: blocks the signals before any other thread starts.
  runtime::ManagerOptions process;
  process.healthBind = options.healthAddress;
  process.metricsBind = options.metricsAddress;
  process.metricsPrefix = "restarter_webhook";
  runtime::Manager manager(std::move(process), log, registry);

  // API clients: one for certificates, one for lookups whose requests end at the lookup deadline.
  kube::LoadOptions load;
  load.kubeconfigPath = options.kubeconfig;
  load.context = options.context;
  auto config = kube::loadConfig(load);
  if (!config) {
    log.error("cannot load the Kubernetes configuration", {{"error", config.error().describe()}});
    return kExitFailure;
  }
  auto client = kube::Client::create(*config);
  kube::TransportOptions lookupTransport;
  lookupTransport.requestTimeout = options.server.lookupTimeout;
  lookupTransport.connectTimeout = options.server.lookupTimeout;
  auto lookupClient = kube::Client::create(*config, lookupTransport);
  if (!client || !lookupClient) {
    log.error("cannot create the Kubernetes client",
              {{"error", (client ? lookupClient.error() : client.error()).describe()}});
    return kExitFailure;
  }

  webhook::ServiceOptions service = options.server;
  if (!options.clientCaFile.empty()) {
    auto pem = kube::readFile(options.clientCaFile);
    if (pem) {
      auto parsed = certs::inspect(*pem);
      if (!parsed) pem = parsed.error();
    }
    if (!pem) {
      log.error("cannot read --client-ca-file",
                {{"file", options.clientCaFile}, {"error", pem.error().describe()}});
      return kExitUsage;
    }
    service.clientCaPem = *pem;
  }
  if (options.server.certDir.empty()) {
    auto names = servingNames(options);
    if (!names) {
      log.error("bad webhook names", {{"error", names.error().describe()}});
      return kExitUsage;
    }
    webhook::ManagedOptions& managed = service.managed;
    managed.secretNamespace =
        options.secretNamespace.empty() ? options.serviceNamespace : options.secretNamespace;
    managed.secretName = options.secretName;
    managed.configurationName = options.configurationName;
    managed.serving.dnsNames = names->dnsNames;
    managed.serving.ipAddresses = names->ipAddresses;
    managed.serving.validity = options.validity;
    managed.serving.keyType = options.keyType;
    managed.ca.validity = options.caValidity;
    managed.ca.keyType = options.keyType;
    managed.policy.caPropagation = options.caPropagation;
    if (options.manageConfiguration) {
      auto configuration = managedConfiguration(options);
      if (!configuration) {
        log.error("bad webhook configuration", {{"error", configuration.error().describe()}});
        return kExitUsage;
      }
      managed.configuration = std::move(configuration).value();
    }
  }

  webhook::Service webhook(std::move(service), **client, **lookupClient, log, registry, manager.http(),
                           base::systemClock());
  runtime::Runnable runnable;
  runnable.start = [&webhook](std::stop_token stop) { return webhook.start(stop); };
  runnable.ready = [&webhook] { return webhook.ready(); };
  runnable.run = [&webhook](std::stop_token stop) { return webhook.run(stop); };
  return manager.run(runnable) ? kExitOk : kExitFailure;
}

Subcommand serveWebhookCommand() {
  return Subcommand{serve_webhook::kName, "serve the mutating admission webhook (HTTPS, managed certificates)",
                    [](const std::vector<std::string>& args, Io& io) {
                      ServeWebhookOptions options;
                      if (auto exit = parseServeWebhookFlags(args, io, options)) return *exit;
                      return runServeWebhook(options, io);
                    },
                    [](const Io& io) { return serve_webhook::kFlags.describe(io); }};
}

}  // namespace restarter::cli
