#pragma once
// `restarter gen-certs`: manual certificate bootstrap for the webhook. Creates a CA and a serving
// certificate signed by it and writes `ca.crt`, `tls.crt` and `tls.key` (mode 0600), or, with
// --secret, stores them in a `kubernetes.io/tls` Secret (to mount as serve-webhook's --cert-dir;
// install-mwc --ca-bundle-secret reads its ca.crt). Neither is overwritten without --force. The CA's
// private key is not kept: nothing can mint further certificates from these files; renewing means
// running gen-certs again (with --force) and publishing the new ca.crt as the caBundle.

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "restarter/certs/certs.hpp"
#include "restarter/cli/subcommand.hpp"
#include "restarter/core/time.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/webhook/mwc.hpp"

namespace restarter::cli {

struct GenCertsOptions {
  std::filesystem::path outDir = ".";
  std::string service = webhook::kDefaultServiceName;
  std::string serviceNamespace = webhook::kDefaultServiceNamespace;
  std::string clusterDomain = "cluster.local";
  // The serving certificate as the flags ask for it, with the library's defaults: empty dnsNames
  // means certs::serviceDnsNames(service, namespace, domain); ipAddresses e.g. 127.0.0.1 for a
  // webhook reached by URL; its keyType is the CA's too.
  certs::ServingRequest serving;
  certs::CaRequest ca;         // its validity (--ca-validity); its keyType is serving's
  bool force = false;          // overwrite existing files
  bool printCaBundle = false;  // print base64(ca.crt) on stdout
  // Secret mode: store in this Secret instead of files.
  std::string secretName;
  std::string secretNamespace;  // empty: serviceNamespace
  std::string kubeconfig;
  std::string context;
};

// Runs gen-certs with parsed options at time `now`. Writes nothing unless it can write all three
// files (existing files are kept unless `force`).
int runGenCerts(const GenCertsOptions& options, Io& io, core::TimePoint now);

// Secret mode of runGenCerts, through `client` (which the caller made from the options).
int runGenCertsToSecret(const GenCertsOptions& options, Io& io, core::TimePoint now, kube::Client& client);

// The registry entry: parses flags, then runs with the wall clock.
Subcommand genCertsCommand();

}  // namespace restarter::cli
