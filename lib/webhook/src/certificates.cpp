#include "restarter/webhook/certificates.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <map>
#include <set>

#include "restarter/certs/secret_data.hpp"
#include "restarter/core/base64.hpp"
#include "restarter/core/json_access.hpp"
#include "restarter/kube/files.hpp"
#include "restarter/webhook/admission.hpp"
#include "restarter/webhook/mwc.hpp"

namespace restarter::webhook {

using nlohmann::json;

namespace {

using Material = certs::SecretPems;  // Secret data key -> PEM (certs/secret_data.hpp)

constexpr const char* kCaCert = certs::kCaCertKey;
constexpr const char* kCaKey = "ca.key";
constexpr const char* kNextCaCert = "next-ca.crt";
constexpr const char* kNextCaKey = "next-ca.key";
constexpr const char* kLeafCert = certs::kLeafCertKey;
constexpr const char* kLeafKey = certs::kLeafKeyKey;
constexpr const char* kBundle = certs::kCaBundleKey;

std::string get(const Material& m, const char* key) {
  const auto it = m.find(key);
  return it == m.end() ? std::string() : it->second;
}

// The validity counted from when the certificate was issued: lib/certs backdates notBefore by
// kBackdate for clock skew, which must not count towards the lifetime that renewal divides (a 1 h
// certificate would otherwise be "due" at once).
core::Validity issued(const certs::CertificateInfo& info) {
  return core::Validity{std::min(info.notBefore + certs::kBackdate, info.notAfter), info.notAfter};
}

// A usable CA pair: a CA certificate whose key is there.
std::optional<core::Validity> caValidity(const Material& m, const char* certKey, const char* keyKey) {
  const std::string cert = get(m, certKey);
  const std::string key = get(m, keyKey);
  if (cert.empty() || key.empty()) return std::nullopt;
  auto info = certs::inspect(cert);
  if (!info || !info->front().isCa || !certs::checkKeyMatches(cert, key).ok()) return std::nullopt;
  return issued(info->front());
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// A usable leaf: its key is there, the current CA signed it, and it names what we serve.
std::optional<core::Validity> leafValidity(const Material& m, const certs::ServingRequest& serving) {
  const std::string cert = get(m, kLeafCert);
  const std::string key = get(m, kLeafKey);
  const std::string ca = get(m, kCaCert);
  if (cert.empty() || key.empty() || ca.empty()) return std::nullopt;
  auto info = certs::inspect(cert);
  if (!info || !certs::checkKeyMatches(cert, key).ok() || !certs::checkIssuedBy(cert, ca).ok()) {
    return std::nullopt;
  }
  const certs::CertificateInfo& leaf = info->front();
  if (sorted(leaf.dnsNames) != sorted(serving.dnsNames) ||
      sorted(leaf.ipAddresses) != sorted(serving.ipAddresses)) {
    return std::nullopt;
  }
  return issued(leaf);
}

core::RotationState evaluate(const Material& m, const certs::ServingRequest& serving) {
  core::RotationState state;
  state.ca = caValidity(m, kCaCert, kCaKey);
  state.nextCa = caValidity(m, kNextCaCert, kNextCaKey);
  // The next CA is published when it is staged, so its issue time is its staging time.
  if (state.nextCa) state.nextCaStagedAt = state.nextCa->notBefore;
  if (state.ca) state.leaf = leafValidity(m, serving);
  return state;
}

core::Status issueLeaf(Material& m, const ManagedOptions& options, core::TimePoint now) {
  auto leaf =
      certs::issueServing(options.serving, certs::KeyedCertificate{get(m, kCaCert), get(m, kCaKey)}, now);
  if (!leaf) return std::move(leaf).error();
  m[kLeafCert] = leaf->certPem;
  m[kLeafKey] = leaf->keyPem;
  return core::okStatus();
}

core::Status addToBundle(Material& m, const std::string& caPem, core::TimePoint now) {
  auto bundle = certs::mergeBundle(get(m, kBundle), caPem, now);
  if (!bundle) return std::move(bundle).error();
  m[kBundle] = *bundle;
  return core::okStatus();
}

// Applies one rotation action to the material in memory.
core::Status apply(core::RotationAction action, Material& m, const ManagedOptions& options,
                   core::TimePoint now) {
  switch (action) {
    case core::RotationAction::Keep: return core::okStatus();
    case core::RotationAction::Bootstrap: {
      auto ca = certs::createCa(options.ca, now);
      if (!ca) return std::move(ca).error();
      m[kCaCert] = ca->certPem;
      m[kCaKey] = ca->keyPem;
      m.erase(kNextCaCert);
      m.erase(kNextCaKey);
      if (core::Status s = addToBundle(m, ca->certPem, now); !s) return s;
      return issueLeaf(m, options, now);
    }
    case core::RotationAction::StageNextCa: {
      auto ca = certs::createCa(options.ca, now);
      if (!ca) return std::move(ca).error();
      m[kNextCaCert] = ca->certPem;
      m[kNextCaKey] = ca->keyPem;
      return addToBundle(m, ca->certPem, now);
    }
    case core::RotationAction::PromoteNextCa:
      m[kCaCert] = get(m, kNextCaCert);
      m[kCaKey] = get(m, kNextCaKey);
      m.erase(kNextCaCert);
      m.erase(kNextCaKey);
      return issueLeaf(m, options, now);
    case core::RotationAction::IssueLeaf: return issueLeaf(m, options, now);
  }
  return core::okStatus();
}

// The Secret to write: a new one, or the live one with its data replaced. Everything else of the
// live Secret stays as it was (its type is immutable; the labels and annotations are those of
// whoever shipped it: a Helm release's ownership annotations, a GitOps tool's tracking label or
// last-applied record), so that installing it empty (docs/architecture.md, "Least privilege") and
// the webhook filling it are no drift for the tool that applied it.
json secretObject(const ManagedOptions& options, const Material& m, const json* live) {
  json data = certs::encodeSecretData(m);
  if (live != nullptr && live->is_object()) {
    json secret = *live;
    secret.erase("stringData");
    secret["data"] = data;
    return secret;
  }
  return json{
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata",
       {{"name", options.secretName},
        {"namespace", options.secretNamespace},
        {"labels",
         {{"app.kubernetes.io/name", "restarter"}, {"app.kubernetes.io/component", "webhook-certificates"}}}}},
      {"type", "Opaque"},
      {"data", data}};
}

// Sets every webhook's caBundle of the configuration to `bundlePem` where it differs. Returns
// whether it wrote.
core::Result<bool> publishBundle(kube::Client& client, const std::string& name, const std::string& bundlePem) {
  const std::string encoded = core::base64Encode(bundlePem);
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto mwc = client.get(kube::resources::mutatingWebhookConfigurations(), "", name);
    if (!mwc) return std::move(mwc).error().withContext("reading MutatingWebhookConfiguration " + name);
    json updated = *mwc;
    bool changed = false;
    auto webhooks = updated.find("webhooks");
    if (webhooks == updated.end() || !webhooks->is_array()) return false;
    for (json& webhook : *webhooks) {
      if (!webhook.is_object()) continue;
      json& clientConfig = webhook["clientConfig"];
      if (!clientConfig.is_object()) continue;
      // find() rather than value(): a caBundle that is not a string is replaced, not a throw.
      const auto current = clientConfig.find("caBundle");
      if (current == clientConfig.end() || !current->is_string() || *current != encoded) {
        clientConfig["caBundle"] = encoded;
        changed = true;
      }
    }
    if (!changed) return false;
    auto written = client.replace(kube::resources::mutatingWebhookConfigurations(), "", name, updated);
    if (written) return true;
    if (written.error().kind != core::ErrorKind::Conflict) {
      return std::move(written).error().withContext("updating MutatingWebhookConfiguration " + name);
    }
  }
  return core::makeError(core::ErrorKind::Conflict,
                         "MutatingWebhookConfiguration " + name + " kept changing; will retry");
}

// Creates or corrects the managed configuration (with the bundle) when the live one is missing or
// differs. Returns whether it wrote.
core::Result<bool> maintainConfiguration(kube::Client& client, const std::string& name,
                                         const json& configuration, const std::string& bundlePem) {
  const auto resource = kube::resources::mutatingWebhookConfigurations();
  const json desired = withCaBundle(configuration, bundlePem);
  auto live = client.get(resource, "", name);
  if (live && containsAll(*live, desired)) return false;
  if (!live && live.error().kind != core::ErrorKind::NotFound) {
    return std::move(live).error().withContext("reading MutatingWebhookConfiguration " + name);
  }
  kube::ApplyOptions apply;
  apply.fieldManager = kServeWebhookFieldManager;
  // The process owns this configuration: take back fields someone else changed (a hand edit of
  // failurePolicy must not survive the next check).
  apply.force = true;
  auto written = client.apply(resource, "", name, desired, apply);
  if (!written) return std::move(written).error().withContext("applying MutatingWebhookConfiguration " + name);
  return true;
}

}  // namespace

core::Result<CheckReport> checkManagedCertificates(kube::Client& client, const ManagedOptions& options,
                                                   CertificateStore& store, core::TimePoint now) {
  CheckReport report;
  const auto secrets = kube::resources::secrets();
  Material material;
  bool written = false;
  for (int attempt = 0; attempt < 4 && !written; ++attempt) {
    auto secret = client.get(secrets, options.secretNamespace, options.secretName);
    const bool exists = secret.ok();
    if (!secret && secret.error().kind != core::ErrorKind::NotFound) {
      return std::move(secret).error().withContext("reading Secret " + options.secretNamespace + "/" +
                                                   options.secretName);
    }
    if (exists) {
      material = certs::decodeSecretData(*secret);
    } else {
      material.clear();
    }
    const Material before = material;
    report.actions.clear();
    // At most one of each action per check: bootstrap or promote, stage, issue.
    for (int step = 0; step < 4; ++step) {
      const auto decision = core::decideRotation(evaluate(material, options.serving), now, options.policy);
      if (decision.action == core::RotationAction::Keep) break;
      report.actions.push_back(std::string(core::rotationActionName(decision.action)) + ": " + decision.reason);
      if (core::Status s = apply(decision.action, material, options, now); !s) {
        return std::move(s).error().withContext(std::string("rotation step ") +
                                                core::rotationActionName(decision.action));
      }
    }
    // The bundle always holds the current CA (and drops expired ones).
    if (core::Status s = addToBundle(material, get(material, kCaCert), now); !s) return std::move(s).error();
    if (material.count(kNextCaCert) > 0) {
      if (core::Status s = addToBundle(material, get(material, kNextCaCert), now); !s)
        return std::move(s).error();
    }
    if (exists && material == before) break;
    // The live resourceVersion goes with the replace (a precondition: another replica's write in
    // between makes it a Conflict, and the loop reads again).
    const json object = secretObject(options, material, exists ? &*secret : nullptr);
    auto result = exists ? client.replace(secrets, options.secretNamespace, options.secretName, object)
                         : client.create(secrets, options.secretNamespace, object);
    if (!result && !exists && result.error().kind == core::ErrorKind::Forbidden) {
      // The installs ship the Secret empty and give no right to create Secrets.
      return std::move(result).error().withContext(
          "creating Secret " + options.secretNamespace + "/" + options.secretName +
          " (it does not exist; the install ships it empty, so that serve-webhook needs no right to create "
          "Secrets: apply it, or grant create)");
    }
    if (result) {
      written = true;
      report.secretWritten = true;
      break;
    }
    // Another replica wrote first: read again and adopt what it wrote.
    if (result.error().kind != core::ErrorKind::AlreadyExists &&
        result.error().kind != core::ErrorKind::Conflict) {
      return std::move(result).error().withContext("writing Secret " + options.secretNamespace + "/" +
                                                   options.secretName);
    }
    if (attempt == 3) return std::move(result).error().withContext("writing Secret (raced 4 times)");
  }
  if (core::Status s = store.update(get(material, kLeafCert), get(material, kLeafKey)); !s) {
    return std::move(s).error().withContext("installing the serving certificate");
  }
  report.fingerprint = store.fingerprint();
  if (auto info = certs::inspect(get(material, kLeafCert))) report.leafNotAfter = info->front().notAfter;
  if (options.configuration && !options.configurationName.empty()) {
    auto applied = maintainConfiguration(client, options.configurationName, *options.configuration,
                                         get(material, kBundle));
    if (applied) {
      report.configurationApplied = *applied;
    } else {
      report.publishProblem = applied.error().describe();
    }
  } else if (!options.configurationName.empty()) {
    auto published = publishBundle(client, options.configurationName, get(material, kBundle));
    if (published) {
      report.bundlePublished = *published;
    } else {
      report.publishProblem = published.error().describe();
    }
  }
  return report;
}

core::Result<bool> reloadCertificateFiles(const std::string& dir, CertificateStore& store,
                                          FileState& lastLoaded) {
  const std::string certPath = dir + "/tls.crt";
  const std::string keyPath = dir + "/tls.key";
  auto cert = kube::readFile(certPath);
  if (!cert) return std::move(cert).error();
  auto key = kube::readFile(keyPath);
  if (!key) return std::move(key).error();
  if (*cert == lastLoaded.certPem && *key == lastLoaded.keyPem) return false;
  // A writer that replaces the two files one after the other leaves a moment where they do not
  // match: update() refuses that pair and the next poll picks up the finished one.
  if (core::Status s = store.update(*cert, *key); !s) {
    return std::move(s).error().withContext("loading " + certPath + " and " + keyPath);
  }
  lastLoaded = FileState{*cert, *key};
  return true;
}

namespace {

bool isServingIp(const std::string& host) {
  unsigned char buffer[16];
  return inet_pton(AF_INET, host.c_str(), buffer) == 1 || inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

}  // namespace

core::Result<ServingNames> servingNames(const std::string& webhookUrl, const std::string& service,
                                        const std::string& serviceNamespace, const std::string& clusterDomain) {
  ServingNames names;
  if (webhookUrl.empty()) {
    names.dnsNames = certs::serviceDnsNames(service, serviceNamespace, clusterDomain);
    return names;
  }
  const std::string& url = webhookUrl;
  auto bad = [&](const std::string& why) {
    return core::makeError(core::ErrorKind::InvalidInput, "--webhook-url " + url + ": " + why);
  };
  const std::string scheme = "https://";
  if (url.rfind(scheme, 0) != 0) return bad("must start with https://");
  const auto slash = url.find('/', scheme.size());
  const std::string authority =
      url.substr(scheme.size(), slash == std::string::npos ? std::string::npos : slash - scheme.size());
  const std::string path = slash == std::string::npos ? "" : url.substr(slash);
  if (path != kMutatePath) return bad("the path must be " + std::string(kMutatePath));
  std::string host = authority;
  if (!host.empty() && host.front() == '[') {
    const auto close = host.find(']');
    if (close == std::string::npos) return bad("unclosed [");
    host = host.substr(1, close - 1);
  } else if (const auto colon = host.rfind(':'); colon != std::string::npos) {
    host = host.substr(0, colon);
  }
  if (host.empty()) return bad("no host");
  if (isServingIp(host)) {
    names.ipAddresses = {host};
  } else {
    names.dnsNames = {host};
  }
  return names;
}

}  // namespace restarter::webhook
