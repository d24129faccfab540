#include "restarter/cli/digest_key_flags.hpp"

#include <cxxopts.hpp>

#include "restarter/kube/digest_key.hpp"

namespace restarter::cli {

void addDigestKeyFlags(cxxopts::Options& options, const std::string& role) {
  options.add_options()("digest-key-secret",
                        "Secret holding the key of content digests (HMAC-SHA256, so no digest restarter "
                        "writes helps guess a Secret's content); " +
                            role,
                        cxxopts::value<std::string>()->default_value(DigestKeySecret{}.name), "NAME")(
      "digest-key-namespace", "namespace of --digest-key-secret",
      cxxopts::value<std::string>()->default_value(DigestKeySecret{}.namespace_), "NS");
}

std::optional<std::string> readDigestKeyFlags(const cxxopts::ParseResult& flags, DigestKeySecret& out) {
  out.name = flags["digest-key-secret"].as<std::string>();
  out.namespace_ = flags["digest-key-namespace"].as<std::string>();
  if (out.name.empty()) return std::string("--digest-key-secret: empty");
  if (out.namespace_.empty()) return std::string("--digest-key-namespace: empty");
  return std::nullopt;
}

}  // namespace restarter::cli
