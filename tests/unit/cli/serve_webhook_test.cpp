#include "restarter/cli/serve_webhook.hpp"

#include <algorithm>
#include <sstream>

#include <catch2/catch.hpp>

#include "restarter/cli/install_mwc.hpp"

using namespace restarter;
using namespace restarter::cli;

namespace {

struct Parsed {
  std::optional<int> exit;
  std::string out;
  std::string err;
};

template <typename Options, typename Parse>
Parsed parse(Parse parseFn, std::vector<std::string> args, Options& options) {
  std::ostringstream out, err;
  Io io{out, err, "restarter"};
  const auto exit = parseFn(args, io, options);
  return {exit, out.str(), err.str()};
}

}  // namespace

TEST_CASE("serve-webhook: defaults and flags parse", "[cli][serve-webhook]") {
  ServeWebhookOptions options;
  const Parsed p =
      parse(parseServeWebhookFlags,
            {"--port", "9443", "--bind-address", "127.0.0.1", "--webhook-url", "https://127.0.0.1:9443/mutate",
             "--validity", "1h", "--ca-validity", "48h", "--lookup-timeout", "2s", "--metrics-bind-address",
             "0", "--secret-namespace", "hooks", "--lookup-share", "0.5"},
            options);
  REQUIRE_FALSE(p.exit);
  CHECK(options.server.lookupLimits.share == 0.5);
  CHECK(ServeWebhookOptions{}.server.lookupLimits.share == 0.25);
  CHECK(options.server.address.port == 9443);
  CHECK(options.server.address.host == "127.0.0.1");
  CHECK(options.validity == std::chrono::hours(1));
  CHECK(options.caValidity == std::chrono::hours(48));
  CHECK(options.server.lookupTimeout == std::chrono::seconds(2));
  CHECK_FALSE(options.metricsAddress.has_value());
  CHECK(options.healthAddress.has_value());
  CHECK(options.secretNamespace == "hooks");
  CHECK(options.secretName == "restarter-webhook-certs");
}

TEST_CASE("serve-webhook: certificate names come from the flags", "[cli][serve-webhook]") {
  ServeWebhookOptions options;
  options.webhookUrl = "https://127.0.0.1:9443/mutate";
  CHECK(servingNames(options)->ipAddresses == std::vector<std::string>{"127.0.0.1"});
  options.webhookUrl.clear();
  options.service = "svc";
  options.serviceNamespace = "ns";
  CHECK(servingNames(options)->dnsNames.back() == "svc.ns.svc.cluster.local");
}

TEST_CASE("serve-webhook: --manage-configuration builds the configuration by Service or URL",
          "[cli][serve-webhook]") {
  ServeWebhookOptions options;
  const Parsed p = parse(parseServeWebhookFlags,
                         {"--manage-configuration", "--service-namespace", "hooks", "--service-port", "8443",
                          "--timeout-seconds", "3", "--exclude-namespace", "kube-system"},
                         options);
  REQUIRE_FALSE(p.exit);
  CHECK(options.manageConfiguration);
  auto byService = managedConfiguration(options);
  REQUIRE(byService.ok());
  const auto& webhook = (*byService)["webhooks"][0];
  CHECK(webhook["clientConfig"]["service"]["namespace"] == "hooks");
  CHECK(webhook["clientConfig"]["service"]["name"] == "restarter-webhook");
  CHECK(webhook["clientConfig"]["service"]["port"] == 8443);
  CHECK(webhook["timeoutSeconds"] == 3);
  CHECK_FALSE(webhook["clientConfig"].contains("caBundle"));
  CHECK((*byService)["metadata"]["name"] == "restarter-webhook.stackable.tech");

  ServeWebhookOptions byUrlOptions;
  REQUIRE_FALSE(parse(parseServeWebhookFlags,
                      {"--manage-configuration", "--webhook-url", "https://127.0.0.1:9443/mutate",
                       "--only-namespace", "a"},
                      byUrlOptions)
                    .exit);
  auto byUrl = managedConfiguration(byUrlOptions);
  REQUIRE(byUrl.ok());
  CHECK((*byUrl)["webhooks"][0]["clientConfig"]["url"] == "https://127.0.0.1:9443/mutate");
}

TEST_CASE(
    "serve-webhook: the Service namespace defaults to the install's and --namespace still works and warns",
    "[cli][serve-webhook]") {
  ServeWebhookOptions defaults;
  REQUIRE_FALSE(parse(parseServeWebhookFlags, {}, defaults).exit);
  CHECK(defaults.serviceNamespace == "restarter-system");
  ServeWebhookOptions old;
  const Parsed p = parse(parseServeWebhookFlags, {"--namespace", "hooks"}, old);
  REQUIRE_FALSE(p.exit);
  CHECK(old.serviceNamespace == "hooks");
  CHECK(p.err == "Flag --namespace has been deprecated, use --service-namespace instead\n");
  ServeWebhookOptions both;
  const Parsed twice = parse(parseServeWebhookFlags, {"--namespace", "a", "--service-namespace", "b"}, both);
  REQUIRE(twice.exit);
  CHECK(*twice.exit == kExitUsage);
}

TEST_CASE("install-mwc: --namespace still works and warns", "[cli][install-mwc]") {
  InstallMwcOptions options;
  const Parsed p = parse(parseInstallMwcFlags, {"--service", "s", "--namespace", "hooks"}, options);
  REQUIRE_FALSE(p.exit);
  CHECK(options.mwc.serviceNamespace == "hooks");
  CHECK(p.err == "Flag --namespace has been deprecated, use --service-namespace instead\n");
  InstallMwcOptions current;
  const Parsed q = parse(parseInstallMwcFlags, {"--service", "s", "--service-namespace", "hooks"}, current);
  REQUIRE_FALSE(q.exit);
  CHECK(current.mwc.serviceNamespace == "hooks");
  CHECK(q.err.empty());
  InstallMwcOptions defaults;
  REQUIRE_FALSE(parse(parseInstallMwcFlags, {"--service", "s"}, defaults).exit);
  CHECK(defaults.mwc.serviceNamespace == "restarter-system");
}

TEST_CASE("serve-webhook: bad flags are usage errors", "[cli][serve-webhook]") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--port", "70000"},
        {"--validity", "0s"},
        {"--validity", "2h", "--ca-validity", "3h"},
        {"--key-type", "dsa"},
        {"--webhook-url", "https://x/other"},
        {"--metrics-bind-address", "nope"},
        {"--threads", "0"},
        {"--log-level", "loud"},
        {"--lookup-timeout", "x"},
        {"--lookup-share", "0"},
        {"--lookup-share", "1.5"},
        {"--lookup-share", "-0.1"},
        {"--lookup-share", "nan"},
        {"--lookup-share", "a quarter"},
        {"--manage-configuration", "--cert-dir", "certs"},
        {"--manage-configuration", "--timeout-seconds", "31"},
        {"--manage-configuration", "--exclude-namespace", "a", "--only-namespace", "b"},
        {"--manage-configuration", "--service-port", "0"}}) {
    INFO(args.front());
    ServeWebhookOptions options;
    const Parsed p = parse(parseServeWebhookFlags, args, options);
    REQUIRE(p.exit);
    CHECK(*p.exit == kExitUsage);
  }
  ServeWebhookOptions options;
  const Parsed help = parse(parseServeWebhookFlags, {"--help"}, options);
  CHECK(help.exit == kExitOk);
  for (const char* flag :
       {"--cert-dir", "--webhook-url", "--secret-name", "--configuration-name", "--validity", "--ca-validity",
        "--ca-propagation", "--cert-check-interval", "--lookup-timeout", "--port"}) {
    CHECK_THAT(help.out, Catch::Contains(flag));
  }
}

TEST_CASE("install-mwc: dry-run prints the configuration without a cluster", "[cli][install-mwc]") {
  std::ostringstream out, err;
  const int code = runApp({"restarter", "install-mwc", "--dry-run", "--webhook-url",
                           "https://127.0.0.1:9443/mutate", "--only-namespace", "a", "--timeout-seconds", "3"},
                          out, err);
  CHECK(code == kExitOk);
  CHECK_THAT(out.str(), Catch::Contains("failurePolicy: Ignore"));
  CHECK_THAT(out.str(), Catch::Contains("url: \"https://127.0.0.1:9443/mutate\""));
  CHECK_THAT(out.str(), Catch::Contains("timeoutSeconds: 3"));
}

TEST_CASE("install-mwc: bad flags are usage errors", "[cli][install-mwc]") {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{},
        {"--webhook-url", "http://x/mutate"},
        {"--service", "s", "--webhook-url", "https://x/mutate"},
        {"--webhook-url", "https://x/mutate", "--timeout-seconds", "31"},
        {"--webhook-url", "https://x/mutate", "--dry-run", "--delete"},
        {"--webhook-url", "https://x/mutate", "--ca-bundle-secret", "noslash"},
        {"--webhook-url", "https://x/mutate", "--ca-bundle-file", "a", "--ca-bundle-secret", "n/s"}}) {
    INFO(args.size());
    InstallMwcOptions options;
    const Parsed p = parse(parseInstallMwcFlags, args, options);
    REQUIRE(p.exit);
    CHECK(*p.exit == kExitUsage);
  }
}

TEST_CASE("install-mwc: an unreadable CA bundle file fails without writing", "[cli][install-mwc]") {
  std::ostringstream out, err;
  const int code = runApp({"restarter", "install-mwc", "--dry-run", "--webhook-url",
                           "https://127.0.0.1:9443/mutate", "--ca-bundle-file", "/nonexistent/ca.crt"},
                          out, err);
  CHECK(code == kExitFailure);
  CHECK_THAT(err.str(), Catch::Contains("cannot read \"/nonexistent/ca.crt\": No such file or directory"));
}

TEST_CASE("serve-webhook: --ca-validity 90s alone exits 2 naming every flag it conflicts with",
          "[cli][serve-webhook]") {
  ServeWebhookOptions options;
  const Parsed p = parse(parseServeWebhookFlags, {"--ca-validity", "90s"}, options);
  REQUIRE(p.exit);
  CHECK(*p.exit == kExitUsage);
  CHECK_THAT(
      p.err,
      Catch::StartsWith("restarter serve-webhook: --ca-validity 1m30s is less than twice --validity 24h") &&
          Catch::Contains("; --ca-propagation 30s + 2 x --cert-check-interval 10s is more than a third "
                          "of --ca-validity 1m30s") &&
          Catch::EndsWith("Run 'restarter serve-webhook --help' for usage.\n"));
  // One message: a single problem line before the usage hint.
  CHECK(std::count(p.err.begin(), p.err.end(), '\n') == 2);
}

TEST_CASE("serve-webhook: certificate durations are checked at their limits", "[cli][serve-webhook]") {
  auto exitOf = [](std::vector<std::string> args) {
    ServeWebhookOptions options;
    return parse(parseServeWebhookFlags, std::move(args), options);
  };
  // The rotation suite's short lifetimes, and each relation exactly at its limit.
  CHECK_FALSE(exitOf({"--validity", "20s", "--ca-validity", "60s", "--ca-propagation", "5s",
                      "--cert-check-interval", "1s"})
                  .exit);
  CHECK_FALSE(exitOf({"--validity", "30s", "--cert-check-interval", "10s"}).exit);
  CHECK_FALSE(exitOf({"--validity", "45s", "--ca-validity", "90s", "--ca-propagation", "10s",
                      "--cert-check-interval", "10s"})
                  .exit);
  // One second past each.
  const Parsed check = exitOf({"--validity", "30s", "--cert-check-interval", "11s"});
  CHECK(check.exit == kExitUsage);
  CHECK_THAT(check.err, Catch::Contains("--cert-check-interval 11s is more than a third of --validity 30s"));
  const Parsed propagation = exitOf(
      {"--validity", "45s", "--ca-validity", "90s", "--ca-propagation", "11s", "--cert-check-interval", "10s"});
  CHECK(propagation.exit == kExitUsage);
  CHECK_THAT(propagation.err, Catch::Contains("--ca-propagation 11s + 2 x --cert-check-interval 10s"));
  const Parsed ca = exitOf(
      {"--validity", "46s", "--ca-validity", "90s", "--ca-propagation", "10s", "--cert-check-interval", "10s"});
  CHECK(ca.exit == kExitUsage);
  CHECK_THAT(ca.err, Catch::Contains("--ca-validity 1m30s is less than twice --validity 46s"));
  // With --cert-dir nothing is rotated: the managed certificates' durations are not used.
  CHECK_FALSE(exitOf({"--cert-dir", "certs", "--ca-validity", "90s"}).exit);
}

TEST_CASE("serve-webhook: --reloader-annotations reaches the handler and the managed configuration",
          "[cli][serve-webhook][reloader]") {
  ServeWebhookOptions options;
  const Parsed p =
      parse(parseServeWebhookFlags,
            {"--webhook-url", "https://127.0.0.1:9443/mutate", "--reloader-annotations", "--auto-reload-all"},
            options);
  REQUIRE_FALSE(p.exit);
  CHECK(options.server.selection.reloaderAnnotations);
  CHECK(options.server.selection.autoReloadAll);
  CHECK(options.configuration.reloaderAnnotations);

  ServeWebhookOptions plain;
  REQUIRE_FALSE(parse(parseServeWebhookFlags, {"--webhook-url", "https://127.0.0.1:9443/mutate"}, plain).exit);
  CHECK_FALSE(plain.configuration.reloaderAnnotations);
}

TEST_CASE("install-mwc: --reloader-annotations shapes the objectSelector", "[cli][install-mwc][reloader]") {
  InstallMwcOptions options;
  REQUIRE_FALSE(parse(parseInstallMwcFlags, {"--service", "s", "--reloader-annotations"}, options).exit);
  CHECK(options.mwc.reloaderAnnotations);
  InstallMwcOptions plain;
  REQUIRE_FALSE(parse(parseInstallMwcFlags, {"--service", "s"}, plain).exit);
  CHECK_FALSE(plain.mwc.reloaderAnnotations);
}
