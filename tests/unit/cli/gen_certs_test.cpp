#include "restarter/cli/gen_certs.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

using namespace restarter;
using namespace restarter::cli;
namespace fs = std::filesystem;

namespace {

// A fresh temporary directory, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gen-certs-test-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

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
  const Run r = runArgs({"--out-dir", dir.path.string(), "--ip", "127.0.0.1", "--print-ca-bundle"});
  REQUIRE(r.code == kExitOk);
  const std::string ca = readFile(dir.path / "ca.crt");
  const std::string cert = readFile(dir.path / "tls.crt");
  const std::string key = readFile(dir.path / "tls.key");
  CHECK(certs::checkIssuedBy(cert, ca).ok());
  CHECK(certs::checkKeyMatches(cert, key).ok());
  CHECK(r.out == certs::base64Encode(ca) + "\n");  // stdout holds only the caBundle
  auto info = certs::inspect(cert);
  REQUIRE(info.ok());
  CHECK(info->front().dnsNames ==
        defaultDnsNames("restarter-webhook", "restarter", "cluster.local"));
  CHECK(info->front().ipAddresses == std::vector<std::string>{"127.0.0.1"});

  struct stat st {};
  REQUIRE(stat((dir.path / "tls.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(stat((dir.path / "tls.crt").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);
}

TEST_CASE("gen-certs never overwrites without force", "[cli][gen-certs]") {
  TempDir dir;
  REQUIRE(runArgs({"--out-dir", dir.path.string()}).code == kExitOk);
  const std::string before = readFile(dir.path / "tls.crt");

  const Run refused = runArgs({"--out-dir", dir.path.string()});
  CHECK(refused.code == kExitFailure);
  CHECK_THAT(refused.err, Catch::Contains("refusing to overwrite") && Catch::Contains("--force"));
  CHECK(readFile(dir.path / "tls.crt") == before);

  const Run forced = runArgs({"--out-dir", dir.path.string(), "--force", "--dns", "w.example"});
  CHECK(forced.code == kExitOk);
  CHECK(readFile(dir.path / "tls.crt") != before);
  CHECK(certs::inspect(readFile(dir.path / "tls.crt"))->front().dnsNames ==
        std::vector<std::string>{"w.example"});
}

TEST_CASE("gen-certs honours validity and key type", "[cli][gen-certs]") {
  TempDir dir;
  GenCertsOptions options;
  options.outDir = dir.path;
  options.dnsNames = {"a.example"};
  options.validity = std::chrono::hours(48);
  options.keyType = certs::KeyType::Rsa2048;
  const core::TimePoint now = core::TimePoint{} + std::chrono::hours(24 * 365 * 56);
  std::ostringstream out, err;
  Io io{out, err, "restarter"};
  REQUIRE(runGenCerts(options, io, now) == kExitOk);
  const std::string cert = readFile(dir.path / "tls.crt");
  CHECK(certs::inspect(cert)->front().notAfter == now + std::chrono::hours(48));
  CHECK(readFile(dir.path / "tls.key").find("BEGIN PRIVATE KEY") != std::string::npos);
}

TEST_CASE("gen-certs rejects bad flag values with exit 2 and bad names with exit 1",
          "[cli][gen-certs]") {
  TempDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--validity", "5y"}, {"--ca-validity", "0s"},
        {"--key-type", "dsa"}, {"positional"}, {"--no-such-flag"}}) {
    INFO(args.front());
    std::vector<std::string> withDir = args;
    withDir.push_back("--out-dir=" + dir.path.string());
    const Run r = runArgs(withDir);
    CHECK(r.code == kExitUsage);
    CHECK_THAT(r.err, Catch::EndsWith("Run 'restarter gen-certs --help' for usage.\n"));
  }
  const Run badName = runArgs({"--out-dir", dir.path.string(), "--dns", "not a name"});
  CHECK(badName.code == kExitFailure);
  CHECK_THAT(badName.err, Catch::Contains("not a valid DNS name"));
  CHECK_FALSE(fs::exists(dir.path / "tls.key"));  // nothing written on failure
}

TEST_CASE("gen-certs help lists every flag", "[cli][gen-certs]") {
  const Run r = runArgs({"--help"});
  CHECK(r.code == kExitOk);
  for (const char* flag : {"--out-dir", "--service", "--namespace", "--cluster-domain", "--dns",
                           "--ip", "--validity", "--ca-validity", "--key-type", "--force",
                           "--print-ca-bundle"}) {
    CHECK_THAT(r.out, Catch::Contains(flag));
  }
}
