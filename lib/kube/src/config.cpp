#include "restarter/kube/config.hpp"

#include <cstdlib>
#include <filesystem>
#include <map>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "restarter/core/base64.hpp"
#include "restarter/kube/files.hpp"

namespace restarter::kube {
namespace {

using core::ErrorKind;
namespace fs = std::filesystem;

// One named entry (cluster, user or context) and the file that defined it.
struct Entry {
  std::string file;
  YAML::Node body;  // the inner "cluster"/"user"/"context" map
};

struct Merged {
  std::map<std::string, Entry> clusters, users, contexts;
  std::string currentContext;
  std::string currentContextFile;
  bool empty = true;
};

core::Error configError(const std::string& where, std::string message) {
  return core::makeError(ErrorKind::InvalidInput, "kubeconfig " + where + ": " + std::move(message));
}

std::string quote(const std::string& s) { return "\"" + s + "\""; }

// Reads a string field; absent -> "". Errors name `where` and the field.
core::Result<std::string> stringField(const YAML::Node& map, const char* field, const std::string& where) {
  YAML::Node node = map[field];
  if (!node || node.IsNull()) return std::string();
  if (!node.IsScalar()) return configError(where, "field " + quote(field) + " must be a string");
  return node.Scalar();
}

core::Result<bool> boolField(const YAML::Node& map, const char* field, const std::string& where) {
  YAML::Node node = map[field];
  if (!node || node.IsNull()) return false;
  bool value = false;
  if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value))
    return configError(where, "field " + quote(field) + " must be true or false");
  return value;
}

// The largest kubeconfig file read: 4 MiB, some 700 clusters, users and contexts with embedded RSA
// certificates and keys. Why a limit at all: yaml-cpp holds a document as nodes of a few hundred
// bytes each, so flow collections (`[1,1,1,...` or `[[[[...`) cost ~240 times their text
// (measured: 1 MiB of either took ~250 MB and ~1 s), while real kubeconfigs (block style, long
// base64 scalars) a few times. Nesting needs no check of ours: yaml-cpp 0.7 throws
// YAML::DeepRecursion at 500 levels, flow or block, before recursing further.
constexpr std::size_t kMaxKubeconfigBytes = std::size_t{4} << 20;

core::Status mergeFile(const std::string& path, const std::string& text, Merged& merged) {
  if (text.size() > kMaxKubeconfigBytes) {
    return configError(path, "is " + std::to_string(text.size()) + " bytes, more than the limit of " +
                                 std::to_string(kMaxKubeconfigBytes));
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    return configError(path, "not valid YAML: nested " + std::to_string(e.depth()) + " levels deep at line " +
                                 std::to_string(e.mark.line + 1) + ", deeper than yaml-cpp reads");
  } catch (const YAML::Exception& e) {
    return configError(path, std::string("not valid YAML: ") + e.what());
  } catch (const std::exception& e) {
    return configError(path, std::string("cannot be parsed: ") + e.what());
  }
  if (!root || root.IsNull()) return core::okStatus();  // an empty file is an empty config
  if (!root.IsMap()) return configError(path, "top level must be a mapping");
  merged.empty = false;

  auto section = [&](const char* listName, const char* innerName,
                     std::map<std::string, Entry>& into) -> core::Status {
    YAML::Node list = root[listName];
    if (!list || list.IsNull()) return core::okStatus();
    if (!list.IsSequence()) return configError(path, quote(listName) + " must be a list");
    std::size_t index = 0;
    for (const auto& item : list) {
      std::string where = path + ": " + listName + "[" + std::to_string(index++) + "]";
      if (!item.IsMap()) return configError(where, "must be a mapping");
      auto name = stringField(item, "name", where);
      if (!name) return std::move(name).error();
      if (name->empty()) return configError(where, "field \"name\" is missing");
      YAML::Node body = item[innerName];
      if (body && !body.IsNull() && !body.IsMap())
        return configError(where + " " + quote(*name), "field " + quote(innerName) + " must be a mapping");
      into.try_emplace(*name, Entry{path, body ? body : YAML::Node(YAML::NodeType::Map)});
    }
    return core::okStatus();
  };
  try {
    if (auto s = section("clusters", "cluster", merged.clusters); !s) return s;
    if (auto s = section("users", "user", merged.users); !s) return s;
    if (auto s = section("contexts", "context", merged.contexts); !s) return s;
    auto current = stringField(root, "current-context", path);
    if (!current) return std::move(current).error();
    if (merged.currentContext.empty() && !current->empty()) {
      merged.currentContext = *current;
      merged.currentContextFile = path;
    }
  } catch (const std::exception& e) {
    return configError(path, std::string("cannot be read: ") + e.what());
  }
  return core::okStatus();
}

// A path from a kubeconfig, relative to the file that defined it.
std::string resolvePath(const std::string& definingFile, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(definingFile).parent_path() / path).lexically_normal().string();
}

// PEM from "<field>" (a file) or "<field>-data" (base64, inline); the data form wins, as in kubectl.
core::Result<std::string> pemField(const Entry& entry, const char* fileField, const char* dataField,
                                   const std::string& where) {
  auto data = stringField(entry.body, dataField, where);
  if (!data) return std::move(data).error();
  if (!data->empty()) {
    auto decoded = core::base64Decode(*data);
    if (!decoded) return configError(where, "field " + quote(dataField) + " is not valid base64");
    return *decoded;
  }
  auto file = stringField(entry.body, fileField, where);
  if (!file) return std::move(file).error();
  if (file->empty()) return std::string();
  auto contents = readFile(resolvePath(entry.file, *file));
  if (!contents) {
    return configError(where, "field " + quote(fileField) + ": " + contents.error().message);
  }
  return std::move(contents).value();
}

core::Result<ExecConfig> execField(const Entry& entry, const std::string& where) {
  YAML::Node node = entry.body["exec"];
  ExecConfig exec;
  std::string at = where + " exec";
  if (!node.IsMap()) return configError(where, "field \"exec\" must be a mapping");
  auto apiVersion = stringField(node, "apiVersion", at);
  if (!apiVersion) return std::move(apiVersion).error();
  exec.apiVersion = *apiVersion;
  if (exec.apiVersion != "client.authentication.k8s.io/v1" &&
      exec.apiVersion != "client.authentication.k8s.io/v1beta1") {
    return configError(at, "field \"apiVersion\": unsupported " + quote(exec.apiVersion) +
                               " (want client.authentication.k8s.io/v1 or v1beta1)");
  }
  auto command = stringField(node, "command", at);
  if (!command) return std::move(command).error();
  if (command->empty()) return configError(at, "field \"command\" is missing");
  // client-go resolves a command with a path separator relative to the kubeconfig's directory.
  exec.command = command->find('/') != std::string::npos ? resolvePath(entry.file, *command) : *command;
  if (YAML::Node args = node["args"]; args && !args.IsNull()) {
    if (!args.IsSequence()) return configError(at, "field \"args\" must be a list of strings");
    for (const auto& arg : args) {
      if (!arg.IsScalar()) return configError(at, "field \"args\" must be a list of strings");
      exec.args.push_back(arg.Scalar());
    }
  }
  if (YAML::Node env = node["env"]; env && !env.IsNull()) {
    if (!env.IsSequence()) return configError(at, "field \"env\" must be a list");
    for (const auto& item : env) {
      if (!item.IsMap()) return configError(at, "field \"env\" items must be {name, value}");
      auto name = stringField(item, "name", at + " env");
      auto value = stringField(item, "value", at + " env");
      if (!name) return std::move(name).error();
      if (!value) return std::move(value).error();
      if (name->empty()) return configError(at, "field \"env\": an item has no name");
      exec.env.emplace_back(*name, *value);
    }
  }
  auto mode = stringField(node, "interactiveMode", at);
  if (!mode) return std::move(mode).error();
  if (mode->empty()) {
    // v1 requires the field; v1beta1 defaults to IfAvailable (client-go).
    if (exec.apiVersion == "client.authentication.k8s.io/v1")
      return configError(at, "field \"interactiveMode\" is required for client.authentication.k8s.io/v1");
  } else if (*mode == "Never") {
    exec.interactiveMode = ExecConfig::InteractiveMode::Never;
  } else if (*mode == "IfAvailable") {
    exec.interactiveMode = ExecConfig::InteractiveMode::IfAvailable;
  } else if (*mode == "Always") {
    exec.interactiveMode = ExecConfig::InteractiveMode::Always;
  } else {
    return configError(at,
                       "field \"interactiveMode\": " + quote(*mode) + " is not Never, IfAvailable or Always");
  }
  auto provide = boolField(node, "provideClusterInfo", at);
  if (!provide) return std::move(provide).error();
  exec.provideClusterInfo = *provide;
  auto hint = stringField(node, "installHint", at);
  if (!hint) return std::move(hint).error();
  exec.installHint = *hint;
  return exec;
}

core::Result<ConnectionConfig> resolve(const Merged& merged, const LoadOptions& options,
                                       const std::string& source) {
  std::string contextName = options.context.empty() ? merged.currentContext : options.context;
  if (contextName.empty()) {
    return configError(source, "no context: current-context is not set and --context not given");
  }
  auto ctxIt = merged.contexts.find(contextName);
  if (ctxIt == merged.contexts.end()) {
    return configError(source, "context " + quote(contextName) + " not found");
  }
  const Entry& ctx = ctxIt->second;
  std::string ctxWhere = ctx.file + ": context " + quote(contextName);
  auto clusterName = stringField(ctx.body, "cluster", ctxWhere);
  if (!clusterName) return std::move(clusterName).error();
  auto userName = stringField(ctx.body, "user", ctxWhere);
  if (!userName) return std::move(userName).error();
  auto ns = stringField(ctx.body, "namespace", ctxWhere);
  if (!ns) return std::move(ns).error();
  if (clusterName->empty()) return configError(ctxWhere, "field \"cluster\" is missing");
  auto clIt = merged.clusters.find(*clusterName);
  if (clIt == merged.clusters.end())
    return configError(ctxWhere, "field \"cluster\": cluster " + quote(*clusterName) + " not found");

  ConnectionConfig config;
  config.contextName = contextName;
  config.source = source;
  config.namespace_ = !options.namespace_.empty() ? options.namespace_ : !ns->empty() ? *ns : "default";

  const Entry& cluster = clIt->second;
  std::string clWhere = cluster.file + ": context " + quote(contextName) + ": cluster " + quote(*clusterName);
  auto server = stringField(cluster.body, "server", clWhere);
  if (!server) return std::move(server).error();
  if (server->empty()) return configError(clWhere, "field \"server\" is missing");
  if (server->rfind("https://", 0) != 0 && server->rfind("http://", 0) != 0)
    return configError(clWhere, "field \"server\": " + quote(*server) + " is not an http(s) URL");
  config.server = *server;
  while (config.server.size() > 8 && config.server.back() == '/') config.server.pop_back();
  auto ca = pemField(cluster, "certificate-authority", "certificate-authority-data", clWhere);
  if (!ca) return std::move(ca).error();
  config.caPem = *ca;
  auto insecure = boolField(cluster.body, "insecure-skip-tls-verify", clWhere);
  if (!insecure) return std::move(insecure).error();
  config.insecureSkipTlsVerify = *insecure;
  if (config.insecureSkipTlsVerify && !config.caPem.empty()) {
    // client-go refuses this combination too.
    return configError(clWhere,
                       "field \"insecure-skip-tls-verify\" cannot be combined with a "
                       "certificate authority");
  }
  auto sni = stringField(cluster.body, "tls-server-name", clWhere);
  if (!sni) return std::move(sni).error();
  config.tlsServerName = *sni;
  auto proxy = stringField(cluster.body, "proxy-url", clWhere);
  if (!proxy) return std::move(proxy).error();
  config.proxyUrl = *proxy;

  if (userName->empty()) return config;  // anonymous
  auto userIt = merged.users.find(*userName);
  if (userIt == merged.users.end())
    return configError(ctxWhere, "field \"user\": user " + quote(*userName) + " not found");
  const Entry& user = userIt->second;
  std::string uWhere = user.file + ": context " + quote(contextName) + ": user " + quote(*userName);
  auto cert = pemField(user, "client-certificate", "client-certificate-data", uWhere);
  if (!cert) return std::move(cert).error();
  auto key = pemField(user, "client-key", "client-key-data", uWhere);
  if (!key) return std::move(key).error();
  if (cert->empty() != key->empty()) {
    return configError(uWhere, cert->empty() ? "field \"client-key\" given without a client certificate"
                                             : "field \"client-certificate\" given without a client key");
  }
  config.clientCertPem = *cert;
  config.clientKeyPem = *key;
  auto token = stringField(user.body, "token", uWhere);
  if (!token) return std::move(token).error();
  config.token = *token;
  auto tokenFile = stringField(user.body, "tokenFile", uWhere);
  if (!tokenFile) return std::move(tokenFile).error();
  if (!tokenFile->empty() && config.token.empty()) {
    config.tokenFile = resolvePath(user.file, *tokenFile);
    auto probe = readFile(config.tokenFile);
    if (!probe) return configError(uWhere, "field \"tokenFile\": " + probe.error().message);
  }
  if (user.body["exec"] && !user.body["exec"].IsNull()) {
    auto exec = execField(user, uWhere);
    if (!exec) return std::move(exec).error();
    config.exec = std::move(exec).value();
  }
  if (user.body["auth-provider"] && !user.body["auth-provider"].IsNull()) {
    return configError(uWhere,
                       "field \"auth-provider\" is not supported (removed from kubectl; "
                       "use an exec plugin)");
  }
  if (user.body["username"] && !user.body["username"].IsNull() && config.token.empty() && !config.exec &&
      config.clientCertPem.empty() && config.tokenFile.empty()) {
    return configError(uWhere, "field \"username\": basic authentication is not supported");
  }
  return config;
}

std::vector<std::string> splitList(const std::string& value) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : value) {
    if (c == ':') {
      if (!current.empty()) parts.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) parts.push_back(current);
  return parts;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

EnvLookup processEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

core::Result<ConnectionConfig> resolveKubeconfig(const std::vector<std::pair<std::string, std::string>>& files,
                                                 const LoadOptions& options) {
  Merged merged;
  std::string source;
  for (const auto& [path, text] : files) {
    if (!source.empty()) source += ":";
    source += path;
    if (auto s = mergeFile(path, text, merged); !s) return std::move(s).error();
  }
  try {
    return resolve(merged, options, source);
  } catch (const std::exception& e) {
    return configError(source, std::string("cannot be read: ") + e.what());
  }
}

core::Result<ConnectionConfig> inClusterConfig(const LoadOptions& options) {
  auto host = options.env("KUBERNETES_SERVICE_HOST");
  auto port = options.env("KUBERNETES_SERVICE_PORT");
  if (!host || !port || host->empty() || port->empty()) {
    return core::makeError(ErrorKind::NotFound, "not in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
  }
  ConnectionConfig config;
  std::string hostPart = host->find(':') != std::string::npos ? "[" + *host + "]" : *host;
  config.server = "https://" + hostPart + ":" + *port;
  config.source = "in-cluster";
  std::string dir = options.serviceAccountDir;
  config.tokenFile = dir + "/token";
  auto token = readFile(config.tokenFile);
  if (!token) return std::move(token).error().withContext("in-cluster service-account token");
  auto ca = readFile(dir + "/ca.crt");
  if (!ca) return std::move(ca).error().withContext("in-cluster CA");
  config.caPem = *ca;
  auto ns = readFile(dir + "/namespace");
  config.namespace_ = !options.namespace_.empty()     ? options.namespace_
                      : ns.ok() && !trim(*ns).empty() ? trim(*ns)
                                                      : "default";
  return config;
}

core::Result<ConnectionConfig> loadConfig(const LoadOptions& options) {
  std::vector<std::string> paths;
  bool explicitFile = false;
  if (!options.kubeconfigPath.empty()) {
    paths.push_back(options.kubeconfigPath);
    explicitFile = true;
  } else if (auto env = options.env("KUBECONFIG"); env && !env->empty()) {
    paths = splitList(*env);
  } else if (auto home = options.env("HOME"); home && !home->empty()) {
    paths.push_back(*home + "/.kube/config");
  }
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!explicitFile && !fs::exists(path, ec)) continue;  // kubectl skips missing list entries
    auto text = readFile(path);
    if (!text) return configError(path, text.error().message);
    files.emplace_back(path, std::move(text).value());
  }
  if (files.empty()) {
    auto inCluster = inClusterConfig(options);
    if (inCluster.ok() || inCluster.error().kind != ErrorKind::NotFound) return inCluster;
    return core::makeError(ErrorKind::NotFound,
                           "no configuration: no kubeconfig file found (--kubeconfig, KUBECONFIG, "
                           "~/.kube/config) and not running in a cluster");
  }
  return resolveKubeconfig(files, options);
}

}  // namespace restarter::kube
