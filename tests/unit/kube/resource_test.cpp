#include "restarter/kube/resource.hpp"

#include <catch2/catch.hpp>

using namespace restarter::kube;

TEST_CASE("paths for core and grouped and cluster-scoped resources", "[kube][resource]") {
  CHECK(resourcePath(resources::configMaps(), "ns", "cm") == "/api/v1/namespaces/ns/configmaps/cm");
  CHECK(resourcePath(resources::configMaps(), "") == "/api/v1/configmaps");
  CHECK(resourcePath(resources::statefulSets(), "a", "b") == "/apis/apps/v1/namespaces/a/statefulsets/b");
  CHECK(resourcePath(resources::pods(), "a", "p", "eviction") == "/api/v1/namespaces/a/pods/p/eviction");
  CHECK(resourcePath(resources::namespaces(), "ignored", "x") == "/api/v1/namespaces/x");
  CHECK(resources::leases().apiVersion() == "coordination.k8s.io/v1");
  CHECK(resources::secrets().apiVersion() == "v1");
}

TEST_CASE("names and query values are percent-encoded", "[kube][resource]") {
  CHECK(urlEncode("a=b,c d/é") == "a%3Db%2Cc%20d%2F%C3%A9");
  CHECK(resourcePath(resources::configMaps(), "n", "a/b") == "/api/v1/namespaces/n/configmaps/a%2Fb");
}
