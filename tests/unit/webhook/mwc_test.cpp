#include "restarter/webhook/mwc.hpp"

#include <catch2/catch.hpp>

using namespace restarter::webhook;
using nlohmann::json;

TEST_CASE("mwc: registered by URL with every safety setting", "[mwc]") {
  MwcOptions o;
  o.url = "https://127.0.0.1:9443/mutate";
  o.caBundlePem = "PEM";
  o.onlyNamespaces = {"kuttl-test-x"};
  auto built = buildMutatingWebhookConfiguration(o);
  REQUIRE(built.ok());
  const json& mwc = *built;
  CHECK(mwc["apiVersion"] == "admissionregistration.k8s.io/v1");
  CHECK(mwc["kind"] == "MutatingWebhookConfiguration");
  CHECK(mwc["metadata"]["name"] == kDefaultConfigurationName);
  REQUIRE(mwc["webhooks"].size() == 1);
  const json& w = mwc["webhooks"][0];
  CHECK(w["failurePolicy"] == "Ignore");
  CHECK(w["sideEffects"] == "None");
  CHECK(w["admissionReviewVersions"] == json::array({"v1"}));
  CHECK(w["timeoutSeconds"] == 5);
  CHECK(w["reinvocationPolicy"] == "IfNeeded");
  CHECK(w["matchPolicy"] == "Equivalent");
  CHECK(w["clientConfig"]["url"] == "https://127.0.0.1:9443/mutate");
  CHECK(w["clientConfig"]["caBundle"] == "UEVN");
  CHECK_FALSE(w["clientConfig"].contains("service"));
  CHECK(w["objectSelector"]["matchLabels"]["restarter.stackable.tech/enabled"] == "true");
  CHECK(w["rules"][0]["operations"] == json::array({"CREATE", "UPDATE"}));
  CHECK(w["rules"][0]["apiGroups"] == json::array({"apps"}));
  CHECK(w["rules"][0]["resources"] == json::array({"statefulsets", "deployments", "daemonsets"}));
  // Argo Rollouts only with --argo-rollouts.
  CHECK(w["rules"].size() == 1);
  const json& expr = w["namespaceSelector"]["matchExpressions"][0];
  CHECK(expr["key"] == "kubernetes.io/metadata.name");
  CHECK(expr["operator"] == "In");
  CHECK(expr["values"] == json::array({"kuttl-test-x"}));
}

TEST_CASE("mwc registered by service with namespaces excluded and no caBundle", "[mwc]") {
  MwcOptions o;
  o.serviceName = "restarter-webhook";
  o.serviceNamespace = "restarter";
  o.timeoutSeconds = 3;
  o.excludeNamespaces = {"kube-system"};
  auto built = buildMutatingWebhookConfiguration(o);
  REQUIRE(built.ok());
  const json& w = (*built)["webhooks"][0];
  CHECK(w["clientConfig"]["service"] ==
        json({{"name", "restarter-webhook"}, {"namespace", "restarter"}, {"port", 443}, {"path", "/mutate"}}));
  CHECK_FALSE(w["clientConfig"].contains("caBundle"));
  CHECK(w["timeoutSeconds"] == 3);
  CHECK(w["namespaceSelector"]["matchExpressions"][0]["operator"] == "NotIn");
}

TEST_CASE("mwc: the webhook name has three labels", "[mwc]") {
  CHECK(webhookName("restarter-webhook.stackable.tech") == "restarter-webhook.stackable.tech");
  CHECK(webhookName("wh-test") == "wh-test.restarter.stackable.tech");
}

TEST_CASE("mwc: bad options are refused", "[mwc]") {
  auto check = [](MwcOptions o, const char* why) {
    INFO(why);
    CHECK_FALSE(buildMutatingWebhookConfiguration(o).ok());
  };
  MwcOptions none;
  check(none, "neither service nor url");
  MwcOptions both;
  both.url = "https://a/b";
  both.serviceName = "s";
  both.serviceNamespace = "n";
  check(both, "both");
  MwcOptions http;
  http.url = "http://127.0.0.1/x";
  check(http, "not https");
  MwcOptions timeout;
  timeout.url = "https://a/b";
  timeout.timeoutSeconds = 31;
  check(timeout, "timeout above 30");
  timeout.timeoutSeconds = 0;
  check(timeout, "timeout 0");
  MwcOptions selectors;
  selectors.url = "https://a/b";
  selectors.excludeNamespaces = {"a"};
  selectors.onlyNamespaces = {"b"};
  check(selectors, "both selectors");
}

TEST_CASE("mwc: containsAll ignores what only the live object has", "[mwc]") {
  const json desired = {{"metadata", {{"name", "a"}}}, {"webhooks", {{{"name", "w"}, {"timeoutSeconds", 5}}}}};
  json live = desired;
  live["metadata"]["uid"] = "u";
  live["webhooks"][0]["namespaceSelector"] = json::object();
  CHECK(containsAll(live, desired));
  json changed = live;
  changed["webhooks"][0]["timeoutSeconds"] = 10;
  CHECK_FALSE(containsAll(changed, desired));
  json missing = live;
  missing["webhooks"][0].erase("timeoutSeconds");
  CHECK_FALSE(containsAll(missing, desired));
  json extra = live;
  extra["webhooks"].push_back({{"name", "other"}});
  CHECK_FALSE(containsAll(extra, desired));
  CHECK_FALSE(containsAll(json("text"), desired));
  CHECK(containsAll(json::object(), json::object()));
}

TEST_CASE("mwc: withCaBundle sets every webhook's caBundle", "[mwc]") {
  MwcOptions o;
  o.serviceName = "restarter-webhook";
  o.serviceNamespace = "restarter-system";
  auto built = buildMutatingWebhookConfiguration(o);
  REQUIRE(built.ok());
  const json with = withCaBundle(*built, "PEM");
  CHECK(with["webhooks"][0]["clientConfig"]["caBundle"] == "UEVN");
  CHECK(with["webhooks"][0]["clientConfig"]["service"]["name"] == "restarter-webhook");
  CHECK(withCaBundle(json::object(), "PEM") == json::object());
}

TEST_CASE("mwc: with Reloader's annotations every workload but those labeled enabled=false is sent",
          "[mwc][reloader]") {
  MwcOptions o;
  o.url = "https://127.0.0.1:9443/mutate";
  o.reloaderAnnotations = true;
  auto built = buildMutatingWebhookConfiguration(o);
  REQUIRE(built.ok());
  const json& selector = (*built)["webhooks"][0]["objectSelector"];
  CHECK_FALSE(selector.contains("matchLabels"));
  CHECK(selector["matchExpressions"] ==
        json::array(
            {{{"key", "restarter.stackable.tech/enabled"}, {"operator", "NotIn"}, {"values", {"false"}}}}));
}

TEST_CASE("mwc: --argo-rollouts adds a rule of its own for Argo Rollouts' Rollouts", "[mwc]") {
  MwcOptions o;
  o.url = "https://127.0.0.1:9443/mutate";
  o.argoRollouts = true;
  auto built = buildMutatingWebhookConfiguration(o);
  REQUIRE(built.ok());
  const json& rules = (*built)["webhooks"][0]["rules"];
  REQUIRE(rules.size() == 2);
  // The apps rule unchanged: a rule matches its groups x versions x resources, so the custom
  // resource never shares it (no apps/v1alpha1 rollouts, no argoproj.io/v1 deployments).
  CHECK(rules[0]["apiGroups"] == json::array({"apps"}));
  CHECK(rules[0]["apiVersions"] == json::array({"v1"}));
  CHECK(rules[0]["resources"] == json::array({"statefulsets", "deployments", "daemonsets"}));
  CHECK(rules[1]["operations"] == json::array({"CREATE", "UPDATE"}));
  CHECK(rules[1]["apiGroups"] == json::array({"argoproj.io"}));
  CHECK(rules[1]["apiVersions"] == json::array({"v1alpha1"}));
  CHECK(rules[1]["resources"] == json::array({"rollouts"}));
  CHECK(rules[1]["scope"] == "Namespaced");
}
