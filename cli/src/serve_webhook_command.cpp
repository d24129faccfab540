#include "restarter/cli/serve_webhook.hpp"

#include <ostream>

#include <cxxopts.hpp>

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

namespace {

constexpr const char* kName = "serve-webhook";

cxxopts::Options makeOptions(const Io& io) {
  cxxopts::Options options(
      io.programName + " " + kName,
      "Serve the mutating admission webhook: admission.k8s.io/v1 AdmissionReviews over HTTPS on\n"
      "/mutate. Labeled StatefulSets, Deployments and DaemonSets get their restarter annotations\n"
      "on CREATE and UPDATE, computed from their ConfigMaps and Secrets read fresh from the API.\n"
      "Never denies: on any failure the object passes unchanged (the controller annotates later).\n"
      "Certificates are managed in a Secret (created, renewed, the CA rolled with overlap, the CA\n"
      "bundle published into the MutatingWebhookConfiguration) unless --cert-dir is given.\n");
  options.custom_help("[flags]");
  options.add_options()("bind-address", "address to serve HTTPS on",
                        cxxopts::value<std::string>()->default_value("0.0.0.0"), "HOST")(
      "port", "port to serve HTTPS on (0: any free port, logged)", cxxopts::value<int>()->default_value("8443"),
      "PORT")("metrics-bind-address", "plain HTTP /metrics address, or 0 to disable",
              cxxopts::value<std::string>()->default_value(":8080"),
              "ADDR")("health-probe-bind-address", "plain HTTP /healthz and /readyz address, or 0 to disable",
                      cxxopts::value<std::string>()->default_value(":8081"),
                      "ADDR")("cert-dir",
                              "serve tls.crt and tls.key from this directory (reloaded when they change) "
                              "instead of managing certificates",
                              cxxopts::value<std::string>()->default_value(""), "DIR")(
      "service", "webhook Service name (in cluster): the certificate's DNS names",
      cxxopts::value<std::string>()->default_value("restarter-webhook"),
      "NAME")("cluster-domain", "cluster DNS domain for the Service's DNS names",
              cxxopts::value<std::string>()->default_value("cluster.local"),
              "DOMAIN")("webhook-url",
                        "out of cluster: the URL the apiserver calls, https://HOST[:PORT]/mutate; "
                        "its host is the certificate's only name (an IP SAN for an address)",
                        cxxopts::value<std::string>()->default_value(""),
                        "URL")("secret-name", "Secret holding the managed certificates",
                               cxxopts::value<std::string>()->default_value("restarter-webhook-certs"), "NAME")(
      "secret-namespace", "namespace of that Secret (default: --service-namespace)",
      cxxopts::value<std::string>()->default_value(""),
      "NS")("configuration-name", "MutatingWebhookConfiguration to publish the CA bundle into",
            cxxopts::value<std::string>()->default_value("restarter-webhook.stackable.tech"),
            "NAME")("manage-configuration",
                    "create the MutatingWebhookConfiguration --configuration-name and keep "
                    "it (by Service, or by --webhook-url; caBundle included), as install-mwc "
                    "would build it; not with --cert-dir");
  addServiceNamespaceFlag(options, "webhook Service namespace; also the Secret's unless --secret-namespace");
  addMwcShapeFlags(options, "with --manage-configuration: ");
  options.add_options()("validity", "serving certificate lifetime; renewed at 2/3 of it",
                        cxxopts::value<std::string>()->default_value("24h"),
                        "DURATION")("ca-validity", "CA lifetime; a next CA is staged at 2/3 of it",
                                    cxxopts::value<std::string>()->default_value("8760h"), "DURATION")(
      "ca-propagation", "how long a new CA is published before certificates signed by it are served",
      cxxopts::value<std::string>()->default_value("30s"),
      "DURATION")("key-type", "ecdsa-p256, ecdsa-p384, rsa-2048 or rsa-4096",
                  cxxopts::value<std::string>()->default_value("ecdsa-p256"), "TYPE")(
      "cert-check-interval", "how often the certificates (Secret or files) are checked, by wall-clock time",
      cxxopts::value<std::string>()->default_value("10s"),
      "DURATION")("lookup-timeout",
                  "deadline for reading the referenced ConfigMaps and Secrets; keep it below "
                  "the configuration's timeoutSeconds",
                  cxxopts::value<std::string>()->default_value("3s"),
                  "DURATION")("content-aware",
                              "whose content the lookups read, to write at admission the content record "
                              "serve-controller --content-aware keeps (set both alike): configmaps, all "
                              "(also Secrets: their data reaches the webhook, hashed and dropped at once) "
                              "or off (metadata only)",
                              cxxopts::value<std::string>()->default_value("configmaps"), "configmaps|all|off")(
      "roll-on-opt-in",
      "roll a running workload when it is opted in (labeled), by writing its template annotations at "
      "once, as before; by default its pods' versions are recorded in its metadata "
      "(restarter.stackable.tech/baseline) and the first rollout comes with the first real change",
      cxxopts::value<bool>()->default_value("false"))(
      "threads",
      "threads answering AdmissionReviews (connections hold none; 4 x N more may queue, "
      "503 beyond); as many more look up references (a fixed pool)",
      cxxopts::value<int>()->default_value("16"),
      "N")("max-lookups-per-review",
           "the most ConfigMaps and Secrets one AdmissionReview may have looked up; a review naming more is "
           "answered at once without a patch (the controller writes its annotations) and counted in "
           "restarter_webhook_lookup_refusals_total",
           cxxopts::value<int>()->default_value("1000"), "N")(
      "max-lookups-per-second",
      "global limit on reference lookups (API GETs) per second, whoever sends the reviews; a review whose "
      "lookups do not fit is answered at once without a patch (the controller writes its annotations)",
      cxxopts::value<double>()->default_value("100"),
      "N")("lookup-burst",
           "lookups allowed at once before --max-lookups-per-second applies; a tenth is kept for reviews "
           "of few references, so a review of more than 90% of it is never looked up",
           cxxopts::value<int>()->default_value("2000"),
           "N")("client-ca-file",
                "require every caller to present a TLS client certificate signed by a CA in this PEM file (the "
                "apiserver's certificate for webhooks, given in its admission configuration); connections "
                "without one are refused at the handshake. Read at start. Empty: any caller",
                cxxopts::value<std::string>()->default_value(""), "FILE")(
      "client-allowed-names",
      "with --client-ca-file: accept only client certificates whose common name or a DNS "
      "subjectAltName is one of these (comma-separated, repeatable); empty: any the CA signed",
      cxxopts::value<std::vector<std::string>>(),
      "NAME")("log-format", "text or json", cxxopts::value<std::string>()->default_value("text"), "FORMAT")(
      "log-level", "debug, info, warn or error", cxxopts::value<std::string>()->default_value("info"), "LEVEL")(
      "h,help", "show this help");
  addSelectionFlags(options);
  addDigestKeyFlags(options,
                    "only read (serve-controller creates it); until it is read, reviews that "
                    "reference what --content-aware reads are not patched");
  addConnectionFlags(options);
  return options;
}

core::Result<std::optional<obs::BindAddress>> bindFlag(const cxxopts::ParseResult& flags, const char* flag) {
  auto parsed = obs::parseBindAddress(flags[flag].as<std::string>());
  if (!parsed)
    return core::makeError(core::ErrorKind::InvalidInput,
                           std::string("--") + flag + ": " + parsed.error().message);
  return *parsed;
}

}  // namespace

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
  cxxopts::Options options = makeOptions(io);
  ParsedFlags parsed = parseFlags(options, args, io, kName);
  if (parsed.exitNow) return *parsed.exitNow;
  const cxxopts::ParseResult& flags = *parsed.result;
  try {
    out.address.host = flags["bind-address"].as<std::string>();
    const int port = flags["port"].as<int>();
    if (port < 0 || port > 65535) return reportUsageError(io, kName, "--port must be 0-65535");
    out.address.port = port;
    for (const auto& [flag, target] : {std::pair{"metrics-bind-address", &out.metricsAddress},
                                       std::pair{"health-probe-bind-address", &out.healthAddress}}) {
      auto address = bindFlag(flags, flag);
      if (!address) return reportUsageError(io, kName, address.error().message);
      *target = *address;
    }
    const kube::LoadOptions connection = connectionLoadOptions(flags);
    out.kubeconfig = connection.kubeconfigPath;
    out.context = connection.context;
    out.certDir = flags["cert-dir"].as<std::string>();
    out.service = flags["service"].as<std::string>();
    if (auto error = readServiceNamespace(flags, io, out.serviceNamespace))
      return reportUsageError(io, kName, *error);
    out.clusterDomain = flags["cluster-domain"].as<std::string>();
    out.webhookUrl = flags["webhook-url"].as<std::string>();
    out.secretName = flags["secret-name"].as<std::string>();
    out.secretNamespace = flags["secret-namespace"].as<std::string>();
    out.configurationName = flags["configuration-name"].as<std::string>();
    out.manageConfiguration = flags.count("manage-configuration") > 0;
    if (auto error = readMwcShapeFlags(flags, out.configuration)) return reportUsageError(io, kName, *error);
    for (const auto& [flag, target] :
         {std::pair{"validity", &out.validity}, std::pair{"ca-validity", &out.caValidity},
          std::pair{"ca-propagation", &out.caPropagation},
          std::pair{"cert-check-interval", &out.certCheckInterval}}) {
      if (auto error = readDurationFlag(flags, flag, kPositiveDuration, *target))
        return reportUsageError(io, kName, *error);
    }
    if (auto error = readDurationFlag(flags, "lookup-timeout", kPositiveDuration, out.lookupTimeout))
      return reportUsageError(io, kName, *error);
    const int perReview = flags["max-lookups-per-review"].as<int>();
    if (perReview < 1) return reportUsageError(io, kName, "--max-lookups-per-review must be at least 1");
    const double perSecond = flags["max-lookups-per-second"].as<double>();
    if (!(perSecond > 0)) return reportUsageError(io, kName, "--max-lookups-per-second must be positive");
    const int burst = flags["lookup-burst"].as<int>();
    if (burst < 1) return reportUsageError(io, kName, "--lookup-burst must be at least 1");
    out.lookupLimits =
        webhook::LookupLimits{static_cast<std::size_t>(perReview), perSecond, static_cast<double>(burst)};
    out.clientCaFile = flags["client-ca-file"].as<std::string>();
    if (flags.count("client-allowed-names") > 0) {
      out.clientAllowedNames = flags["client-allowed-names"].as<std::vector<std::string>>();
      if (out.clientCaFile.empty())
        return reportUsageError(io, kName, "--client-allowed-names needs --client-ca-file");
      for (const std::string& name : out.clientAllowedNames) {
        if (name.empty()) return reportUsageError(io, kName, "--client-allowed-names: an empty name");
      }
    }
    auto contentAware = core::parseContentAwareness(flags["content-aware"].as<std::string>());
    if (!contentAware) return reportUsageError(io, kName, "--content-aware: " + contentAware.error().message);
    out.contentAware = *contentAware;
    if (auto error = readSelectionFlags(flags, out.selection)) return reportUsageError(io, kName, *error);
    if (auto error = readDigestKeyFlags(flags, out.digestKey)) return reportUsageError(io, kName, *error);
    // The managed configuration must send what the handler now calls ours.
    out.configuration.reloaderAnnotations = out.selection.reloaderAnnotations;
    out.rollOnOptIn = flags["roll-on-opt-in"].as<bool>();
    // Only managed certificates are rotated; with --cert-dir these durations are unused.
    if (out.certDir.empty()) {
      const std::vector<std::string> problems = core::checkRotationTimings(
          {.validity = out.validity,
           .caValidity = out.caValidity,
           .caPropagation = out.caPropagation,
           .checkInterval = out.certCheckInterval},
          {"--validity", "--ca-validity", "--ca-propagation", "--cert-check-interval"});
      if (!problems.empty()) return reportUsageError(io, kName, joinProblems(problems));
    }
    auto keyType = certs::parseKeyType(flags["key-type"].as<std::string>());
    if (!keyType) return reportUsageError(io, kName, "--key-type: " + keyType.error().message);
    out.keyType = *keyType;
    const int threads = flags["threads"].as<int>();
    if (threads < 1 || threads > 1024) return reportUsageError(io, kName, "--threads must be 1-1024");
    out.threads = static_cast<std::size_t>(threads);
    if (auto error = parseLogFlags(flags, out.logFormat, out.logLevel))
      return reportUsageError(io, kName, *error);
  } catch (const cxxopts::exceptions::exception& e) {
    return reportUsageError(io, kName, e.what());
  }
  if (out.certDir.empty()) {
    if (auto names = servingNames(out); !names) return reportUsageError(io, kName, names.error().message);
  }
  if (out.manageConfiguration) {
    // The caBundle comes from the managed Secret; with --cert-dir there is none to publish.
    if (!out.certDir.empty())
      return reportUsageError(io, kName, "--manage-configuration needs managed certificates (not --cert-dir)");
    if (out.configurationName.empty())
      return reportUsageError(io, kName, "--manage-configuration needs a --configuration-name");
    if (auto built = managedConfiguration(out); !built)
      return reportUsageError(io, kName, "--manage-configuration: " + built.error().message);
  }
  return std::nullopt;
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
  lookupTransport.requestTimeout = options.lookupTimeout;
  lookupTransport.connectTimeout = options.lookupTimeout;
  auto lookupClient = kube::Client::create(*config, lookupTransport);
  if (!client || !lookupClient) {
    log.error("cannot create the Kubernetes client",
              {{"error", (client ? lookupClient.error() : client.error()).describe()}});
    return kExitFailure;
  }

  webhook::ServiceOptions service;
  service.address = options.address;
  service.certDir = options.certDir;
  service.certCheckInterval = options.certCheckInterval;
  service.lookupTimeout = options.lookupTimeout;
  service.threads = options.threads;
  service.lookupLimits = options.lookupLimits;
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
    service.clientAllowedNames = options.clientAllowedNames;
  }
  service.contentAware = options.contentAware;
  service.digestKeyNamespace = options.digestKey.namespace_;
  service.digestKeySecret = options.digestKey.name;
  service.selection = options.selection;
  service.rollOnOptIn = options.rollOnOptIn;
  if (options.certDir.empty()) {
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
  return Subcommand{kName, "serve the mutating admission webhook (HTTPS, managed certificates)",
                    [](const std::vector<std::string>& args, Io& io) {
                      ServeWebhookOptions options;
                      if (auto exit = parseServeWebhookFlags(args, io, options)) return *exit;
                      return runServeWebhook(options, io);
                    },
                    [](const Io& io) { return describeFlags(makeOptions(io)); }};
}

}  // namespace restarter::cli
