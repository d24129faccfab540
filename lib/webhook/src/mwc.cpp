#include "restarter/webhook/mwc.hpp"

#include <algorithm>

#include "restarter/certs/certs.hpp"
#include "restarter/core/base64.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/workload_kinds.hpp"

namespace restarter::webhook {

using nlohmann::json;

std::string webhookName(const std::string& configurationName) {
  const auto dots = std::count(configurationName.begin(), configurationName.end(), '.');
  return dots >= 2 ? configurationName : configurationName + ".restarter.stackable.tech";
}

namespace {

// One rule per group version of the workload kinds the controller manages (core::kManagedKinds;
// the custom resource rows only with `argoRollouts`), in the table's order: a rule matches the
// cross product of its groups, versions and resources, so kinds of different group versions never
// share one. The main resource only (no status/scale, whose writes never change the pod template).
json workloadRules(bool argoRollouts) {
  json rules = json::array();
  for (const core::ManagedKind& kind : core::kManagedKinds) {
    if (!core::kindEnabled(kind, argoRollouts)) continue;
    auto same = std::find_if(rules.begin(), rules.end(), [&kind](const json& rule) {
      return rule["apiGroups"][0] == kind.group && rule["apiVersions"][0] == kind.version;
    });
    if (same != rules.end()) {
      (*same)["resources"].push_back(kind.plural);
      continue;
    }
    rules.push_back({// CREATE: the fix itself (generation stays 1). UPDATE: a spec change and a config
                     // change applied together become one rollout instead of two.
                     {"operations", json::array({"CREATE", "UPDATE"})},
                     {"apiGroups", json::array({kind.group})},
                     {"apiVersions", json::array({kind.version})},
                     {"resources", json::array({kind.plural})},
                     // The kinds are namespaced; "Namespaced" keeps cluster-scoped objects out explicitly.
                     {"scope", "Namespaced"}});
  }
  return rules;
}

}  // namespace

core::Result<json> buildMutatingWebhookConfiguration(const MwcOptions& o) {
  auto invalid = [](std::string what) {
    return core::makeError(core::ErrorKind::InvalidInput, std::move(what));
  };
  const bool byService = !o.serviceName.empty();
  const bool byUrl = !o.url.empty();
  if (byService == byUrl) return invalid("give either a service or a URL for the webhook");
  if (byUrl && o.url.rfind("https://", 0) != 0) return invalid("the webhook URL must start with https://");
  if (byService && o.serviceNamespace.empty()) return invalid("the service needs a namespace");
  if (byService && (o.servicePort < 1 || o.servicePort > 65535))
    return invalid("the service port must be 1-65535");
  // The apiserver accepts 1 to 30 seconds.
  if (o.timeoutSeconds < 1 || o.timeoutSeconds > 30) return invalid("timeoutSeconds must be 1-30");
  if (o.name.empty()) return invalid("the configuration needs a name");
  if (!o.excludeNamespaces.empty() && !o.onlyNamespaces.empty()) {
    return invalid("give namespaces to exclude or namespaces to include, not both");
  }

  json clientConfig = json::object();
  if (byUrl) {
    // Out of cluster (the local control plane): the apiserver dials this URL directly; the
    // certificate needs the host as a SAN (an IP SAN for 127.0.0.1).
    clientConfig["url"] = o.url;
  } else {
    clientConfig["service"] = {
        {"name", o.serviceName}, {"namespace", o.serviceNamespace}, {"port", o.servicePort}, {"path", o.path}};
  }
  // The CA that signed the serving certificate. Left out when serve-webhook manages certificates:
  // it publishes (and rolls) the bundle itself, and install-mwc must not fight it.
  if (!o.caBundlePem.empty()) clientConfig["caBundle"] = core::base64Encode(o.caBundlePem);

  json namespaceSelector = json::object();
  if (!o.excludeNamespaces.empty()) {
    // Namespaces where a restart on first rollout is acceptable, or that must never depend on the
    // webhook (kube-system); every namespace carries kubernetes.io/metadata.name (since 1.21).
    namespaceSelector["matchExpressions"] = json::array(
        {{{"key", "kubernetes.io/metadata.name"}, {"operator", "NotIn"}, {"values", o.excludeNamespaces}}});
  } else if (!o.onlyNamespaces.empty()) {
    // Only these namespaces (tests use this so that parallel suites never see each other's webhook).
    namespaceSelector["matchExpressions"] = json::array(
        {{{"key", "kubernetes.io/metadata.name"}, {"operator", "In"}, {"values", o.onlyNamespaces}}});
  }

  json rules = workloadRules(o.argoRollouts);

  json webhook = {// The apiserver wants a webhook name with at least three DNS labels; one webhook per
                  // configuration, named like it (suffixed when the configuration name is shorter).
                  {"name", webhookName(o.name)},
                  {"clientConfig", clientConfig},
                  {"rules", rules},
                  // Ignore: a down, slow or misconfigured webhook must never block a create or update; the
                  // controller adds the annotations later (the only cost is the old extra restart).
                  {"failurePolicy", "Ignore"},
                  // Equivalent: a request through another API version of the same resource is still sent
                  // (converted to apps/v1), so no path around the webhook exists.
                  {"matchPolicy", "Equivalent"},
                  // None: the webhook only reads; dry-run requests may call it.
                  {"sideEffects", "None"},
                  // v1 only: the only version the handler speaks.
                  {"admissionReviewVersions", json::array({"v1"})},
                  // Well below the 10 s default: a hung webhook delays a create by this much at most. The
                  // webhook's own lookup deadline is shorter still (serve-webhook --lookup-timeout).
                  {"timeoutSeconds", o.timeoutSeconds},
                  // IfNeeded: a later webhook (sidecar injectors) may add volumes that reference ConfigMaps or
                  // Secrets; we are then called again and annotate those too.
                  {"reinvocationPolicy", "IfNeeded"},
                  // Only opted-in workloads are sent: everything else never pays the webhook's latency. With
                  // Reloader's annotations (annotations, not labels) that cannot be told from here: every
                  // workload but those labeled enabled=false (restarter's explicit opt-out, which
                  // core::workloadManagement honours too) is sent, and the unmanaged ones are allowed
                  // unchanged without a lookup (docs/architecture.md, "Reloader annotations").
                  {"objectSelector",
                   o.reloaderAnnotations
                       ? json{{"matchExpressions", json::array({{{"key", std::string(core::kEnabledLabel)},
                                                                 {"operator", "NotIn"},
                                                                 {"values", json::array({"false"})}}})}}
                       : json{{"matchLabels",
                               {{std::string(core::kEnabledLabel), std::string(core::kEnabledLabelValue)}}}}},
                  {"namespaceSelector", namespaceSelector}};

  return json{{"apiVersion", "admissionregistration.k8s.io/v1"},
              {"kind", "MutatingWebhookConfiguration"},
              {"metadata", {{"name", o.name}, {"labels", {{"app.kubernetes.io/name", "restarter"}}}}},
              {"webhooks", json::array({webhook})}};
}

json withCaBundle(json configuration, const std::string& bundlePem) {
  const std::string encoded = core::base64Encode(bundlePem);
  auto webhooks = configuration.find("webhooks");
  if (webhooks == configuration.end() || !webhooks->is_array()) return configuration;
  for (json& webhook : *webhooks) {
    if (webhook.is_object()) webhook["clientConfig"]["caBundle"] = encoded;
  }
  return configuration;
}

bool containsAll(const json& live, const json& desired) {
  if (desired.is_object()) {
    if (!live.is_object()) return false;
    for (const auto& [key, value] : desired.items()) {
      auto it = live.find(key);
      if (it == live.end() || !containsAll(*it, value)) return false;
    }
    return true;
  }
  if (desired.is_array()) {
    if (!live.is_array() || live.size() != desired.size()) return false;
    for (std::size_t i = 0; i < desired.size(); ++i) {
      if (!containsAll(live[i], desired[i])) return false;
    }
    return true;
  }
  return live == desired;
}

}  // namespace restarter::webhook
