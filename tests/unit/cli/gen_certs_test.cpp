#include "restarter/cli/gen_certs.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "restarter/certs/secret_data.hpp"
#include "restarter/core/base64.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/resource.hpp"
#include "restarter/testing/fake_api_server.hpp"
#include "restarter/testing/fake_clock.hpp"
#include "restarter/testing/temp_dir.hpp"

// Everything of this file in a namespace of its own: a unity batch holds several test files
// (cmake/unity.cmake).
namespace gen_certs_test {

using namespace restarter;
using namespace restarter::cli;
namespace fs = std::filesystem;
using restarter::testing::TempDir;

namespace {

std::string readFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

struct Run {
  int code;
  std::string out;
  std::string err;
};

Run runArgs(std::vector<std::string> args) {
  std::ostringstream out, err;
  args.insert(args.begin(), {"restarter", "gen-certs"});
  const int code = runApp(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace

TEST_CASE("gen-certs writes a CA and a serving certificate that chains to it", "[cli][gen-certs]") {
  TempDir dir;
  const Run r = runArgs({"--out-dir", dir.path(), "--ip", "127.0.0.1", "--print-ca-bundle"});
  REQUIRE(r.code == kExitOk);
  const std::string ca = readFile(fs::path(dir.path()) / "ca.crt");
  const std::string cert = readFile(fs::path(dir.path()) / "tls.crt");
  const std::string key = readFile(fs::path(dir.path()) / "tls.key");
  CHECK(certs::checkIssuedBy(cert, ca).ok());
  CHECK(certs::checkKeyMatches(cert, key).ok());
  CHECK(r.out == core::base64Encode(ca) + "\n");  // stdout holds only the caBundle
  auto info = certs::inspect(cert);
  REQUIRE(info.ok());
  CHECK(info->front().dnsNames ==
        restarter::certs::serviceDnsNames("restarter-webhook", "restarter-system", "cluster.local"));
  CHECK(info->front().ipAddresses == std::vector<std::string>{"127.0.0.1"});

  struct stat st {};
  REQUIRE(stat((fs::path(dir.path()) / "tls.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(stat((fs::path(dir.path()) / "tls.crt").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
}

TEST_CASE("gen-certs never overwrites without force", "[cli][gen-certs]") {
  TempDir dir;
  REQUIRE(runArgs({"--out-dir", dir.path()}).code == kExitOk);
  const std::string before = readFile(fs::path(dir.path()) / "tls.crt");

  const Run refused = runArgs({"--out-dir", dir.path()});
  CHECK(refused.code == kExitFailure);
  CHECK_THAT(refused.err, Catch::Contains("refusing to overwrite") && Catch::Contains("--force"));
  CHECK(readFile(fs::path(dir.path()) / "tls.crt") == before);

  const Run forced = runArgs({"--out-dir", dir.path(), "--force", "--dns", "w.example"});
  CHECK(forced.code == kExitOk);
  CHECK(readFile(fs::path(dir.path()) / "tls.crt") != before);
  CHECK(certs::inspect(readFile(fs::path(dir.path()) / "tls.crt"))->front().dnsNames ==
        std::vector<std::string>{"w.example"});
}

TEST_CASE("gen-certs honours validity and key type", "[cli][gen-certs]") {
  TempDir dir;
  GenCertsOptions options;
  options.outDir = dir.path();
  options.serving.dnsNames = {"a.example"};
  options.serving.validity = std::chrono::hours(48);
  options.serving.keyType = certs::KeyType::Rsa2048;
  const core::TimePoint now = core::TimePoint{} + std::chrono::hours(24 * 365 * 56);
  std::ostringstream out, err;
  Io io{out, err, "restarter"};
  REQUIRE(runGenCerts(options, io, now) == kExitOk);
  const std::string cert = readFile(fs::path(dir.path()) / "tls.crt");
  CHECK(certs::inspect(cert)->front().notAfter == now + std::chrono::hours(48));
  CHECK(readFile(fs::path(dir.path()) / "tls.key").find("BEGIN PRIVATE KEY") != std::string::npos);
}

TEST_CASE("gen-certs rejects bad flag values with exit 2 and bad names with exit 1", "[cli][gen-certs]") {
  TempDir dir;
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--validity", "5y"},
                                               {"--ca-validity", "0s"},
                                               {"--key-type", "dsa"},
                                               {"positional"},
                                               {"--no-such-flag"}}) {
    INFO(args.front());
    std::vector<std::string> withDir = args;
    withDir.push_back("--out-dir=" + dir.path());
    const Run r = runArgs(withDir);
    CHECK(r.code == kExitUsage);
    CHECK_THAT(r.err, Catch::EndsWith("Run 'restarter gen-certs --help' for usage.\n"));
  }
  const Run badName = runArgs({"--out-dir", dir.path(), "--dns", "not a name"});
  CHECK(badName.code == kExitFailure);
  CHECK_THAT(badName.err, Catch::Contains("not a valid DNS name"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "tls.key"));  // nothing written on failure
}

TEST_CASE("gen-certs help lists every flag", "[cli][gen-certs]") {
  const Run r = runArgs({"--help"});
  CHECK(r.code == kExitOk);
  for (const char* flag : {"--out-dir", "--service", "--service-namespace", "--cluster-domain", "--dns", "--ip",
                           "--validity", "--ca-validity", "--key-type", "--force", "--print-ca-bundle"}) {
    CHECK_THAT(r.out, Catch::Contains(flag));
  }
}

namespace {

// The value of `key` in a Secret's data, decoded (empty when absent or not base64).
std::string decoded(const nlohmann::json& secret, const char* key) {
  return core::base64Decode(secret["data"][key].get<std::string>()).value_or("");
}

}  // namespace

TEST_CASE("gen-certs stores the certificates in a Secret and never overwrites without force",
          "[cli][gen-certs]") {
  restarter::testing::FakeClock clock{restarter::testing::FakeClock::Waits::Advance, {}};
  restarter::testing::FakeApi api = restarter::testing::connectFakeApi(clock);
  kube::Client& client = *api.client;
  auto stored = [&api] {
    return api.server->object(kube::resources::secrets(), "hooks", "webhook-tls").value();
  };
  GenCertsOptions options;
  options.secretName = "webhook-tls";
  options.serviceNamespace = "hooks";
  options.serving.ipAddresses = {"127.0.0.1"};
  options.printCaBundle = true;
  const auto now = std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
  std::ostringstream out, err;
  Io io{out, err, "restarter"};
  REQUIRE(runGenCertsToSecret(options, io, now, client) == kExitOk);
  const nlohmann::json secret = stored();
  CHECK(secret["type"] == "kubernetes.io/tls");
  const std::string ca = decoded(secret, "ca.crt");
  const std::string cert = decoded(secret, "tls.crt");
  CHECK(certs::checkIssuedBy(cert, ca).ok());
  CHECK(certs::checkKeyMatches(cert, decoded(secret, "tls.key")).ok());
  CHECK(out.str() == core::base64Encode(ca) + "\n");

  // Again without --force: refused, unchanged.
  std::ostringstream out2, err2;
  Io io2{out2, err2, "restarter"};
  CHECK(runGenCertsToSecret(options, io2, now, client) == kExitFailure);
  CHECK(err2.str().find("refusing to overwrite Secret hooks/webhook-tls") != std::string::npos);
  CHECK(stored() == secret);

  // With --force: replaced.
  options.force = true;
  CHECK(runGenCertsToSecret(options, io2, now, client) == kExitOk);
  CHECK(decoded(stored(), "ca.crt") != ca);
}

TEST_CASE(
    "gen-certs names the certificate for --service-namespace and for its deprecated --namespace with a warning",
    "[cli][gen-certs]") {
  for (const auto& [flag, warning] :
       {std::pair{"--service-namespace", ""},
        std::pair{"--namespace", "Flag --namespace has been deprecated, use --service-namespace instead\n"}}) {
    INFO(flag);
    TempDir dir;
    const Run r = runArgs({"--out-dir", dir.path(), flag, "hooks"});
    REQUIRE(r.code == kExitOk);
    CHECK_THAT(r.err, Catch::StartsWith(warning));
    CHECK_THAT(r.err, Catch::Contains("restarter-webhook.hooks.svc.cluster.local"));
  }
  TempDir dir;
  const Run byDefault = runArgs({"--out-dir", dir.path()});
  REQUIRE(byDefault.code == kExitOk);
  CHECK_THAT(byDefault.err, Catch::Contains("restarter-webhook.restarter-system.svc.cluster.local"));
}

TEST_CASE("gen-certs refuses Secret flags without --secret", "[cli][gen-certs]") {
  const Run r = runArgs({"--secret-namespace", "x"});
  CHECK(r.code == kExitUsage);
  const Run both = runArgs({"--secret", "s", "--out-dir", "/tmp"});
  CHECK(both.code == kExitUsage);
}

TEST_CASE("gen-certs refuses a serving certificate that would outlive its CA naming both flags",
          "[cli][gen-certs]") {
  TempDir dir;
  const Run longer = runArgs({"--out-dir", dir.path(), "--validity", "48h", "--ca-validity", "24h"});
  CHECK(longer.code == kExitUsage);
  CHECK_THAT(longer.err,
             Catch::StartsWith("restarter gen-certs: --validity 48h is more than --ca-validity 24h: a "
                               "certificate cannot outlive the CA that signed it"));
  CHECK_FALSE(fs::exists(fs::path(dir.path()) / "tls.key"));
  const Run centuries = runArgs({"--out-dir", dir.path(), "--ca-validity", "40000d"});
  CHECK(centuries.code == kExitUsage);
  CHECK_THAT(centuries.err, Catch::Contains("--ca-validity 960000h is more than 876000h (100 years)"));
  // Equal lifetimes are fine.
  CHECK(runArgs({"--out-dir", dir.path(), "--ip", "127.0.0.1", "--validity", "24h", "--ca-validity", "1d"})
            .code == kExitOk);
}

}  // namespace gen_certs_test
