#pragma once
// API discovery of one resource: whether the apiserver serves it now (a custom resource is served
// only while its CustomResourceDefinition is installed). One GET of the group version's discovery
// document (/apis/<group>/<version>), which every authenticated client may read (the
// system:discovery ClusterRole), so no RBAC is needed.

#include "restarter/core/result.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/resource.hpp"

namespace restarter::kube {

// The largest discovery document read (bytes): Argo Rollouts' argoproj.io/v1alpha1 is ~3 KB; a
// group version of hundreds of resources stays far below.
inline constexpr std::size_t kMaxDiscoveryBytes = 4 * 1024 * 1024;

// Whether `ref`'s plural is among the resources of its group version's discovery document. False
// when the group version is not served (404); an error when the document cannot be read or is not
// an APIResourceList (the caller asks again later).
core::Result<bool> resourceServed(Client& client, const ResourceRef& ref);

// The same decision over a discovery document's text (exposed for tests).
core::Result<bool> listsResource(std::string_view discoveryDocument, const ResourceRef& ref);

}  // namespace restarter::kube
