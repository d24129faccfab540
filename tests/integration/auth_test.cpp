// Credentials against the real apiserver: client certificates (inline and files), a service
// account token (inline and tokenFile), and an exec credential plugin that is run, cached, and run
// again after a 401.

#include <sys/stat.h>

#include <fstream>

#include <catch2/catch.hpp>

#include "restarter/kube/client.hpp"
#include "restarter/testing/temp_dir.hpp"
#include "support.hpp"

using namespace restarter;
using namespace restarter::integration;
using kube::json;
using namespace std::chrono_literals;

namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::unique_ptr<kube::Client> clientFor(const std::string& kubeconfigPath) {
  kube::LoadOptions options;
  options.kubeconfigPath = kubeconfigPath;
  auto config = kube::loadConfig(options);
  if (!config) FAIL(config.error().describe());
  auto client = kube::Client::create(*config);
  if (!client) FAIL(client.error().describe());
  return std::move(client).value();
}

// A ServiceAccount with admin rights in `ns` and a one-hour token for it (TokenRequest).
std::string serviceAccountToken(kube::Client& admin, const std::string& ns) {
  REQUIRE(admin
              .create(kube::resources::serviceAccounts(), ns,
                      {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", "tester"}}}})
              .ok());
  kube::ResourceRef roleBindings{"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true};
  json binding = {
      {"apiVersion", "rbac.authorization.k8s.io/v1"},
      {"kind", "RoleBinding"},
      {"metadata", {{"name", "tester-admin"}}},
      {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "admin"}}},
      {"subjects", json::array({{{"kind", "ServiceAccount"}, {"name", "tester"}, {"namespace", ns}}})}};
  auto bound = admin.create(roleBindings, ns, binding);
  REQUIRE(bound.ok());
  json request = {{"apiVersion", "authentication.k8s.io/v1"},
                  {"kind", "TokenRequest"},
                  {"spec", {{"expirationSeconds", 3600}}}};
  auto token = admin.createSubresource(kube::resources::serviceAccounts(), ns, "tester", "token", request);
  if (!token) FAIL(token.error().describe());
  return (*token)["status"]["token"].get<std::string>();
}

std::string clusterStanza(const kube::ConnectionConfig& admin, const std::string& dir) {
  writeFile(dir + "/ca.crt", admin.caPem);
  // A relative certificate-authority path: resolved against the kubeconfig's directory.
  return "clusters:\n- name: local\n  cluster:\n    server: " + admin.server +
         "\n    certificate-authority: ca.crt\n";
}

}  // namespace

TEST_CASE("a kubeconfig with a client certificate works", "[integration][auth]") {
  auto admin = adminConfig();
  REQUIRE_FALSE(admin.clientCertPem.empty());  // the cluster's admin kubeconfig uses one
  const restarter::testing::TempDir temp;
  const std::string& dir = temp.path();
  writeFile(dir + "/admin.crt", admin.clientCertPem);
  writeFile(dir + "/admin.key", admin.clientKeyPem);
  writeFile(dir + "/config",
            clusterStanza(admin, dir) +
                "users:\n- name: admin\n  user:\n    client-certificate: admin.crt\n"
                "    client-key: " +
                dir +
                "/admin.key\n"
                "contexts:\n- name: c\n  context: {cluster: local, user: admin, namespace: kube-system}\n"
                "current-context: c\n");
  auto client = clientFor(dir + "/config");
  CHECK(client->defaultNamespace() == "kube-system");
  auto namespaces = client->list(kube::resources::namespaces(), "");
  REQUIRE(namespaces.ok());
  CHECK(namespaces->items.size() >= 4);
}

TEST_CASE("a kubeconfig with a token user works and a bad token is Unauthorized", "[integration][auth]") {
  auto admin = adminClient();
  TestNamespace ns(*admin, "it-token");
  std::string token = serviceAccountToken(*admin, ns.name());
  auto config = adminConfig();
  const restarter::testing::TempDir temp;
  const std::string& dir = temp.path();
  writeFile(dir + "/token", token + "\n");
  auto write = [&](const std::string& user) {
    writeFile(dir + "/config", clusterStanza(config, dir) + "users:\n- name: u\n  user: " + user +
                                   "\ncontexts:\n- name: c\n  context: {cluster: local, user: u, namespace: " +
                                   ns.name() + "}\ncurrent-context: c\n");
    return clientFor(dir + "/config");
  };

  auto inlineToken = write("{token: " + token + "}");
  auto created = inlineToken->create(
      kube::resources::configMaps(), ns.name(),
      {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "from-token"}}}});
  REQUIRE(created.ok());
  auto forbidden = inlineToken->list(kube::resources::configMaps(), "kube-system");
  REQUIRE_FALSE(forbidden.ok());
  CHECK(forbidden.error().kind == core::ErrorKind::Forbidden);

  auto fileToken = write("{tokenFile: token}");
  auto got = fileToken->get(kube::resources::configMaps(), ns.name(), "from-token");
  REQUIRE(got.ok());

  auto bad = write("{token: not-a-token}");
  auto denied = bad->list(kube::resources::configMaps(), ns.name());
  REQUIRE_FALSE(denied.ok());
  CHECK(denied.error().kind == core::ErrorKind::Unauthorized);
}

TEST_CASE("an exec credential plugin is used and cached and run again after a 401", "[integration][auth]") {
  auto admin = adminClient();
  TestNamespace ns(*admin, "it-exec");
  std::string token = serviceAccountToken(*admin, ns.name());
  auto config = adminConfig();
  const restarter::testing::TempDir temp;
  const std::string& dir = temp.path();
  writeFile(dir + "/token", token);
  // The first run hands out a wrong token (the server answers 401); later runs the real one.
  writeFile(dir + "/plugin.sh", R"(#!/bin/sh
n=$(cat "$PLUGIN_DIR/count" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$PLUGIN_DIR/count"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$PLUGIN_DIR/info"
if [ "$n" = 1 ]; then tok=wrong; else tok=$(cat "$PLUGIN_DIR/token"); fi
exp=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%M:%SZ)
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"}}' "$tok" "$exp"
)");
  ::chmod((dir + "/plugin.sh").c_str(), 0755);
  writeFile(dir + "/config", clusterStanza(config, dir) +
                                 "users:\n- name: u\n  user:\n    exec:\n"
                                 "      apiVersion: client.authentication.k8s.io/v1\n"
                                 "      command: ./plugin.sh\n"
                                 "      interactiveMode: Never\n"
                                 "      provideClusterInfo: true\n"
                                 "      env: [{name: PLUGIN_DIR, value: " +
                                 dir +
                                 "}]\n"
                                 "contexts:\n- name: c\n  context: {cluster: local, user: u, namespace: " +
                                 ns.name() + "}\ncurrent-context: c\n");
  auto client = clientFor(dir + "/config");
  auto first = client->list(kube::resources::configMaps(), ns.name());
  REQUIRE(first.ok());
  CHECK(readFile(dir + "/count") == "2\n");  // wrong token, 401, run again, success
  for (int i = 0; i < 5; ++i) REQUIRE(client->list(kube::resources::configMaps(), ns.name()).ok());
  CHECK(readFile(dir + "/count") == "2\n");  // cached until its expirationTimestamp
  auto info = json::parse(readFile(dir + "/info"));
  CHECK(info["kind"] == "ExecCredential");
  CHECK(info["spec"]["interactive"] == false);
  CHECK(info["spec"]["cluster"]["server"] == config.server);
}
