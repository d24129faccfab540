#pragma once
// Where a resource lives in the API: group, version, plural, scope. Paths are built here and
// nowhere else.

#include <string>
#include <string_view>

namespace restarter::kube {

struct ResourceRef {
  std::string group;    // "" for the core group
  std::string version;  // "v1"
  std::string plural;   // "configmaps"
  std::string kind;     // "ConfigMap" (for apply bodies and messages)
  bool namespaced = true;

  std::string apiVersion() const;  // "v1" or "apps/v1"
};

namespace resources {
ResourceRef configMaps();
ResourceRef secrets();
ResourceRef pods();
ResourceRef namespaces();
ResourceRef serviceAccounts();
ResourceRef statefulSets();
ResourceRef deployments();
ResourceRef daemonSets();
ResourceRef controllerRevisions();   // apps/v1
ResourceRef replicaSets();           // apps/v1
ResourceRef rollouts();              // argoproj.io/v1alpha1 (Argo Rollouts; served with its CRD only)
ResourceRef events();                // events.k8s.io/v1
ResourceRef coreEvents();            // v1: selects by involvedObject.uid and reason on the server
ResourceRef leases();                // coordination.k8s.io/v1
ResourceRef podDisruptionBudgets();  // policy/v1
ResourceRef mutatingWebhookConfigurations();
}  // namespace resources

// "/api/v1/namespaces/<ns>/configmaps[/<name>[/<subresource>]]"; the namespace part only when
// the resource is namespaced and `namespace_` is non-empty (empty: across all namespaces).
// Names are percent-encoded.
std::string resourcePath(const ResourceRef& ref, std::string_view namespace_, std::string_view name = {},
                         std::string_view subresource = {});

// Percent-encoding of a query value or path segment (RFC 3986 unreserved characters kept).
std::string urlEncode(std::string_view text);

}  // namespace restarter::kube
