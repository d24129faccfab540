#pragma once
// Where manifests/ install restarter, so the default of every flag that names a place of that
// install: the digest key's namespace (digest_key.hpp) and the webhook Service's
// (webhook/mwc.hpp). Written once here; constants only.

namespace restarter::kube {

// The namespace of the Deployments, the webhook's Service and the Secrets they keep.
inline constexpr const char* kInstallNamespace = "restarter-system";

}  // namespace restarter::kube
