#include "restarter/cli/mwc_flags.hpp"

#include <catch2/catch.hpp>
#include <cxxopts.hpp>

#include <vector>

namespace restarter::cli {
namespace {

cxxopts::ParseResult parse(cxxopts::Options& options, std::vector<const char*> args) {
  args.insert(args.begin(), "test");
  return options.parse(static_cast<int>(args.size()), args.data());
}

TEST_CASE("MWC shape flags default to webhook::MwcOptions' own defaults", "[cli][mwc-flags]") {
  cxxopts::Options options("test");
  addMwcShapeFlags(options, "");
  webhook::MwcOptions read;
  read.servicePort = 1;
  read.timeoutSeconds = 1;
  CHECK_FALSE(readMwcShapeFlags(parse(options, {}), read));
  const webhook::MwcOptions defaults;
  CHECK(read.servicePort == defaults.servicePort);
  CHECK(read.timeoutSeconds == defaults.timeoutSeconds);
  CHECK(read.excludeNamespaces.empty());
  CHECK(read.onlyNamespaces.empty());
}

TEST_CASE("MWC shape flags are read into the configuration's options", "[cli][mwc-flags]") {
  cxxopts::Options options("test");
  addMwcShapeFlags(options, "with X: ");
  webhook::MwcOptions read;
  read.name = "kept";
  CHECK_FALSE(
      readMwcShapeFlags(parse(options, {"--service-port", "8443", "--timeout-seconds", "3",
                                        "--exclude-namespace", "kube-system", "--exclude-namespace", "other"}),
                        read));
  CHECK(read.name == "kept");
  CHECK(read.servicePort == 8443);
  CHECK(read.timeoutSeconds == 3);
  CHECK(read.excludeNamespaces == std::vector<std::string>{"kube-system", "other"});
  CHECK_THAT(options.help(), Catch::Contains("with X: the webhook Service's port"));
}

TEST_CASE("MWC shape flags name the flag whose value is out of range", "[cli][mwc-flags]") {
  cxxopts::Options options("test");
  addMwcShapeFlags(options, "");
  webhook::MwcOptions read;
  CHECK(readMwcShapeFlags(parse(options, {"--timeout-seconds", "0"}), read) ==
        std::optional<std::string>("--timeout-seconds must be 1-30, got 0"));
  CHECK(readMwcShapeFlags(parse(options, {"--timeout-seconds", "31"}), read) ==
        std::optional<std::string>("--timeout-seconds must be 1-30, got 31"));
  CHECK(readMwcShapeFlags(parse(options, {"--service-port", "65536"}), read) ==
        std::optional<std::string>("--service-port must be 1-65535, got 65536"));
  CHECK(readMwcShapeFlags(parse(options, {"--exclude-namespace", "a", "--only-namespace", "b"}), read) ==
        std::optional<std::string>("give --exclude-namespace or --only-namespace, not both"));
  CHECK(read.timeoutSeconds == webhook::MwcOptions{}.timeoutSeconds);  // nothing copied on error
}

TEST_CASE("MWC shape flags refuse a port that is not a number", "[cli][mwc-flags]") {
  cxxopts::Options options("test");
  addMwcShapeFlags(options, "");
  webhook::MwcOptions read;
  CHECK_THROWS_AS(readMwcShapeFlags(parse(options, {"--service-port", "https"}), read),
                  cxxopts::exceptions::exception);
}

}  // namespace
}  // namespace restarter::cli
