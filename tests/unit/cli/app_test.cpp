#include "restarter/cli/app.hpp"
#include "restarter/cli/version.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

using namespace restarter::cli;

namespace {

struct Run {
  int code;
  std::string out;
  std::string err;
};

Run run(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int code = runApp(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace

TEST_CASE("the help flag explains usage and exits 0", "[cli]") {
  for (const char* flag : {"--help", "-h"}) {
    const Run r = run({"restarter", flag});
    CHECK(r.code == kExitOk);
    CHECK_THAT(r.out, Catch::Contains("Usage:") && Catch::Contains("restarter <subcommand>") &&
                          Catch::Contains("Exit codes"));
    CHECK(r.err.empty());
  }
}

TEST_CASE("as kubectl-restarter the help speaks as the kubectl plugin", "[cli]") {
  const Run r = run({"/home/me/.krew/bin/kubectl-restarter", "--help"});
  CHECK(r.code == kExitOk);
  CHECK_THAT(r.out, Catch::Contains("kubectl restarter <subcommand>"));
  CHECK(programNameFor("kubectl-restarter") == "kubectl restarter");
  CHECK(programNameFor("/usr/bin/restarter") == "restarter");
}

TEST_CASE("the help lists the working subcommands", "[cli]") {
  const Run r = run({"restarter", "--help"});
  CHECK_THAT(r.out, Catch::Contains("gen-certs"));
}

TEST_CASE("the version flag prints the version", "[cli]") {
  const Run r = run({"restarter", "--version"});
  CHECK(r.code == kExitOk);
  CHECK_THAT(r.out, Catch::StartsWith("restarter ") && Catch::Contains("."));
}

TEST_CASE("the version subcommand prints the VERSION file's version with the commit and the platform",
          "[cli]") {
  const Run text = run({"restarter", "version"});
  CHECK(text.code == kExitOk);
  CHECK_THAT(text.out, Catch::StartsWith(run({"restarter", "--version"}).out) &&
                           Catch::Contains("revision: ") && Catch::Contains("platform: linux/"));
  const Run json = run({"restarter", "version", "-o", "json"});
  CHECK(json.code == kExitOk);
  const auto info = nlohmann::json::parse(json.out);
  CHECK(info.at("platform") == targetPlatform());
  CHECK(info.at("revision").is_string());
  // The release reads the version from the VERSION file; the binary must say the same.
  std::ifstream file(std::string(RESTARTER_SOURCE_DIR) + "/VERSION");
  std::string version;
  REQUIRE(std::getline(file, version));
  CHECK(info.at("version") == version);
  CHECK(run({"restarter", "--version"}).out == "restarter " + version + "\n");
}

TEST_CASE("the version subcommand refuses an unknown output format", "[cli]") {
  const Run r = run({"restarter", "version", "-o", "xml"});
  CHECK(r.code == kExitUsage);
  CHECK_THAT(r.err, Catch::Contains("--output") && Catch::Contains("xml"));
}

TEST_CASE("usage errors are one line naming the problem and the hint and exit 2", "[cli]") {
  SECTION("unknown subcommand") {
    const Run r = run({"restarter", "frobnicate"});
    CHECK(r.code == kExitUsage);
    CHECK(r.err ==
          "restarter: unknown subcommand \"frobnicate\"\n"
          "Run 'restarter --help' for usage.\n");
    CHECK(r.out.empty());
  }
  SECTION("unknown flag") {
    const Run r = run({"restarter", "--frobnicate"});
    CHECK(r.code == kExitUsage);
    CHECK(r.err ==
          "restarter: unknown flag \"--frobnicate\"\n"
          "Run 'restarter --help' for usage.\n");
  }
  SECTION("an unknown flag of a subcommand is named as typed") {
    const Run r = run({"restarter", "explain-restart", "--since=1h", "sts/web"});
    CHECK(r.code == kExitUsage);
    CHECK(r.err ==
          "restarter explain-restart: unknown flag \"--since\"\n"
          "Run 'restarter explain-restart --help' for usage.\n");
  }
  SECTION("a value of the wrong type names its flag") {
    const Run spaced = run({"restarter", "install-mwc", "--dry-run", "--timeout-seconds", "soon"});
    CHECK(spaced.code == kExitUsage);
    CHECK(spaced.err ==
          "restarter install-mwc: invalid value \"soon\" for --timeout-seconds\n"
          "Run 'restarter install-mwc --help' for usage.\n");
    const Run joined = run({"restarter", "serve-webhook", "--port=https"});
    CHECK(joined.code == kExitUsage);
    CHECK_THAT(joined.err, Catch::StartsWith("restarter serve-webhook: invalid value \"https\" for --port\n"));
  }
  SECTION("no subcommand prints the usage and exits 2") {
    const Run r = run({"restarter"});
    CHECK(r.code == kExitUsage);
    CHECK_THAT(r.out, Catch::Contains("Usage:"));
  }
  SECTION("empty argv does not crash") {
    const Run r = run({});
    CHECK(r.code == kExitUsage);
  }
}
