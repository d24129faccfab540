#include "restarter/certs/secret_data.hpp"

#include "restarter/core/base64.hpp"

namespace restarter::certs {

SecretPems decodeSecretData(const nlohmann::json& secret) {
  SecretPems pems;
  if (!secret.is_object()) return pems;
  const auto data = secret.find("data");
  if (data == secret.end() || !data->is_object()) return pems;
  for (const auto& [key, value] : data->items()) {
    if (!value.is_string()) continue;
    if (auto decoded = core::base64Decode(value.get_ref<const std::string&>())) pems[key] = std::move(*decoded);
  }
  return pems;
}

nlohmann::json encodeSecretData(const SecretPems& pems) {
  nlohmann::json data = nlohmann::json::object();
  for (const auto& [key, pem] : pems) data[key] = core::base64Encode(pem);
  return data;
}

std::vector<std::string> serviceDnsNames(const std::string& service, const std::string& namespace_,
                                         const std::string& clusterDomain) {
  const std::string qualified = service + "." + namespace_;
  return {service, qualified, qualified + ".svc", qualified + ".svc." + clusterDomain};
}

}  // namespace restarter::certs
