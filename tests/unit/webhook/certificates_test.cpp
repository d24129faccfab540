#include "restarter/webhook/certificates.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "restarter/core/base64.hpp"
#include "restarter/kube/auth.hpp"
#include "restarter/testing/fake_clock.hpp"
#include "restarter/testing/temp_dir.hpp"
#include "restarter/webhook/mwc.hpp"

using namespace restarter;
using namespace restarter::webhook;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

// An in-memory API server for Secrets and MutatingWebhookConfigurations: GET, POST (create), PUT
// (replace with resourceVersion preconditions), as the real one answers them.
class FakeApi final : public kube::Transport {
 public:
  std::map<std::string, json> objects;  // by item path
  std::function<void(const std::string& method, const std::string& path)> before;
  int writes = 0;
  int applies = 0;
  int nextVersion = 1;
  bool forbidCreate = false;  // RBAC without create on Secrets (the installs' webhook role)

  core::Result<kube::Response> send(const kube::Request& request) override {
    std::lock_guard lock(mutex_);
    std::string path = request.path.substr(0, request.path.find('?'));
    if (before) before(request.method, path);
    if (request.method == "GET") {
      const auto it = objects.find(path);
      if (it == objects.end()) return status(404, "NotFound");
      return kube::Response{200, {}, it->second.dump()};
    }
    json body = json::parse(request.body);
    if (request.method == "POST") {
      if (forbidCreate) return status(403, "Forbidden");
      path += "/" + body["metadata"]["name"].get<std::string>();
      if (objects.count(path) > 0) return status(409, "AlreadyExists");
      return store(path, body);
    }
    if (request.method == "PATCH") {
      // Server-side apply as far as this test needs it: the applied object becomes the object
      // (creating it when missing), plus a field the server defaults.
      for (const auto& [name, value] : request.headers) {
        if (name == "Content-Type" && value != "application/apply-patch+yaml")
          return status(415, "UnsupportedMediaType");
      }
      ++applies;
      const auto it = objects.find(path);
      if (it != objects.end()) body["metadata"]["uid"] = it->second["metadata"].value("uid", "");
      if (body["metadata"].value("uid", "").empty())
        body["metadata"]["uid"] = "uid-" + std::to_string(nextVersion);
      return store(path, body);
    }
    if (request.method == "PUT") {
      const auto it = objects.find(path);
      if (it == objects.end()) return status(404, "NotFound");
      if (body["metadata"].value("resourceVersion", "") != it->second["metadata"]["resourceVersion"]) {
        return status(409, "Conflict");
      }
      return store(path, body);
    }
    return status(405, "MethodNotAllowed");
  }
  core::Result<kube::Response> stream(const kube::Request&, const kube::ChunkHandler&,
                                      std::stop_token) override {
    return core::makeError(core::ErrorKind::Internal, "no streams here");
  }

  // Writes without going through send() (another replica, a test setup).
  void put(const std::string& path, json object) {
    std::lock_guard lock(mutex_);
    object["metadata"]["resourceVersion"] = std::to_string(nextVersion++);
    objects[path] = object;
  }

 private:
  core::Result<kube::Response> store(const std::string& path, json body) {
    body["metadata"]["resourceVersion"] = std::to_string(nextVersion++);
    objects[path] = body;
    ++writes;
    return kube::Response{path.find("/secrets/") != std::string::npos ? 201L : 200L, {}, body.dump()};
  }
  static core::Result<kube::Response> status(long code, const std::string& reason) {
    const json s = {{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                    {"reason", reason}, {"code", code},       {"message", reason}};
    return kube::Response{code, {}, s.dump()};
  }
  std::recursive_mutex mutex_;
};

class NoAuth final : public kube::Authenticator {
 public:
  core::Result<kube::Credential> credential() override { return kube::Credential{}; }
  bool invalidate(const kube::Credential&) override { return false; }
};

const std::string kSecretPath = "/api/v1/namespaces/restarter/secrets/restarter-webhook-certs";
const std::string kMwcPath =
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/restarter-webhook.stackable.tech";

struct Fixture {
  FakeApi* api = nullptr;
  restarter::testing::FakeClock clock{restarter::testing::FakeClock::Waits::Advance, {}};
  std::unique_ptr<kube::Client> client;
  ManagedOptions options;
  core::TimePoint start =
      std::chrono::time_point_cast<std::chrono::microseconds>(std::chrono::system_clock::now());

  Fixture() {
    auto transport = std::make_unique<FakeApi>();
    api = transport.get();
    client = std::make_unique<kube::Client>(std::move(transport), std::make_unique<NoAuth>(), "default", clock);
    options.secretNamespace = "restarter";
    options.secretName = "restarter-webhook-certs";
    options.configurationName = "restarter-webhook.stackable.tech";
    options.serving.ipAddresses = {"127.0.0.1"};
    options.serving.validity = 300s;
    options.ca.validity = 3000s;
    options.policy.caPropagation = 30s;
    api->put(kMwcPath, {{"apiVersion", "admissionregistration.k8s.io/v1"},
                        {"kind", "MutatingWebhookConfiguration"},
                        {"metadata", {{"name", "restarter-webhook.stackable.tech"}}},
                        {"webhooks",
                         {{{"name", "restarter-webhook.stackable.tech"},
                           {"clientConfig", {{"url", "https://127.0.0.1:9443/mutate"}}}}}}});
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
    auto decoded = core::base64Decode(api->objects.at(kSecretPath)["data"].value(key, ""));
    REQUIRE(decoded);
    return *decoded;
  }
  std::string publishedBundle() {
    auto decoded =
        core::base64Decode(api->objects.at(kMwcPath)["webhooks"][0]["clientConfig"].value("caBundle", ""));
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
  json mwc = f.api->objects.at(kMwcPath);
  mwc["webhooks"][0]["clientConfig"]["caBundle"] = 7;
  f.api->put(kMwcPath, mwc);
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
  f.api->objects.at(kSecretPath)["metadata"]["resourceVersion"] = 7;
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
  f.api->forbidCreate = true;
  f.api->put(kSecretPath, {{"apiVersion", "v1"},
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
  const json& secret = f.api->objects.at(kSecretPath);
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
  f.api->forbidCreate = true;
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
  const int writes = f.api->writes;
  auto again = checkManagedCertificates(*f.client, f.options, store, f.start + 10s);
  REQUIRE(again.ok());
  CHECK_FALSE(again->secretWritten);
  CHECK_FALSE(again->bundlePublished);
  CHECK(again->actions.empty());
  CHECK(f.api->writes == writes);
}

TEST_CASE("certificates: a managed configuration is created with the CA bundle and then left alone",
          "[certificates]") {
  Fixture f;
  f.api->objects.erase(kMwcPath);
  f.manageConfiguration();
  CertificateStore store;
  auto report = checkManagedCertificates(*f.client, f.options, store, f.start);
  REQUIRE(report.ok());
  CHECK(report->configurationApplied);
  CHECK(report->publishProblem.empty());
  REQUIRE(f.api->objects.count(kMwcPath) == 1);
  CHECK(f.publishedBundle() == f.data("ca-bundle.crt"));
  CHECK(f.api->objects.at(kMwcPath)["webhooks"][0]["failurePolicy"] == "Ignore");
  CHECK(f.api->applies == 1);

  // Up to date (the server added fields of its own): no write.
  auto again = checkManagedCertificates(*f.client, f.options, store, f.start + 10s);
  REQUIRE(again.ok());
  CHECK_FALSE(again->configurationApplied);
  CHECK(f.api->applies == 1);
}

TEST_CASE("certificates: a hand edit of the managed configuration is undone at the next check",
          "[certificates]") {
  Fixture f;
  f.manageConfiguration();
  CertificateStore store;
  REQUIRE(checkManagedCertificates(*f.client, f.options, store, f.start).ok());
  json edited = f.api->objects.at(kMwcPath);
  edited["webhooks"][0]["failurePolicy"] = "Fail";
  f.api->put(kMwcPath, edited);
  auto report = checkManagedCertificates(*f.client, f.options, store, f.start + 10s);
  REQUIRE(report.ok());
  CHECK(report->configurationApplied);
  CHECK(f.api->objects.at(kMwcPath)["webhooks"][0]["failurePolicy"] == "Ignore");
  CHECK(f.publishedBundle() == f.data("ca-bundle.crt"));
}

TEST_CASE("certificates: a replica that loses the create race adopts the winner's certificates",
          "[certificates]") {
  Fixture winner;
  CertificateStore winnerStore;
  REQUIRE(checkManagedCertificates(*winner.client, winner.options, winnerStore, winner.start).ok());
  const json winnerSecret = winner.api->objects.at(kSecretPath);

  Fixture loser;
  bool raced = false;
  loser.api->before = [&](const std::string& method, const std::string&) {
    // The other replica creates the Secret between our read and our create.
    if (method == "POST" && !raced) {
      raced = true;
      loser.api->put(kSecretPath, winnerSecret);
    }
  };
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
  CHECK(f.api->objects.at(kSecretPath)["data"].count("next-ca.crt") == 0);
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
  f.api->objects.erase(kMwcPath);
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
