#include "restarter/kube/resource.hpp"

namespace restarter::kube {

std::string ResourceRef::apiVersion() const { return group.empty() ? version : group + "/" + version; }

namespace resources {
ResourceRef configMaps() { return {"", "v1", "configmaps", "ConfigMap", true}; }
ResourceRef secrets() { return {"", "v1", "secrets", "Secret", true}; }
ResourceRef pods() { return {"", "v1", "pods", "Pod", true}; }
ResourceRef namespaces() { return {"", "v1", "namespaces", "Namespace", false}; }
ResourceRef serviceAccounts() { return {"", "v1", "serviceaccounts", "ServiceAccount", true}; }
ResourceRef statefulSets() { return {"apps", "v1", "statefulsets", "StatefulSet", true}; }
ResourceRef deployments() { return {"apps", "v1", "deployments", "Deployment", true}; }
ResourceRef daemonSets() { return {"apps", "v1", "daemonsets", "DaemonSet", true}; }
ResourceRef controllerRevisions() { return {"apps", "v1", "controllerrevisions", "ControllerRevision", true}; }
ResourceRef replicaSets() { return {"apps", "v1", "replicasets", "ReplicaSet", true}; }
ResourceRef rollouts() { return {"argoproj.io", "v1alpha1", "rollouts", "Rollout", true}; }
ResourceRef coreEvents() { return {"", "v1", "events", "Event", true}; }
ResourceRef events() { return {"events.k8s.io", "v1", "events", "Event", true}; }
ResourceRef leases() { return {"coordination.k8s.io", "v1", "leases", "Lease", true}; }
ResourceRef podDisruptionBudgets() {
  return {"policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", true};
}
ResourceRef mutatingWebhookConfigurations() {
  return {"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration",
          false};
}
}  // namespace resources

std::string urlEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    bool unreserved = (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') || u == '-' ||
                      u == '.' || u == '_' || u == '~';
    if (unreserved) {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    }
  }
  return out;
}

std::string resourcePath(const ResourceRef& ref, std::string_view namespace_, std::string_view name,
                         std::string_view subresource) {
  std::string path = ref.group.empty() ? "/api/" + ref.version : "/apis/" + ref.group + "/" + ref.version;
  if (ref.namespaced && !namespace_.empty()) path += "/namespaces/" + urlEncode(namespace_);
  path += "/" + ref.plural;
  if (!name.empty()) {
    path += "/" + urlEncode(name);
    if (!subresource.empty()) path += "/" + std::string(subresource);
  }
  return path;
}

}  // namespace restarter::kube
