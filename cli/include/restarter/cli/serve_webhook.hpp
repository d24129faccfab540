#pragma once
// `restarter serve-webhook`: the mutating admission webhook (docs/configuration.md
// "serve-webhook"). Serves admission.k8s.io/v1 AdmissionReviews over HTTPS on /mutate; health and
// metrics on their own plain HTTP endpoints, as serve-controller has them.
//
// Certificates: managed in a Secret shared by all replicas (created if missing, renewed, the CA
// rolled with overlap, the CA bundle published into the MutatingWebhookConfiguration), or, with
// --cert-dir, tls.crt and tls.key from a directory, reloaded when they change.
//
// --manage-configuration (the in-cluster install, manifests/): the process also creates the
// MutatingWebhookConfiguration itself and keeps it as install-mwc would build it (by Service, or by
// --webhook-url), caBundle included, correcting drift at every certificate check.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/certs/certs.hpp"
#include "restarter/cli/digest_key_flags.hpp"
#include "restarter/cli/subcommand.hpp"
#include "restarter/core/content.hpp"
#include "restarter/core/reloader.hpp"
#include "restarter/core/result.hpp"
#include "restarter/obs/endpoints.hpp"
#include "restarter/obs/log.hpp"
#include "restarter/webhook/certificates.hpp"
#include "restarter/webhook/fetch.hpp"
#include "restarter/webhook/mwc.hpp"
#include "restarter/webhook/service.hpp"

namespace restarter::cli {

// The served webhook's settings are bound to `server`'s fields (their defaults are
// webhook::ServiceOptions'); the rest is the program's: connection, certificates' names and
// lifetimes, the configuration it may manage, endpoints and logs. server.managed and
// server.clientCaPem are filled by runServeWebhook from these.
struct ServeWebhookOptions {
  webhook::ServiceOptions server{};
  std::optional<obs::BindAddress> metricsAddress = obs::BindAddress{"", 8080};
  std::optional<obs::BindAddress> healthAddress = obs::BindAddress{"", 8081};
  std::string kubeconfig;
  std::string context;

  std::string service = webhook::kDefaultServiceName;
  std::string serviceNamespace = webhook::kDefaultServiceNamespace;
  std::string clusterDomain = "cluster.local";
  std::string webhookUrl;  // out of cluster: its host is the certificate's only name
  std::string secretName = "restarter-webhook-certs";
  std::string secretNamespace;  // empty: serviceNamespace
  std::string configurationName = webhook::kDefaultConfigurationName;
  bool manageConfiguration = false;
  // With manageConfiguration: the Service port, timeoutSeconds and namespace selectors (the
  // name and clientConfig come from configurationName, service/serviceNamespace or webhookUrl).
  webhook::MwcOptions configuration;
  std::chrono::seconds validity{std::chrono::hours(24)};
  std::chrono::seconds caValidity{std::chrono::hours(24 * 365)};
  std::chrono::seconds caPropagation{std::chrono::seconds(30)};
  certs::KeyType keyType = certs::KeyType::EcdsaP256;

  // --client-ca-file, --client-allowed-names: require a client certificate signed by this CA
  // (and naming one of these, when any) at the TLS handshake (webhook/server.hpp ClientAuth).
  std::string clientCaFile{};
  obs::LogFormat logFormat = obs::LogFormat::Text;
  obs::LogLevel logLevel = obs::LogLevel::Info;
};

// webhook::servingNames of the options' --webhook-url, --service, --service-namespace and
// --cluster-domain.
core::Result<webhook::ServingNames> servingNames(const ServeWebhookOptions& options);

// The MutatingWebhookConfiguration --manage-configuration maintains (without caBundle): by
// --webhook-url when given, else by Service. InvalidInput when the options cannot build one.
core::Result<nlohmann::json> managedConfiguration(const ServeWebhookOptions& options);

// Parses serve-webhook's flags into options; an exit code when it should not run (help, usage).
std::optional<int> parseServeWebhookFlags(const std::vector<std::string>& args, Io& io,
                                          ServeWebhookOptions& out);

// Serves until SIGINT or SIGTERM. Exit 0 after a clean stop, 1 when it cannot start.
int runServeWebhook(const ServeWebhookOptions& options, Io& io);

Subcommand serveWebhookCommand();

}  // namespace restarter::cli
