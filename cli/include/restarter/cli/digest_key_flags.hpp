#pragma once
// --digest-key-secret and --digest-key-namespace: the Secret holding the key of content digests
// (kube/digest_key.hpp; docs/architecture.md, "Keyed digests"). Declared once, so serve-controller
// (which creates the key when it is missing), serve-webhook and explain-restart (which only read
// it) name the same Secret alike (docs/architecture.md, "Flags").

#include <optional>
#include <string>

#include "restarter/kube/digest_key.hpp"

namespace cxxopts {
class Options;
class ParseResult;
}  // namespace cxxopts

namespace restarter::cli {

using kube::DigestKeySecret;

// `role` ends the help text: who makes or reads the key.
void addDigestKeyFlags(cxxopts::Options& options, const std::string& role);

// The flags' values; a usage problem when either is empty.
std::optional<std::string> readDigestKeyFlags(const cxxopts::ParseResult& flags, DigestKeySecret& out);

}  // namespace restarter::cli
