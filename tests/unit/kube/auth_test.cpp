#include "restarter/kube/auth.hpp"

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "fakes.hpp"
#include "restarter/testing/fake_clock.hpp"
#include "restarter/testing/temp_dir.hpp"

using restarter::core::ErrorKind;
using namespace restarter::kube;
using namespace restarter::kube::testing;
using restarter::testing::FakeClock;
using restarter::testing::TempDir;
using namespace std::chrono_literals;

namespace {

ConnectionConfig execConfig(const std::string& apiVersion = "client.authentication.k8s.io/v1") {
  ConnectionConfig config;
  config.server = "https://127.0.0.1:6443";
  config.caPem = "CA";
  ExecConfig exec;
  exec.apiVersion = apiVersion;
  exec.command = "/bin/plugin";
  exec.args = {"token"};
  exec.env = {{"FOO", "bar"}};
  exec.interactiveMode = ExecConfig::InteractiveMode::Never;
  exec.provideClusterInfo = true;
  config.exec = exec;
  return config;
}

ProcessOutput credentialOutput(const std::string& token, const std::string& expiry,
                               const std::string& apiVersion = "client.authentication.k8s.io/v1") {
  nlohmann::json status = {{"token", token}};
  if (!expiry.empty()) status["expirationTimestamp"] = expiry;
  nlohmann::json doc = {{"apiVersion", apiVersion}, {"kind", "ExecCredential"}, {"status", status}};
  return ProcessOutput{0, doc.dump(), ""};
}

}  // namespace

TEST_CASE("a static token and client certificate are passed through", "[kube][auth]") {
  ConnectionConfig config;
  config.token = "t";
  config.clientCertPem = "C";
  config.clientKeyPem = "K";
  FakeClock clock;
  FakeProcessRunner runner;
  auto auth = makeAuthenticator(config, clock, runner);
  auto credential = auth->credential();
  REQUIRE(credential.ok());
  CHECK(credential->bearerToken == "t");
  CHECK(credential->clientCertPem == "C");
  CHECK_FALSE(auth->invalidate(*credential));
}

TEST_CASE("a token file is re-read after a minute and after a 401", "[kube][auth]") {
  TempDir dir;
  auto file = dir.write("token", "one\n");
  ConnectionConfig config;
  config.tokenFile = file;
  FakeClock clock;
  FakeProcessRunner runner;
  auto auth = makeAuthenticator(config, clock, runner);
  CHECK(auth->credential()->bearerToken == "one");
  dir.write("token", "two");
  clock.advance(30s);
  CHECK(auth->credential()->bearerToken == "one");  // cached
  clock.advance(31s);
  CHECK(auth->credential()->bearerToken == "two");  // rotated
  dir.write("token", "three");
  CHECK(auth->invalidate(Credential{"two", "", ""}));
  CHECK(auth->credential()->bearerToken == "three");
  dir.write("token", "");  // a rotation in progress: keep the last good token
  clock.advance(61s);
  CHECK(auth->credential()->bearerToken == "three");
}

TEST_CASE("a missing token file is Unauthorized", "[kube][auth]") {
  ConnectionConfig config;
  config.tokenFile = "/nonexistent/token";
  FakeClock clock;
  FakeProcessRunner runner;
  auto credential = makeAuthenticator(config, clock, runner)->credential();
  REQUIRE_FALSE(credential.ok());
  CHECK(credential.error().kind == ErrorKind::Unauthorized);
}

TEST_CASE("the exec plugin gets its spec and its credential is cached until expiry", "[kube][auth]") {
  FakeClock clock;
  FakeProcessRunner runner;
  // The fake clock starts at 2027-01-15T08:00:00Z.
  runner.outputs.push_back(credentialOutput("first", "2027-01-15T08:10:00Z"));
  runner.outputs.push_back(credentialOutput("second", ""));
  runner.outputs.push_back(credentialOutput("third", ""));
  auto auth = makeAuthenticator(execConfig(), clock, runner);

  CHECK(auth->credential()->bearerToken == "first");
  REQUIRE(runner.calls.size() == 1);
  const ProcessSpec& call = runner.calls[0];
  CHECK(call.command == "/bin/plugin");
  CHECK(call.args == std::vector<std::string>{"token"});
  CHECK_FALSE(call.inheritStdin);
  std::string info;
  for (const auto& [k, v] : call.env) {
    if (k == "KUBERNETES_EXEC_INFO") info = v;
    if (k == "FOO") CHECK(v == "bar");
  }
  auto spec = nlohmann::json::parse(info);
  CHECK(spec["apiVersion"] == "client.authentication.k8s.io/v1");
  CHECK(spec["kind"] == "ExecCredential");
  CHECK(spec["spec"]["interactive"] == false);
  CHECK(spec["spec"]["cluster"]["server"] == "https://127.0.0.1:6443");
  CHECK(spec["spec"]["cluster"]["certificate-authority-data"] == "Q0E=");

  clock.advance(9min);
  CHECK(auth->credential()->bearerToken == "first");  // still valid: cached
  CHECK(runner.calls.size() == 1);
  clock.advance(1min);
  CHECK(auth->credential()->bearerToken == "second");  // expired: run again
  CHECK(runner.calls.size() == 2);
  clock.advance(24h);
  CHECK(auth->credential()->bearerToken == "second");  // no expiry: cached until a 401
  CHECK(auth->invalidate(Credential{"second", "", ""}));
  CHECK(auth->credential()->bearerToken == "third");
  CHECK(runner.calls.size() == 3);
}

TEST_CASE("expiration timestamps outside the clock's range neither overflow nor misbehave", "[kube][auth]") {
  FakeClock clock;
  FakeProcessRunner runner;
  auto auth = makeAuthenticator(execConfig(), clock, runner);
  runner.outputs.push_back(credentialOutput("far", "9999-12-31T23:59:59Z"));
  CHECK(auth->credential()->bearerToken == "far");
  clock.advance(24h * 365 * 100);
  CHECK(auth->credential()->bearerToken == "far");  // still cached
  CHECK(runner.calls.size() == 1);

  auto past = makeAuthenticator(execConfig(), clock, runner);
  runner.outputs.push_back(credentialOutput("old", "0001-01-01T00:00:00Z"));
  runner.outputs.push_back(credentialOutput("new", ""));
  CHECK(past->credential()->bearerToken == "old");  // already expired: used once, not cached
  CHECK(past->credential()->bearerToken == "new");
}

TEST_CASE("exec plugin failures are Unauthorized errors with the plugin's words", "[kube][auth]") {
  FakeClock clock;
  FakeProcessRunner runner;
  auto auth = makeAuthenticator(execConfig(), clock, runner);
  runner.outputs.push_back(ProcessOutput{3, "", "login required\n"});
  auto failed = auth->credential();
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message.find("exited with 3: login required") != std::string::npos);

  for (
      const std::string& out :
      {std::string("garbage"), std::string(R"({"kind":"ExecCredential"})"),
       std::string(
           R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"x"}})"),
       std::string(
           R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":5}})"),
       std::string(R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}})"),
       std::string(
           R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"x","expirationTimestamp":"soon"}})")}) {
    runner.outputs.push_back(ProcessOutput{0, out, ""});
    auto credential = auth->credential();
    REQUIRE_FALSE(credential.ok());
    CHECK(credential.error().kind == ErrorKind::Unauthorized);
  }
}

TEST_CASE("an exec plugin may return a client certificate", "[kube][auth]") {
  FakeClock clock;
  FakeProcessRunner runner;
  auto config = execConfig("client.authentication.k8s.io/v1beta1");
  auto auth = makeAuthenticator(config, clock, runner);
  runner.outputs.push_back(ProcessOutput{
      0,
      R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"clientCertificateData":"C","clientKeyData":"K"}})",
      ""});
  auto credential = auth->credential();
  REQUIRE(credential.ok());
  CHECK(credential->clientCertPem == "C");
  CHECK(credential->clientKeyPem == "K");
  CHECK(credential->bearerToken.empty());
}

TEST_CASE("interactiveMode Always without a terminal fails before running", "[kube][auth]") {
  if (stdinIsTerminal()) return;  // only meaningful under ctest (no terminal)
  FakeClock clock;
  FakeProcessRunner runner;
  auto config = execConfig();
  config.exec->interactiveMode = ExecConfig::InteractiveMode::Always;
  auto credential = makeAuthenticator(config, clock, runner)->credential();
  REQUIRE_FALSE(credential.ok());
  CHECK(runner.calls.empty());
}

TEST_CASE("the system process runner captures output and exit codes and kills on timeout", "[kube][process]") {
  ProcessSpec spec;
  spec.command = "/bin/sh";
  spec.args = {"-c", "printf out; printf err >&2; printf '%s' \"$X\"; exit 4"};
  spec.env = {{"X", "-env"}};
  auto output = systemProcessRunner().run(spec);
  REQUIRE(output.ok());
  CHECK(output->exitCode == 4);
  CHECK(output->out == "out-env");
  CHECK(output->err == "err");

  spec.args = {"-c", "sleep 5"};
  spec.timeout = 200ms;
  auto slow = systemProcessRunner().run(spec);
  REQUIRE_FALSE(slow.ok());
  CHECK(slow.error().kind == ErrorKind::Timeout);

  spec.command = "/nonexistent/plugin";
  auto missing = systemProcessRunner().run(spec);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == ErrorKind::NotFound);
}

TEST_CASE("exec plugin output nested too deeply or too large is refused", "[kube][auth]") {
  FakeClock clock;
  FakeProcessRunner runner;
  auto auth = makeAuthenticator(execConfig(), clock, runner);
  const std::string head = R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)";
  runner.outputs.push_back(ProcessOutput{
      0, head + R"("status":{"token":"x"},"x":)" + std::string(100000, '[') + std::string(100000, ']') + "}",
      ""});
  auto deep = auth->credential();
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.error().kind == ErrorKind::Unauthorized);
  CHECK(deep.error().message.find("nests deeper than 512 levels") != std::string::npos);

  runner.outputs.push_back(
      ProcessOutput{0, head + R"("status":{"token":")" + std::string(1 << 20, 't') + "\"}}", ""});
  auto large = auth->credential();
  REQUIRE_FALSE(large.ok());
  CHECK(large.error().kind == ErrorKind::Unauthorized);
  CHECK(large.error().message.find("exceeds the limit of 1048576 bytes") != std::string::npos);
}
