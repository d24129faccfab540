#pragma once
// `restarter version`: the version, the commit and the platform of this binary, as text (the
// first line is what --version prints), JSON or YAML. Release tooling and the upgrade test read
// it from the running pods (docs/release.md).

#include <optional>
#include <string>
#include <vector>

#include "restarter/cli/subcommand.hpp"

namespace restarter::cli {

struct VersionOptions {
  enum class Format { Text, Json, Yaml };
  Format format = Format::Text;
};

// "<os>/<arch>" of the build's target, in Go's (and OCI's) names: linux/amd64, linux/arm64.
std::string targetPlatform();
// The version line `--version` prints: "<program> <version>".
std::string versionLine(const std::string& programName);

std::optional<int> parseVersionFlags(const std::vector<std::string>& args, Io& io, VersionOptions& out);
int runVersion(const VersionOptions& options, Io& io);
Subcommand versionCommand();

}  // namespace restarter::cli
