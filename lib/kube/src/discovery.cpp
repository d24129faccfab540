#include "restarter/kube/discovery.hpp"

#include <string>
#include <vector>

#include "restarter/core/json_parse.hpp"

namespace restarter::kube {

core::Result<bool> listsResource(std::string_view discoveryDocument, const ResourceRef& ref) {
  // Only `resources` is built: the rest of the document is never needed.
  auto parsed =
      core::parseJson(discoveryDocument, core::JsonLimits{kMaxDiscoveryBytes},
                      [](const std::vector<std::string>& path) { return path.front() == "resources"; });
  if (!parsed)
    return std::move(parsed).error().withContext("reading the discovery document of " + ref.apiVersion());
  const nlohmann::json& document = *parsed;
  const auto resources = document.is_object() ? document.find("resources") : document.end();
  if (!document.is_object() || resources == document.end() || !resources->is_array()) {
    return core::makeError(core::ErrorKind::InvalidInput,
                           "the discovery document of " + ref.apiVersion() + " has no resources list");
  }
  for (const nlohmann::json& resource : *resources) {
    if (!resource.is_object()) continue;
    const auto name = resource.find("name");
    if (name != resource.end() && name->is_string() && name->get_ref<const std::string&>() == ref.plural)
      return true;
  }
  return false;
}

core::Result<bool> resourceServed(Client& client, const ResourceRef& ref) {
  auto body = client.getRaw("/apis/" + ref.group + "/" + ref.version);
  if (!body) {
    if (body.error().kind == core::ErrorKind::NotFound) return false;
    return std::move(body).error().withContext("discovering " + ref.plural + "." + ref.group);
  }
  return listsResource(*body, ref);
}

}  // namespace restarter::kube
