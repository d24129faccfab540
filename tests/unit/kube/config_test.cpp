#include "restarter/kube/config.hpp"

#include <map>

#include <catch2/catch.hpp>

#include "restarter/testing/temp_dir.hpp"

using restarter::core::ErrorKind;
using namespace restarter::kube;
using restarter::testing::TempDir;

namespace {

EnvLookup envOf(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

const char* kFirst = R"(apiVersion: v1
kind: Config
current-context: one
clusters:
- name: c1
  cluster:
    server: https://127.0.0.1:6443/
    certificate-authority: pki/ca.crt
    tls-server-name: kubernetes
- name: shared
  cluster: {server: https://first.example:443}
users:
- name: u1
  user:
    client-certificate: pki/admin.crt
    client-key: pki/admin.key
contexts:
- name: one
  context: {cluster: c1, user: u1, namespace: team-a}
- name: shared-ctx
  context: {cluster: shared, user: u2}
)";

const char* kSecond = R"(apiVersion: v1
kind: Config
current-context: two
clusters:
- name: shared
  cluster: {server: https://second.example:443}
users:
- name: u2
  user: {token: abc}
contexts:
- name: two
  context: {cluster: shared, user: u2}
)";

}  // namespace

TEST_CASE("KUBECONFIG files merge with first-wins and relative paths", "[kube][config]") {
  TempDir dir;
  dir.write("a/pki/ca.crt", "CA PEM");
  dir.write("a/pki/admin.crt", "CERT PEM");
  dir.write("a/pki/admin.key", "KEY PEM");
  auto first = dir.write("a/config", kFirst);
  auto second = dir.write("b/config", kSecond);

  LoadOptions options;
  options.env = envOf({{"KUBECONFIG", first + "::" + dir.path() + "/missing:" + second}});
  auto config = loadConfig(options);
  REQUIRE(config.ok());
  CHECK(config->contextName == "one");  // first file's current-context wins
  CHECK(config->server == "https://127.0.0.1:6443");
  CHECK(config->caPem == "CA PEM");
  CHECK(config->clientCertPem == "CERT PEM");
  CHECK(config->clientKeyPem == "KEY PEM");
  CHECK(config->tlsServerName == "kubernetes");
  CHECK(config->namespace_ == "team-a");

  SECTION("--context picks another context; the first definition of a cluster name wins") {
    options.context = "shared-ctx";
    auto shared = loadConfig(options);
    REQUIRE(shared.ok());
    CHECK(shared->server == "https://first.example:443");
    CHECK(shared->token == "abc");  // user u2 only exists in the second file
    CHECK(shared->namespace_ == "default");
  }
  SECTION("-n overrides the context namespace") {
    options.namespace_ = "other";
    CHECK(loadConfig(options)->namespace_ == "other");
  }
  SECTION("--kubeconfig reads only that file") {
    options.kubeconfigPath = second;
    auto only = loadConfig(options);
    REQUIRE(only.ok());
    CHECK(only->contextName == "two");
    CHECK(only->server == "https://second.example:443");
  }
}

TEST_CASE("inline data fields are base64 and win over files", "[kube][config]") {
  auto config = resolveKubeconfig({{"/x/config", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://h:1", certificate-authority-data: Q0E=, certificate-authority: nope}}]
users: [{name: u, user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)"}},
                                  LoadOptions{});
  REQUIRE(config.ok());
  CHECK(config->caPem == "CA");
  CHECK(config->clientCertPem == "CERT");
  CHECK(config->clientKeyPem == "KEY");
}

TEST_CASE("the exec stanza is read with its defaults and checks", "[kube][config]") {
  auto config = resolveKubeconfig({{"/etc/kube/config", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://h:1", insecure-skip-tls-verify: true, proxy-url: "http://127.0.0.1:3128"}}]
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./bin/plugin
      args: [get-token, --x]
      env: [{name: A, value: "1"}]
      provideClusterInfo: true
contexts: [{name: c, context: {cluster: k, user: u}}]
)"}},
                                  LoadOptions{});
  REQUIRE(config.ok());
  REQUIRE(config->exec);
  CHECK(config->exec->command == "/etc/kube/bin/plugin");
  CHECK(config->exec->args == std::vector<std::string>{"get-token", "--x"});
  CHECK(config->exec->env.at(0) == std::pair<std::string, std::string>{"A", "1"});
  CHECK(config->exec->interactiveMode == ExecConfig::InteractiveMode::IfAvailable);
  CHECK(config->exec->provideClusterInfo);
  CHECK(config->insecureSkipTlsVerify);
  CHECK(config->proxyUrl == "http://127.0.0.1:3128");
}

TEST_CASE("bad configuration names the file and the context and the field", "[kube][config]") {
  auto check = [](const std::string& yaml, const std::vector<std::string>& parts) {
    auto config = resolveKubeconfig({{"/cfg/kubeconfig", yaml}}, LoadOptions{});
    REQUIRE_FALSE(config.ok());
    CHECK(config.error().kind == ErrorKind::InvalidInput);
    INFO(config.error().describe());
    for (const auto& part : parts) CHECK(config.error().message.find(part) != std::string::npos);
  };
  const std::string head = "current-context: c\ncontexts: [{name: c, context: {cluster: k, user: u}}]\n";
  check(head + "clusters: [{name: k, cluster: {server: [1]}}]\nusers: [{name: u, user: {}}]\n",
        {"/cfg/kubeconfig", "context \"c\"", "cluster \"k\"", "\"server\""});
  check(
      head +
          "clusters: [{name: k, cluster: {server: 'https://h'}}]\nusers: [{name: u, user: {client-key: /nonexistent/key, client-certificate-data: QQ==}}]\n",
      {"/cfg/kubeconfig", "user \"u\"", "\"client-key\""});
  check(
      head +
          "clusters: [{name: k, cluster: {server: 'https://h', certificate-authority-data: '%%%'}}]\nusers: [{name: u, user: {}}]\n",
      {"certificate-authority-data", "base64"});
  check(head + "clusters: []\nusers: []\n", {"context \"c\"", "cluster \"k\" not found"});
  check(
      head +
          "clusters: [{name: k, cluster: {server: 'https://h'}}]\nusers: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: x}}}]\n",
      {"user \"u\"", "interactiveMode"});
  check(
      head +
          "clusters: [{name: k, cluster: {server: 'https://h'}}]\nusers: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1alpha1, command: x}}}]\n",
      {"apiVersion"});
  check(head + "clusters: [{name: k, cluster: {server: 'h:1'}}]\n", {"server"});
  check("current-context: c\ncontexts: {c: 1}\n", {"contexts"});
  check("a: [b\n", {"/cfg/kubeconfig", "YAML"});
  check("- 1\n", {"mapping"});
  check("clusters: []\n", {"no context"});
}

TEST_CASE("the kubeconfig flag naming a missing file is an error", "[kube][config]") {
  LoadOptions options;
  options.kubeconfigPath = "/nonexistent/kubeconfig";
  options.env = envOf({});
  auto config = loadConfig(options);
  REQUIRE_FALSE(config.ok());
  CHECK(config.error().message.find("/nonexistent/kubeconfig") != std::string::npos);
}

TEST_CASE("in-cluster configuration from the service account", "[kube][config]") {
  TempDir dir;
  dir.write("token", "tok\n");
  dir.write("ca.crt", "CA");
  dir.write("namespace", "kube-system\n");
  LoadOptions options;
  options.serviceAccountDir = dir.path();
  options.env =
      envOf({{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "443"}, {"HOME", dir.path()}});
  auto config = loadConfig(options);  // no kubeconfig anywhere: falls back to in-cluster
  REQUIRE(config.ok());
  CHECK(config->server == "https://[fd00::1]:443");
  CHECK(config->tokenFile == dir.path() + "/token");
  CHECK(config->caPem == "CA");
  CHECK(config->namespace_ == "kube-system");
  CHECK(config->source == "in-cluster");

  options.env = envOf({{"HOME", dir.path()}});
  auto none = loadConfig(options);
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().kind == ErrorKind::NotFound);
}

TEST_CASE("a kubeconfig nested 100000 levels deep is an error and neither a crash nor a hang",
          "[kube][config]") {
  // yaml-cpp 0.7 throws YAML::DeepRecursion at 500 levels. A flow sequence on one line is scanned
  // whole before the parser recurses (200 KB here); the block forms stop where level 500 starts.
  std::string compactBlock = "clusters:\n";  // "- - - ...": each "- " one indentation level deeper
  for (int i = 0; i < 100000; ++i) compactBlock += "- ";
  compactBlock += "x\n";
  std::string flowMaps;  // {a: {a: {a: ... x}}}
  for (int i = 0; i < 100000; ++i) flowMaps += "{a: ";
  flowMaps += "x" + std::string(100000, '}');
  std::string indented;  // a real indented mapping, 600 levels ("a:" lines, two spaces more each)
  for (int i = 0; i < 600; ++i) indented += std::string(2 * static_cast<std::size_t>(i), ' ') + "a:\n";
  indented += std::string(1200, ' ') + "x\n";
  for (const std::string& yaml : {"clusters: " + std::string(100000, '[') + std::string(100000, ']') + "\n",
                                  "clusters: " + flowMaps + "\n", compactBlock, indented}) {
    auto config = resolveKubeconfig({{"/cfg/kubeconfig", yaml}}, LoadOptions{});
    REQUIRE_FALSE(config.ok());
    CHECK(config.error().kind == ErrorKind::InvalidInput);
    INFO(config.error().message);
    CHECK(config.error().message.find("/cfg/kubeconfig") != std::string::npos);
    CHECK(config.error().message.find("levels deep") != std::string::npos);
  }
}

TEST_CASE("a kubeconfig larger than 4 MiB is refused before it is parsed", "[kube][config]") {
  const std::string comment = "# " + std::string((std::size_t{4} << 20) - 3, 'x') + "\n";  // exactly 4 MiB
  auto at = resolveKubeconfig({{"/cfg/kubeconfig", comment}}, LoadOptions{});
  REQUIRE_FALSE(at.ok());  // read: a file of only a comment is a configuration without a context
  CHECK(at.error().message.find("no context") != std::string::npos);
  auto over = resolveKubeconfig({{"/cfg/kubeconfig", comment + "\n"}}, LoadOptions{});
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().kind == ErrorKind::InvalidInput);
  CHECK(over.error().message == "kubeconfig /cfg/kubeconfig: is 4194305 bytes, more than the limit of 4194304");
}
