#pragma once
// The MutatingWebhookConfiguration that routes labeled workloads to the webhook (install-mwc).
// Every setting is chosen for docs/architecture.md, "Two halves"; mwc.cpp says why for each.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/core/result.hpp"
#include "restarter/kube/install_defaults.hpp"

namespace restarter::webhook {

inline constexpr const char* kDefaultConfigurationName = "restarter-webhook.stackable.tech";
// The Service manifests/ install, so the defaults of --service and --service-namespace.
inline constexpr const char* kDefaultServiceName = "restarter-webhook";
inline constexpr const char* kDefaultServiceNamespace = kube::kInstallNamespace;
inline constexpr const char* kInstallFieldManager = "restarter.stackable.tech/install-mwc";
// serve-webhook --manage-configuration applies the configuration (caBundle included) under this
// manager, so `kubectl get -o yaml --show-managed-fields` tells it from install-mwc's.
inline constexpr const char* kServeWebhookFieldManager = "restarter.stackable.tech/serve-webhook";

struct MwcOptions {
  std::string name = kDefaultConfigurationName;
  // Exactly one of service (name + namespace + port) or url.
  std::string serviceName;
  std::string serviceNamespace;
  int servicePort = 443;
  std::string url;               // e.g. https://127.0.0.1:8443/mutate
  std::string path = "/mutate";  // with a service
  std::string caBundlePem;       // empty: left to serve-webhook to publish
  int timeoutSeconds = 5;
  std::vector<std::string> excludeNamespaces;  // by kubernetes.io/metadata.name
  std::vector<std::string> onlyNamespaces;     // if set: only these namespaces
  // --reloader-annotations: workloads are opted in by annotations too, which no objectSelector
  // can see, so every workload not labeled restarter.stackable.tech/enabled=false is sent.
  bool reloaderAnnotations = false;
  // --argo-rollouts: a second rule sends Argo Rollouts' Rollouts (core::kManagedKinds' custom
  // resource rows) too. A rule for a resource not served (no CRD) is accepted and matches nothing.
  bool argoRollouts = false;
};

// The name of the configuration's one webhook: the configuration name when it has at least three
// DNS labels (as the apiserver requires), else the name + ".restarter.stackable.tech".
std::string webhookName(const std::string& configurationName);

// Checks the options (one of service/url, https URL, timeout 1..30) and builds the object.
core::Result<nlohmann::json> buildMutatingWebhookConfiguration(const MwcOptions& options);

// `configuration` with every webhook's clientConfig.caBundle set to the base64 of `bundlePem`.
nlohmann::json withCaBundle(nlohmann::json configuration, const std::string& bundlePem);

// Whether the live object already says everything `desired` says: every field of `desired` is in
// `live` with the same value (objects compared key by key, arrays element by element and of equal
// length, scalars by value). Fields only `live` has (server defaults, metadata, managedFields, other
// managers' labels) do not matter. Used to write only when something differs.
bool containsAll(const nlohmann::json& live, const nlohmann::json& desired);

}  // namespace restarter::webhook
