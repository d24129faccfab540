#pragma once
// Connection configuration, resolved the way kubectl resolves it (client-go clientcmd):
//
//   1. `--kubeconfig <file>` (LoadOptions::kubeconfigPath): that one file only.
//   2. else `KUBECONFIG`: a ':'-separated list of files, merged in order. Missing files are
//      skipped; empty entries ignored. For clusters, users and contexts the FIRST file that defines
//      a name wins (later definitions of the same name are ignored as whole entries);
//      `current-context` is taken from the first file that sets it.
//   3. else `~/.kube/config` if it exists.
//   4. else in-cluster (KUBERNETES_SERVICE_HOST/PORT and the service-account files), if present.
//   `--context` overrides current-context. Namespace: `-n`, else the context's, else "default"
//   (in-cluster: the service account's namespace file).
//
// Relative paths inside a file (certificate-authority, client-certificate, client-key, tokenFile,
// and an exec command containing '/') are relative to the directory of the file that defined them.
// Unknown fields are ignored; fields of the wrong type are errors naming the file, the entry and the
// field, as are missing references (context -> cluster/user) and unreadable credential files.

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "restarter/core/result.hpp"

namespace restarter::kube {

// The `exec` stanza of a user (client.authentication.k8s.io/v1 or v1beta1).
struct ExecConfig {
  std::string apiVersion;
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  enum class InteractiveMode { Never, IfAvailable, Always };
  InteractiveMode interactiveMode = InteractiveMode::IfAvailable;
  bool provideClusterInfo = false;
  std::string installHint;
};

// Everything needed to talk to one apiserver as one user. PEM material is loaded (read from files)
// when the configuration is resolved; tokenFile is kept as a path because it rotates.
struct ConnectionConfig {
  std::string server;  // https://host:port[/prefix]
  std::string caPem;   // empty: the system trust store
  bool insecureSkipTlsVerify = false;
  std::string tlsServerName;  // SNI and the name verified in the server certificate
  std::string proxyUrl;

  std::string clientCertPem;  // both or neither
  std::string clientKeyPem;
  std::string token;
  std::string tokenFile;  // re-read as it rotates (auth.hpp)
  std::optional<ExecConfig> exec;

  std::string namespace_;   // the effective namespace
  std::string contextName;  // empty in-cluster
  std::string source;       // for messages: the kubeconfig file(s) or "in-cluster"
};

using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup processEnv();

struct LoadOptions {
  std::string kubeconfigPath;  // --kubeconfig
  std::string context;         // --context
  std::string namespace_;      // -n / --namespace
  EnvLookup env = processEnv();
  // Directory of the service-account files for in-cluster configuration.
  std::string serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";
};

core::Result<ConnectionConfig> loadConfig(const LoadOptions& options);

// Parses kubeconfig files' contents (for tests and fuzzing; `loadConfig` reads the files).
// `files` are (path, contents) in merge order; the path names the file in errors and anchors
// relative paths.
core::Result<ConnectionConfig> resolveKubeconfig(const std::vector<std::pair<std::string, std::string>>& files,
                                                 const LoadOptions& options);

// In-cluster: KUBERNETES_SERVICE_HOST/PORT, token file (path kept: it rotates), ca.crt, namespace.
// NotFound when not running in a cluster.
core::Result<ConnectionConfig> inClusterConfig(const LoadOptions& options);

}  // namespace restarter::kube
