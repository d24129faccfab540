#include "restarter/cli/mwc_flags.hpp"

#include <catch2/catch.hpp>
#include <cxxopts.hpp>

#include <sstream>
#include <vector>

#include "restarter/cli/flag_table.hpp"

namespace restarter::cli {
namespace {

// Declares addMwcShapeFlags bound to `out` and reads `args` into it; the table's problem, if any.
std::string read(webhook::MwcOptions& out, std::vector<const char*> args, const std::string& prefix = "") {
  FlagTable table;
  addMwcShapeFlags(table, out, prefix);
  cxxopts::Options options("test");
  table.declare(options);
  args.insert(args.begin(), "test");
  const cxxopts::ParseResult flags = options.parse(static_cast<int>(args.size()), args.data());
  std::ostringstream warnings;
  const core::Status status = table.read(flags, warnings);
  return status ? "" : status.error().message;
}

TEST_CASE("MWC shape flags default to webhook::MwcOptions' own defaults", "[cli][mwc-flags]") {
  webhook::MwcOptions read;
  CHECK(cli::read(read, {}).empty());
  const webhook::MwcOptions defaults;
  CHECK(read.servicePort == defaults.servicePort);
  CHECK(read.timeoutSeconds == defaults.timeoutSeconds);
  CHECK(read.excludeNamespaces.empty());
  CHECK(read.onlyNamespaces.empty());
}

TEST_CASE("MWC shape flags are read into the configuration's options", "[cli][mwc-flags]") {
  webhook::MwcOptions read;
  read.name = "kept";
  CHECK(cli::read(read, {"--service-port", "8443", "--timeout-seconds", "3", "--exclude-namespace",
                         "kube-system", "--exclude-namespace", "other"})
            .empty());
  CHECK(read.name == "kept");
  CHECK(read.servicePort == 8443);
  CHECK(read.timeoutSeconds == 3);
  CHECK(read.excludeNamespaces == std::vector<std::string>{"kube-system", "other"});

  webhook::MwcOptions defaults;
  FlagTable table;
  addMwcShapeFlags(table, defaults, "with X: ");
  cxxopts::Options options("test");
  table.declare(options);
  CHECK_THAT(options.help(), Catch::Contains("with X: the webhook Service's port"));
  CHECK_THAT(options.help(), Catch::Contains("(default: 443)"));
}

TEST_CASE("MWC shape flags name the flag whose value is out of range", "[cli][mwc-flags]") {
  webhook::MwcOptions read;
  CHECK(cli::read(read, {"--timeout-seconds", "0"}) == "--timeout-seconds must be 1-30, got 0");
  CHECK(cli::read(read, {"--timeout-seconds", "31"}) == "--timeout-seconds must be 1-30, got 31");
  CHECK(cli::read(read, {"--service-port", "65536"}) == "--service-port must be 1-65535, got 65536");
  CHECK(cli::read(read, {"--exclude-namespace", "a", "--only-namespace", "b"}) ==
        "give --exclude-namespace or --only-namespace, not both");
}

TEST_CASE("MWC shape flags refuse a port that is not a number", "[cli][mwc-flags]") {
  webhook::MwcOptions read;
  CHECK(cli::read(read, {"--service-port", "https"}) == "invalid value \"https\" for --service-port");
  CHECK(cli::read(read, {"--service-port", "443x"}) == "invalid value \"443x\" for --service-port");
  CHECK(read.servicePort == webhook::MwcOptions{}.servicePort);
}

}  // namespace
}  // namespace restarter::cli
