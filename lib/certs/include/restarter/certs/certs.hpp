#pragma once
// restarter::certs — X.509 for the webhook's serving certificate, on OpenSSL 3: key generation, a
// self-signed CA, serving certificates signed by it, PEM in and out, inspection, and caBundle
// merging. PEM strings are the currency, so no OpenSSL type appears here. Time is passed in
// (docs/architecture.md, "Injected time"): nothing here reads a clock.
//
// Thread-safety: every function is reentrant; nothing is shared between calls.

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "restarter/core/result.hpp"
#include "restarter/core/time.hpp"

namespace restarter::certs {

using core::Result;
using core::Status;
using core::TimePoint;

enum class KeyType { EcdsaP256, EcdsaP384, Rsa2048, Rsa4096 };

// "ecdsa-p256", "ecdsa-p384", "rsa-2048", "rsa-4096".
const char* keyTypeName(KeyType type) noexcept;
Result<KeyType> parseKeyType(std::string_view name);

// A certificate and its private key, both PEM (the key as PKCS#8).
struct KeyedCertificate {
  std::string certPem;
  std::string keyPem;
};

struct CaRequest {
  std::string commonName = "restarter-webhook-ca";
  std::chrono::seconds validity{std::chrono::hours(24 * 365 * 10)};
  KeyType keyType = KeyType::EcdsaP256;
};

struct ServingRequest {
  std::string commonName;                // defaults to the first DNS name, else the first IP
  std::vector<std::string> dnsNames;     // subjectAltName DNS entries
  std::vector<std::string> ipAddresses;  // subjectAltName IP entries (IPv4 or IPv6 text)
  std::chrono::seconds validity{std::chrono::hours(24 * 365)};
  KeyType keyType = KeyType::EcdsaP256;
};

// Certificates are valid from `now` minus this (clocks of the apiserver and of us may differ).
inline constexpr std::chrono::minutes kBackdate{5};

// A new self-signed CA (basicConstraints CA:TRUE, pathlen 0; keyUsage keyCertSign, cRLSign).
Result<KeyedCertificate> createCa(const CaRequest& request, TimePoint now);

// A new serving certificate signed by `ca` (CA:FALSE; keyUsage digitalSignature (+
// keyEncipherment for RSA); extendedKeyUsage serverAuth; the SANs). InvalidInput when there is no
// SAN, a DNS name or IP is malformed, or `ca` is not a CA key pair. Its validity is cut to end no
// later than the CA's.
Result<KeyedCertificate> issueServing(const ServingRequest& request, const KeyedCertificate& ca, TimePoint now);

struct CertificateInfo {
  std::string subject;  // one-line form, e.g. "CN=restarter-webhook-ca"
  std::string issuer;
  std::string serialHex;
  std::string sha256Fingerprint;  // lower-case hex of the DER
  TimePoint notBefore;
  TimePoint notAfter;
  bool isCa = false;
  std::vector<std::string> dnsNames;
  std::vector<std::string> ipAddresses;
};

// Every certificate in a PEM text, in order. InvalidInput when there is none or a block is
// malformed.
Result<std::vector<CertificateInfo>> inspect(std::string_view pem);

// Ok when the first certificate of `certPem` belongs to the private key `keyPem`.
Status checkKeyMatches(std::string_view certPem, std::string_view keyPem);

// Ok when the first certificate of `leafPem` is signed by the first certificate of `caPem`.
Status checkIssuedBy(std::string_view leafPem, std::string_view caPem);

// A caBundle: `bundlePem`'s certificates that are not yet expired at `now`, then `addPem`'s, each
// certificate once (by fingerprint), in PEM. Used to roll a CA with overlap: old and new CA are
// both trusted until the old one expires or is dropped.
Result<std::string> mergeBundle(std::string_view bundlePem, std::string_view addPem, TimePoint now);

}  // namespace restarter::certs
