#include "restarter/webhook/certificates.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "restarter/core/base64.hpp"
#include "restarter/kube/resource.hpp"
#include "restarter/testing/fake_api_server.hpp"
#include "restarter/testing/fake_clock.hpp"
#include "restarter/testing/temp_dir.hpp"
#include "restarter/webhook/mwc.hpp"

using namespace restarter;
using namespace restarter::webhook;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

const kube::Response kForbidden{
    403,
    {},
    R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"forbidden"})"};

const std::string kSecretPath = "/api/v1/namespaces/restarter/secrets/restarter-webhook-certs";

// The webhook's check against the in-memory API server, with the configuration it publishes to.
struct Fixture {
  restarter::testing::FakeClock clock{restarter::testing::FakeClock::Waits::Advance, {}};
  restarter::testing::FakeApiServer* api = nullptr;
  std::unique_ptr<kube::Client> client;
  ManagedOptions options;
  core::TimePoint start =
      std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());

  Fixture() {
    auto fake = restarter::testing::connectFakeApi(clock);
    api = fake.server;
    client = std::move(fake.client);
    options.secretNamespace = "restarter";
    options.secretName = "restarter-webhook-certs";
    options.configurationName = "restarter-webhook.stackable.tech";
    options.serving.ipAddresses = {"127.0.0.1"};
    options.serving.validity = 300s;
    options.ca.validity = 3000s;
    options.policy.caPropagation = 30s;
    putMwc({{"apiVersion", "admissionregistration.k8s.io/v1"},
            {"kind", "MutatingWebhookConfiguration"},
            {"metadata", {{"name", "restarter-webhook.stackable.tech"}}},
            {"webhooks",
             {{{"name", "restarter-webhook.stackable.tech"},
               {"clientConfig", {{"url", "https://127.0.0.1:9443/mutate"}}}}}}});
  }

  json secret() const {
    return api->object(kube::resources::secrets(), "restarter", "restarter-webhook-certs").value_or(json());
  }
  json mwc() const {
    return api->object(kube::resources::mutatingWebhookConfigurations(), "", "restarter-webhook.stackable.tech")
        .value_or(json());
  }
  bool hasMwc() const { return !mwc().is_null(); }
  void putSecret(json object) { api->put(kube::resources::secrets(), std::move(object)); }
  void putMwc(json object) { api->put(kube::resources::mutatingWebhookConfigurations(), std::move(object)); }
  void eraseMwc() {
    api->erase(kube::resources::mutatingWebhookConfigurations(), "", "restarter-webhook.stackable.tech");
  }
  // RBAC without create on Secrets (the installs' webhook role).
  void forbidSecretCreates() {
    api->setInterceptor([](const kube::Request& request) -> std::optional<kube::Response> {
      if (request.method == "POST" && request.path.find("/secrets") != std::string::npos) return kForbidden;
      return std::nullopt;
    });
  }

  // serve-webhook --manage-configuration by URL.
  void manageConfiguration() {
    MwcOptions mwc;
    mwc.url = "https://127.0.0.1:9443/mutate";
    auto configuration = buildMutatingWebhookConfiguration(mwc);
    REQUIRE(configuration.ok());
    options.configuration = *configuration;
  }

  std::string data(const std::string& key) {
    auto decoded = core::base64Decode(secret()["data"].value(key, ""));
    REQUIRE(decoded);
    return *decoded;
  }
  std::string publishedBundle() {
    auto decoded = core::base64Decode(mwc()["webhooks"][0]["clientConfig"].value("caBundle", ""));
    REQUIRE(decoded);
    return *decoded;
  }
  std::size_t certificatesIn(const std::string& pem) {
    auto info = certs::inspect(pem);
    return info ? info->size() : 0;
  }
};

}  // namespace

TEST_CASE("certificates: the first check creates the Secret and publishes the CA", "[certificates]") {
  Fixture f;
  CertificateStore store;
  auto report = checkManagedCertificates(*f.client, f.options, store, f.start);
  REQUIRE(report.ok());
  CHECK(report->secretWritten);
  CHECK(report->bundlePublished);
  CHECK(store.ready());
  CHECK(report->fingerprint == store.fingerprint());
  CHECK(certs::checkIssuedBy(f.data("tls.crt"), f.data("ca.crt")).ok());
  CHECK(certs::checkKeyMatches(f.data("tls.crt"), f.data("tls.key")).ok());
  CHECK(f.publishedBundle() == f.data("ca-bundle.crt"));
  CHECK(f.certificatesIn(f.publishedBundle()) == 1);
  auto leaf = certs::inspect(f.data("tls.crt"));
  REQUIRE(leaf);
  CHECK(leaf->front().ipAddresses == std::vector<std::string>{"127.0.0.1"});
  auto ca = certs::inspect(f.data("ca.crt"));
  REQUIRE(ca);
  CHECK(ca->front().subject.find("restarter-webhook-ca") != std::string::npos);
}

TEST_CASE("certificates: a caBundle that is not a string is replaced without a throw", "[certificates]") {
  // Found by a fuzzing review of json::value() calls: value("caBundle", std::string()) threw on a
  // number, and the exception left the library.
  Fixture f;
  json mwc = f.mwc();
  mwc["webhooks"][0]["clientConfig"]["caBundle"] = 7;
  f.putMwc(mwc);
  CertificateStore store;
  auto report = checkManagedCertificates(*f.client, f.options, store, f.start);
  REQUIRE(report.ok());
  CHECK(report->bundlePublished);
  CHECK(f.publishedBundle() == f.data("ca-bundle.crt"));
}

TEST_CASE("certificates: a Secret whose resourceVersion is not a string is read without a throw",
          "[certificates]") {
  // json::value() throws on a type mismatch; an API answer is outside input.
  Fixture f;
  CertificateStore store;
  REQUIRE(checkManagedCertificates(*f.client, f.options, store, f.start).ok());
  // The API answers the Secret with a number for its resourceVersion.
  const json stored = f.secret();
  f.api->setInterceptor([stored](const kube::Request& request) -> std::optional<kube::Response> {
    if (request.method != "GET" || request.path.rfind(kSecretPath, 0) != 0) return std::nullopt;
    json answer = stored;
    answer["metadata"]["resourceVersion"] = 7;
    return kube::Response{200, {}, answer.dump()};
  });
  core::Result<CheckReport> again = core::makeError(core::ErrorKind::Internal, "not run");
  CHECK_NOTHROW(again = checkManagedCertificates(*f.client, f.options, store, f.start + 10s));
  REQUIRE(again.ok());
  CHECK_FALSE(again->secretWritten);
}

TEST_CASE("certificates: a Secret shipped empty is filled in place with its type labels and annotations kept",
          "[certificates]") {
  // The installs ship the Secret without data (a Helm release's or a GitOps tool's object): the
  // webhook only replaces its data, by name.
  Fixture f;
  f.forbidSecretCreates();
  f.putSecret({{"apiVersion", "v1"},
               {"kind", "Secret"},
               {"metadata",
                {{"name", "restarter-webhook-certs"},
                 {"namespace", "restarter"},
                 {"labels", {{"app.kubernetes.io/managed-by", "Helm"}}},
                 {"annotations", {{"meta.helm.sh/release-name", "restarter"}}}}},
               {"type", "Opaque"}});
  CertificateStore store;
  auto report = checkManagedCertificates(*f.client, f.options, store, f.start);
  REQUIRE(report.ok());
  CHECK(report->secretWritten);
  CHECK(store.ready());
  const json secret = f.secret();
  CHECK(secret["type"] == "Opaque");
  CHECK(secret["metadata"]["labels"] == json{{"app.kubernetes.io/managed-by", "Helm"}});
  CHECK(secret["metadata"]["annotations"] == json{{"meta.helm.sh/release-name", "restarter"}});
  CHECK(certs::checkIssuedBy(f.data("tls.crt"), f.data("ca.crt")).ok());
  auto again = checkManagedCertificates(*f.client, f.options, store, f.start + 10s);
  REQUIRE(again.ok());
  CHECK_FALSE(again->secretWritten);
}

TEST_CASE("certificates: a missing Secret the webhook may not create is named in the error", "[certificates]") {
  Fixture f;
  f.forbidSecretCreates();
  CertificateStore store;
  auto report = checkManagedCertificates(*f.client, f.options, store, f.start);
  REQUIRE_FALSE(report.ok());
  CHECK(report.error().kind == core::ErrorKind::Forbidden);
  CHECK(report.error().describe().find("restarter/restarter-webhook-certs") != std::string::npos);
  CHECK(report.error().describe().find("the install ships it empty") != std::string::npos);
  CHECK_FALSE(store.ready());
}

TEST_CASE("certificates: a second check writes nothing", "[certificates]") {
  Fixture f;
  CertificateStore store;
  REQUIRE(checkManagedCertificates(*f.client, f.options, store, f.start).ok());
  const std::size_t writes = f.api->writes();
  auto again = checkManagedCertificates(*f.client, f.options, store, f.start + 10s);
  REQUIRE(again.ok());
  CHECK_FALSE(again->secretWritten);
  CHECK_FALSE(again->bundlePublished);
  CHECK(again->actions.empty());
  CHECK(f.api->writes() == writes);
}

TEST_CASE("certificates: a managed configuration is created with the CA bundle and then left alone",
          "[certificates]") {
  Fixture f;
  f.eraseMwc();
  f.manageConfiguration();
  CertificateStore store;
  auto report = checkManagedCertificates(*f.client, f.options, store, f.start);
  REQUIRE(report.ok());
  CHECK(report->configurationApplied);
  CHECK(report->publishProblem.empty());
  REQUIRE(f.hasMwc());
  CHECK(f.publishedBundle() == f.data("ca-bundle.crt"));
  CHECK(f.mwc()["webhooks"][0]["failurePolicy"] == "Ignore");
  CHECK(f.api->applies() == 1);

  // Up to date (the server added fields of its own): no write.
  auto again = checkManagedCertificates(*f.client, f.options, store, f.start + 10s);
  REQUIRE(again.ok());
  CHECK_FALSE(again->configurationApplied);
  CHECK(f.api->applies() == 1);
}

TEST_CASE("certificates: a hand edit of the managed configuration is undone at the next check",
          "[certificates]") {
  Fixture f;
  f.manageConfiguration();
  CertificateStore store;
  REQUIRE(checkManagedCertificates(*f.client, f.options, store, f.start).ok());
  json edited = f.mwc();
  edited["webhooks"][0]["failurePolicy"] = "Fail";
  f.putMwc(edited);
  auto report = checkManagedCertificates(*f.client, f.options, store, f.start + 10s);
  REQUIRE(report.ok());
  CHECK(report->configurationApplied);
  CHECK(f.mwc()["webhooks"][0]["failurePolicy"] == "Ignore");
  CHECK(f.publishedBundle() == f.data("ca-bundle.crt"));
}

TEST_CASE("certificates: a replica that loses the create race adopts the winner's certificates",
          "[certificates]") {
  Fixture winner;
  CertificateStore winnerStore;
  REQUIRE(checkManagedCertificates(*winner.client, winner.options, winnerStore, winner.start).ok());
  const json winnerSecret = winner.secret();

  Fixture loser;
  bool raced = false;
  loser.api->setInterceptor([&](const kube::Request& request) -> std::optional<kube::Response> {
    // The other replica creates the Secret between our read and our create.
    if (request.method == "POST" && !raced) {
      raced = true;
      loser.putSecret(winnerSecret);
    }
    return std::nullopt;
  });
  CertificateStore loserStore;
  auto report = checkManagedCertificates(*loser.client, loser.options, loserStore, loser.start);
  REQUIRE(report.ok());
  CHECK(raced);
  CHECK(loserStore.fingerprint() == winnerStore.fingerprint());
  CHECK_FALSE(report->secretWritten);
}

TEST_CASE("certificates: the serving certificate is renewed at two thirds of its lifetime", "[certificates]") {
  Fixture f;
  CertificateStore store;
  REQUIRE(checkManagedCertificates(*f.client, f.options, store, f.start).ok());
  const std::string first = store.fingerprint();
  // Renewal counts from issue time (not the backdated notBefore): due at start + 200 s.
  auto early = checkManagedCertificates(*f.client, f.options, store, f.start + 199s);
  REQUIRE(early.ok());
  CHECK(store.fingerprint() == first);
  auto due = checkManagedCertificates(*f.client, f.options, store, f.start + 201s);
  REQUIRE(due.ok());
  CHECK(due->secretWritten);
  CHECK(store.fingerprint() != first);
  REQUIRE(due->actions.size() == 1);
  CHECK(due->actions[0].rfind("issue-leaf", 0) == 0);
  CHECK_FALSE(due->bundlePublished);  // same CA: the caBundle does not change
}

TEST_CASE("certificates: the CA rolls with both CAs trusted during the overlap", "[certificates]") {
  Fixture f;
  CertificateStore store;
  REQUIRE(checkManagedCertificates(*f.client, f.options, store, f.start).ok());
  const std::string oldCa = f.data("ca.crt");
  // The 3000 s CA is due at start + 2000 s: the next CA is staged and published.
  auto staged = checkManagedCertificates(*f.client, f.options, store, f.start + 2001s);
  REQUIRE(staged.ok());
  CHECK(staged->bundlePublished);
  CHECK(f.certificatesIn(f.publishedBundle()) == 2);
  CHECK(f.data("ca.crt") == oldCa);
  CHECK_FALSE(f.data("next-ca.crt").empty());
  // The leaf still comes from the old CA (renewed on the way, since it was due).
  CHECK(certs::checkIssuedBy(f.data("tls.crt"), oldCa).ok());
  // Published for the propagation time: promoted; the leaf comes from the new CA; both CAs stay.
  auto promoted = checkManagedCertificates(*f.client, f.options, store, f.start + 2032s);
  REQUIRE(promoted.ok());
  CHECK(f.data("ca.crt") != oldCa);
  CHECK(f.secret()["data"].count("next-ca.crt") == 0);
  CHECK(certs::checkIssuedBy(f.data("tls.crt"), f.data("ca.crt")).ok());
  CHECK(f.certificatesIn(f.publishedBundle()) == 2);
  // Once the old CA has expired it leaves the bundle.
  auto later = checkManagedCertificates(*f.client, f.options, store, f.start + 3001s);
  REQUIRE(later.ok());
  CHECK(f.certificatesIn(f.publishedBundle()) == 1);
}

TEST_CASE("certificates: a suspended machine renews an expired certificate at its first check",
          "[certificates]") {
  Fixture f;
  CertificateStore store;
  REQUIRE(checkManagedCertificates(*f.client, f.options, store, f.start).ok());
  const std::string first = store.fingerprint();
  auto report = checkManagedCertificates(*f.client, f.options, store, f.start + 1000s);
  REQUIRE(report.ok());
  CHECK(store.fingerprint() != first);
  CHECK(report->leafNotAfter > f.start + 1000s);
}

TEST_CASE("certificates: changed names re-issue the serving certificate", "[certificates]") {
  Fixture f;
  CertificateStore store;
  REQUIRE(checkManagedCertificates(*f.client, f.options, store, f.start).ok());
  const std::string first = store.fingerprint();
  f.options.serving.dnsNames = {"restarter-webhook.restarter.svc"};
  REQUIRE(checkManagedCertificates(*f.client, f.options, store, f.start + 1s).ok());
  CHECK(store.fingerprint() != first);
}

TEST_CASE("certificates: API errors leave the current certificate in place", "[certificates]") {
  Fixture f;
  CertificateStore store;
  REQUIRE(checkManagedCertificates(*f.client, f.options, store, f.start).ok());
  const std::string first = store.fingerprint();
  f.eraseMwc();
  auto report = checkManagedCertificates(*f.client, f.options, store, f.start + 1000s);
  REQUIRE(report.ok());  // the Secret part worked; publishing is reported
  CHECK_FALSE(report->publishProblem.empty());
  CHECK(store.fingerprint() != first);
}

TEST_CASE("certificates: files are reloaded when their content changes", "[certificates]") {
  namespace fs = std::filesystem;
  const restarter::testing::TempDir temp;
  const fs::path dir = temp.path();
  const auto now = std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());
  auto ca = certs::createCa({}, now);
  REQUIRE(ca);
  certs::ServingRequest serving;
  serving.ipAddresses = {"127.0.0.1"};
  auto a = certs::issueServing(serving, *ca, now);
  auto b = certs::issueServing(serving, *ca, now);
  REQUIRE(a);
  REQUIRE(b);
  auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(dir / name) << content;
  };
  CertificateStore store;
  FileState state;
  CHECK_FALSE(reloadCertificateFiles(dir.string(), store, state).ok());  // nothing there yet
  write("tls.crt", a->certPem);
  write("tls.key", a->keyPem);
  auto loaded = reloadCertificateFiles(dir.string(), store, state);
  REQUIRE(loaded.ok());
  CHECK(*loaded);
  const std::string first = store.fingerprint();
  CHECK_FALSE(*reloadCertificateFiles(dir.string(), store, state));
  // Half-way through a replacement: the pair does not match, the old certificate stays.
  write("tls.crt", b->certPem);
  CHECK_FALSE(reloadCertificateFiles(dir.string(), store, state).ok());
  CHECK(store.fingerprint() == first);
  write("tls.key", b->keyPem);
  auto reloaded = reloadCertificateFiles(dir.string(), store, state);
  REQUIRE(reloaded.ok());
  CHECK(*reloaded);
  CHECK(store.fingerprint() != first);
}

TEST_CASE("certificate names come from the URL or the Service", "[webhook][certificates]") {
  using restarter::webhook::servingNames;
  CHECK(servingNames("https://127.0.0.1:9443/mutate", "", "", "")->ipAddresses ==
        std::vector<std::string>{"127.0.0.1"});
  CHECK(servingNames("https://[::1]:9443/mutate", "", "", "")->ipAddresses == std::vector<std::string>{"::1"});
  CHECK(servingNames("https://hooks.example.com/mutate", "", "", "")->dnsNames ==
        std::vector<std::string>{"hooks.example.com"});
  CHECK(servingNames("", "svc", "ns", "cluster.local")->dnsNames ==
        std::vector<std::string>{"svc", "svc.ns", "svc.ns.svc", "svc.ns.svc.cluster.local"});
  for (const char* bad :
       {"http://127.0.0.1/mutate", "https://127.0.0.1/other", "https:///mutate", "https://[::1/mutate"}) {
    INFO(bad);
    CHECK_FALSE(servingNames(bad, "svc", "ns", "cluster.local").ok());
  }
}
