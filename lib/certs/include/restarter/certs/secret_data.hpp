#pragma once
// The certificate material restarter keeps in a Secret, in one form for every reader and writer
// (gen-certs --secret, serve-webhook's managed certificates, install-mwc --ca-bundle-secret): the
// PEM text of each file by its data key, and the names a Service's clients use for the serving
// certificate (docs/architecture.md, "Managed certificates").
//
// Pure functions of their arguments: any thread.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace restarter::certs {

// The data keys (kubernetes.io/tls names its certificate and key; ca.crt is the usual extra key).
inline constexpr const char* kCaCertKey = "ca.crt";
inline constexpr const char* kLeafCertKey = "tls.crt";
inline constexpr const char* kLeafKeyKey = "tls.key";
inline constexpr const char* kCaBundleKey = "ca-bundle.crt";

// Data key -> PEM text.
using SecretPems = std::map<std::string, std::string>;

// The PEM texts of `secret`'s data: every value that is a string of valid base64, decoded; any
// other value, and any other shape of `secret`, is left out (never throws).
SecretPems decodeSecretData(const nlohmann::json& secret);

// `pems` as a Secret's `data` (each value base64).
nlohmann::json encodeSecretData(const SecretPems& pems);

// The DNS names a client in the cluster may use for `service` in `namespace_`: "service",
// "service.namespace", "service.namespace.svc", "service.namespace.svc.clusterDomain".
std::vector<std::string> serviceDnsNames(const std::string& service, const std::string& namespace_,
                                         const std::string& clusterDomain);

}  // namespace restarter::certs
