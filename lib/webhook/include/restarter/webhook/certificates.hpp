#pragma once
// Where the webhook's serving certificate comes from.
//
// Managed (the default): a Secret shared by all replicas holds the CA (with its key), the serving
// certificate and key, the published CA bundle and, while the CA rolls, the staged next CA:
//
//   ca.crt ca.key             the current CA
//   next-ca.crt next-ca.key   the staged next CA (only during a CA roll)
//   tls.crt tls.key           the serving certificate, signed by the current CA
//   ca-bundle.crt             every CA to trust: the current, the staged next, and older ones
//                             until they expire (what goes into the webhook's caBundle)
//
// Each check (at start, then periodically by wall-clock time) reads the Secret, lets
// core::decideRotation say what to do, writes the Secret back if anything changed (create when
// missing, replace at the read resourceVersion otherwise: a replica that loses the race gets
// AlreadyExists or Conflict, re-reads, and adopts the winner's certificates), installs the serving
// certificate into the CertificateStore and publishes ca-bundle.crt into every webhook of the
// MutatingWebhookConfiguration whose caBundle differs. With `configuration` set (serve-webhook
// --manage-configuration, the in-cluster install) the check instead keeps the whole configuration
// as given, caBundle included: it reads the live object and, when it is missing or differs in any
// field the desired one has, applies it (server-side apply, kServeWebhookFieldManager, force).
// Nothing is written when it is up to date, so N replicas checking every few seconds cost N GETs.
//
// Files (--cert-dir): tls.crt and tls.key of a directory, reloaded when their content changes.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/certs/certs.hpp"
#include "restarter/core/result.hpp"
#include "restarter/core/rotation.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/webhook/server.hpp"

namespace restarter::webhook {

struct ManagedOptions {
  std::string secretNamespace;
  std::string secretName;
  std::string configurationName;  // the MutatingWebhookConfiguration; empty: publish nowhere
  // The configuration to create and maintain (buildMutatingWebhookConfiguration, named
  // configurationName, without caBundle); nullopt: only publish the bundle into an existing one.
  std::optional<nlohmann::json> configuration;
  certs::ServingRequest serving;  // names, validity and key type of the serving certificate
  certs::CaRequest ca;            // validity and key type of the CA
  core::RotationPolicy policy;
};

struct CheckReport {
  std::vector<std::string> actions;  // rotation actions taken, with reasons ("issue-leaf: ...")
  bool secretWritten = false;
  bool bundlePublished = false;       // the configuration's caBundle was changed
  bool configurationApplied = false;  // the managed configuration was created or corrected
  std::string publishProblem;         // why publishing failed (the Secret part still succeeded)
  std::string fingerprint;            // of the serving certificate now in use
  core::TimePoint leafNotAfter;
};

// One check of the managed certificates at wall-clock time `now`. On error nothing in `store`
// changes (the server keeps its current certificate). Thread-compatible: one caller at a time.
core::Result<CheckReport> checkManagedCertificates(kube::Client& client, const ManagedOptions& options,
                                                   CertificateStore& store, core::TimePoint now);

// Reads `dir`/tls.crt and `dir`/tls.key and installs them when their content differs from what
// `lastLoaded` holds (updated on success). Returns true when a new certificate was installed.
struct FileState {
  std::string certPem;
  std::string keyPem;
};
core::Result<bool> reloadCertificateFiles(const std::string& dir, CertificateStore& store,
                                          FileState& lastLoaded);

// The names the serving certificate carries: the host of `webhookUrl` (as an IP or DNS SAN) when
// one is given, else the DNS names of Service `service` in `serviceNamespace` (short to fully
// qualified in `clusterDomain`). InvalidInput for a URL that is not https://HOST[:PORT]/mutate.
struct ServingNames {
  std::vector<std::string> dnsNames;
  std::vector<std::string> ipAddresses;
};
core::Result<ServingNames> servingNames(const std::string& webhookUrl, const std::string& service,
                                        const std::string& serviceNamespace, const std::string& clusterDomain);

}  // namespace restarter::webhook
