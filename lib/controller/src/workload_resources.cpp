#include "restarter/controller/workload_resources.hpp"

#include "restarter/core/annotation_keys.hpp"
#include "restarter/core/json_access.hpp"

namespace restarter::controller {

using nlohmann::json;

const std::vector<WorkloadResource>& workloadResources() {
  static const std::vector<WorkloadResource> kinds = [] {
    std::vector<WorkloadResource> rows;
    for (const core::ManagedKind& kind : core::kManagedKinds) {
      rows.push_back({std::string(kind.id),
                      kube::ResourceRef{std::string(kind.group), std::string(kind.version),
                                        std::string(kind.plural), std::string(kind.name), true},
                      std::string(kind.fieldManager), kind.kind, kind.hasOnDelete, kind.crd});
    }
    return rows;
  }();
  return kinds;
}

std::vector<WorkloadResource> enabledWorkloadResources(bool argoRollouts) {
  std::vector<WorkloadResource> rows;
  for (const WorkloadResource& kind : workloadResources()) {
    if (!kind.crd || argoRollouts) rows.push_back(kind);
  }
  return rows;
}

cache::IndexFunc referenceIndex(core::RefKind kind, const core::SelectionOptions& selection) {
  return [kind, selection](const json& object) {
    std::vector<std::string> values;
    auto refs = core::trackedReferences(object, selection);
    if (!refs) return values;
    const std::string ns = core::metadataString(object, "namespace");
    for (const core::Reference& ref : *refs) {
      if (ref.kind == kind) values.push_back(ns + "/" + ref.name);
    }
    return values;
  };
}

cache::PackedStore::IndexFunc packedReferenceIndex(core::RefKind kind,
                                                   const core::SelectionOptions& selection) {
  return [index = referenceIndex(kind, selection)](const cache::PackedObject& object) {
    return index(object.unpack());
  };
}

core::ObjectLookup cacheLookup(const cache::MetaStore& configMaps, const cache::MetaStore& secrets,
                               std::string namespace_, std::string digestKeyId, OtherDigestKind other,
                               ReferenceLoader load, std::stop_token stop) {
  if (other.keyId.empty()) other = OtherDigestKind{digestKeyId, core::DigestScheme::H1};
  return [&configMaps, &secrets, ns = std::move(namespace_), keyId = std::move(digestKeyId),
          other = std::move(other), load = std::move(load), stop](core::RefKind kind, const std::string& name) {
    const cache::MetaStore& store = kind == core::RefKind::ConfigMap ? configMaps : secrets;
    auto found = store.find(cache::objectKey(ns, name));
    if (!found) return core::ObjectState::unknown(found.error().describe());
    core::Result<cache::MetaPtr> object = found->entry;
    if (found->unloaded) {
      if (!load) return core::ObjectState::unknown("cached only as existing, and nothing reads it");
      object = load(kind, ns, name, stop);
      if (!object) return core::ObjectState::unknown(object.error().describe());
    }
    if (*object == nullptr) return core::ObjectState::absent();
    const cache::ObjectMeta& meta = **object;
    if (meta.uid.empty() || meta.resourceVersion.empty())
      return core::ObjectState::unknown("metadata: uid and resourceVersion are required");
    const std::string* ignore = meta.label(core::kIgnoreLabel);
    core::ObjectState state =
        core::ObjectState::present(meta.uid.str(), meta.resourceVersion,
                                   ignore != nullptr && *ignore == core::kIgnoreLabelValue, meta.contentDigest);
    if (state.contentDigest) {
      state.digestKeyId = keyId;
      // Shares the entry: the digests live as long as this state does, whatever the store does.
      if (meta.keyDigestsKnown)
        state.keyDigests = std::shared_ptr<const core::KeyDigests>(*object, &meta.keyDigests);
      if (meta.otherDigest)
        state.otherDigests.push_back(core::OtherDigest{*meta.otherDigest, other.keyId, other.scheme});
    }
    state.reloaderMatch = meta.reloaderMatch;
    state.reloaderIgnore = meta.reloaderIgnore;
    return state;
  };
}

}  // namespace restarter::controller
