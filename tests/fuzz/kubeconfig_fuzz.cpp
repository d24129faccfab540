// Fuzz target: kubeconfig parsing and merging (lib/kube/config.hpp, resolveKubeconfig), the way
// kubectl's rules read one or several files. The input is split at NUL bytes into up to three
// files merged in order. Checks beyond "no crash": an error has a message; a configuration has an
// http(s) server, a namespace, and never both a client certificate and no key (or the reverse).
// Relative paths inside the files resolve under a directory that does not exist, so a run reads
// no file of the machine unless the input names an absolute path.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "check.hpp"
#include "restarter/kube/config.hpp"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  restarter::fuzz::fail("kubeconfig_fuzz", what, detail);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<std::string, std::string>> files;
  std::size_t start = 0;
  while (files.size() < 3) {
    const std::size_t end = files.size() == 2 ? std::string_view::npos : input.find('\0', start);
    const std::string name = "/nonexistent-restarter-fuzz/" + std::to_string(files.size()) + "/config";
    files.emplace_back(name,
                       std::string(input.substr(start, end == std::string_view::npos ? end : end - start)));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  restarter::kube::LoadOptions options;
  options.env = [](const std::string&) { return std::optional<std::string>(); };
  options.serviceAccountDir = "/nonexistent-restarter-fuzz/serviceaccount";
  const auto config = restarter::kube::resolveKubeconfig(files, options);
  if (!config) {
    if (config.error().message.empty()) fail("an error without a message", config.error().describe());
    return 0;
  }
  if (config->server.rfind("https://", 0) != 0 && config->server.rfind("http://", 0) != 0) {
    fail("a server that is not an http(s) URL", config->server);
  }
  if (config->namespace_.empty()) fail("no namespace", config->source);
  if (config->clientCertPem.empty() != config->clientKeyPem.empty())
    fail("a certificate without its key", config->source);
  return 0;
}
