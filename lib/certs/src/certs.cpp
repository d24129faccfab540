#include "restarter/certs/certs.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <ctime>
#include <set>

#include <openssl/pem.h>
#include <openssl/rand.h>

#include "openssl_handles.hpp"

namespace restarter::certs {

using core::Error;
using core::ErrorKind;
using core::makeError;
using namespace detail;

const char* keyTypeName(KeyType type) noexcept {
  switch (type) {
    case KeyType::EcdsaP256: return "ecdsa-p256";
    case KeyType::EcdsaP384: return "ecdsa-p384";
    case KeyType::Rsa2048: return "rsa-2048";
    case KeyType::Rsa4096: return "rsa-4096";
  }
  return "ecdsa-p256";
}

Result<KeyType> parseKeyType(std::string_view name) {
  for (KeyType type : {KeyType::EcdsaP256, KeyType::EcdsaP384, KeyType::Rsa2048, KeyType::Rsa4096}) {
    if (name == keyTypeName(type)) return type;
  }
  return makeError(ErrorKind::InvalidInput, "unknown key type \"" + std::string(name) +
                                                "\" (use ecdsa-p256, ecdsa-p384, rsa-2048 or rsa-4096)");
}

namespace {

bool isRsa(KeyType type) { return type == KeyType::Rsa2048 || type == KeyType::Rsa4096; }

Result<PkeyPtr> generateKey(KeyType type) {
  EVP_PKEY* key = nullptr;
  switch (type) {
    case KeyType::EcdsaP256: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"); break;
    case KeyType::EcdsaP384: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-384"); break;
    case KeyType::Rsa2048: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", std::size_t{2048}); break;
    case KeyType::Rsa4096: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", std::size_t{4096}); break;
  }
  if (key == nullptr) {
    return opensslError(ErrorKind::Internal, std::string("generating a ") + keyTypeName(type) + " key");
  }
  return PkeyPtr(key);
}

std::time_t toTimeT(TimePoint t) {
  return static_cast<std::time_t>(std::chrono::floor<std::chrono::seconds>(t).time_since_epoch().count());
}

TimePoint fromAsn1(const ASN1_TIME* time) {
  std::tm tm{};
  if (time == nullptr || ASN1_TIME_to_tm(time, &tm) != 1) return TimePoint{};
  return TimePoint{std::chrono::seconds{timegm(&tm)}};
}

// DNS name for a SAN: labels of [a-z0-9-] (any case), not starting or ending with '-', at most
// 63 characters each and 253 in all; an optional leading "*." wildcard.
bool isValidDnsName(std::string_view name) {
  if (name.rfind("*.", 0) == 0) name.remove_prefix(2);
  if (name.empty() || name.size() > 253) return false;
  std::size_t labelStart = 0;
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '.') {
      const std::string_view label = name.substr(labelStart, i - labelStart);
      if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
        return false;
      }
      labelStart = i + 1;
      continue;
    }
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (!std::isalnum(c) && c != '-') return false;
  }
  return true;
}

bool isValidIp(const std::string& ip) {
  std::array<unsigned char, 16> buffer{};
  return inet_pton(AF_INET, ip.c_str(), buffer.data()) == 1 ||
         inet_pton(AF_INET6, ip.c_str(), buffer.data()) == 1;
}

core::Status addExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  ExtensionPtr ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return opensslError(ErrorKind::Internal,
                        "adding extension " + std::string(OBJ_nid2sn(nid)) + " = " + value);
  }
  return core::okStatus();
}

// A certificate for `key` with a random 127-bit serial, the subject CN and the validity set.
Result<X509Ptr> newCertificate(EVP_PKEY* key, const std::string& commonName, TimePoint notBefore,
                               TimePoint notAfter) {
  X509Ptr cert(X509_new());
  if (!cert) return opensslError(ErrorKind::Internal, "allocating a certificate");
  std::array<unsigned char, 16> serial{};
  if (RAND_bytes(serial.data(), static_cast<int>(serial.size())) != 1) {
    return opensslError(ErrorKind::Internal, "drawing a serial number");
  }
  serial[0] &= 0x7f;  // positive
  serial[0] |= 0x40;  // and of full length
  BignumPtr bn(BN_bin2bn(serial.data(), static_cast<int>(serial.size()), nullptr));
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (!bn || X509_set_version(cert.get(), X509_VERSION_3) != 1 ||
      BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert.get())) == nullptr ||
      ASN1_TIME_set(X509_getm_notBefore(cert.get()), toTimeT(notBefore)) == nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert.get()), toTimeT(notAfter)) == nullptr ||
      X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(commonName.c_str()), -1, -1, 0) != 1 ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return opensslError(ErrorKind::Internal, "filling in a certificate for " + commonName);
  }
  return cert;
}

Result<std::string> certToPem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return opensslError(ErrorKind::Internal, "encoding a certificate as PEM");
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

Result<std::string> keyToPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return opensslError(ErrorKind::Internal, "encoding a private key as PEM");
  }
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

BioPtr readOnlyBio(std::string_view text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(std::min<std::size_t>(text.size(), INT32_MAX))));
}

// Every certificate of a PEM text. InvalidInput when there is none or one is malformed.
Result<std::vector<X509Ptr>> parseCertificates(std::string_view pem, const char* what) {
  BioPtr bio = readOnlyBio(pem);
  if (!bio) return opensslError(ErrorKind::Internal, "reading PEM");
  std::vector<X509Ptr> certs;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    certs.emplace_back(cert);
  }
  const unsigned long last = ERR_peek_last_error();
  const bool cleanEnd =
      last == 0 || (ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE);
  if (!cleanEnd || certs.empty()) {
    return opensslError(ErrorKind::InvalidInput, std::string(what) + ": no valid PEM certificate");
  }
  ERR_clear_error();
  return certs;
}

Result<PkeyPtr> parseKey(std::string_view pem) {
  BioPtr bio = readOnlyBio(pem);
  EVP_PKEY* key = bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr;
  if (key == nullptr) return opensslError(ErrorKind::InvalidInput, "not a PEM private key");
  ERR_clear_error();
  return PkeyPtr(key);
}

std::string nameToString(const X509_NAME* name) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253) < 0) return "";
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

std::string toHex(const unsigned char* data, std::size_t size) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < size; ++i) {
    out += kHex[data[i] >> 4];
    out += kHex[data[i] & 0x0f];
  }
  return out;
}

std::string fingerprint(X509* cert) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int size = 0;
  if (X509_digest(cert, EVP_sha256(), md.data(), &size) != 1) return "";
  return toHex(md.data(), size);
}

CertificateInfo describe(X509* cert) {
  CertificateInfo info;
  info.subject = nameToString(X509_get_subject_name(cert));
  info.issuer = nameToString(X509_get_issuer_name(cert));
  const ASN1_INTEGER* serial = X509_get0_serialNumber(cert);
  info.serialHex = toHex(ASN1_STRING_get0_data(serial), static_cast<std::size_t>(ASN1_STRING_length(serial)));
  info.sha256Fingerprint = fingerprint(cert);
  info.notBefore = fromAsn1(X509_get0_notBefore(cert));
  info.notAfter = fromAsn1(X509_get0_notAfter(cert));
  info.isCa = X509_check_ca(cert) > 0;
  GeneralNamesPtr names(
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr)));
  if (names) {
    for (int i = 0; i < sk_GENERAL_NAME_num(names.get()); ++i) {
      const GENERAL_NAME* name = sk_GENERAL_NAME_value(names.get(), i);
      if (name->type == GEN_DNS) {
        const ASN1_IA5STRING* dns = name->d.dNSName;
        info.dnsNames.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(dns)),
                                   static_cast<std::size_t>(ASN1_STRING_length(dns)));
      } else if (name->type == GEN_IPADD) {
        const ASN1_OCTET_STRING* ip = name->d.iPAddress;
        const int length = ASN1_STRING_length(ip);
        char text[INET6_ADDRSTRLEN] = {};
        const int family = length == 4 ? AF_INET : AF_INET6;
        if ((length == 4 || length == 16) &&
            inet_ntop(family, ASN1_STRING_get0_data(ip), text, sizeof text) != nullptr) {
          info.ipAddresses.emplace_back(text);
        }
      }
    }
  }
  ERR_clear_error();
  return info;
}

}  // namespace

Result<KeyedCertificate> createCa(const CaRequest& request, TimePoint now) {
  if (request.commonName.empty()) return makeError(ErrorKind::InvalidInput, "the CA needs a common name");
  if (request.validity <= std::chrono::seconds{0}) {
    return makeError(ErrorKind::InvalidInput, "the CA validity must be positive");
  }
  auto key = generateKey(request.keyType);
  if (!key) return std::move(key).error();
  auto cert = newCertificate(key->get(), request.commonName, now - kBackdate, now + request.validity);
  if (!cert) return std::move(cert).error();
  X509* x = cert->get();
  if (X509_set_issuer_name(x, X509_get_subject_name(x)) != 1) {
    return opensslError(ErrorKind::Internal, "setting the CA issuer");
  }
  for (const auto& [nid, value] :
       std::initializer_list<std::pair<int, const char*>>{{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                                                          {NID_key_usage, "critical,keyCertSign,cRLSign"},
                                                          {NID_subject_key_identifier, "hash"},
                                                          {NID_authority_key_identifier, "keyid:always"}}) {
    if (core::Status s = addExtension(x, x, nid, value); !s) return std::move(s).error();
  }
  if (X509_sign(x, key->get(), EVP_sha256()) == 0) {
    return opensslError(ErrorKind::Internal, "signing the CA certificate");
  }
  auto certPem = certToPem(x);
  if (!certPem) return std::move(certPem).error();
  auto keyPem = keyToPem(key->get());
  if (!keyPem) return std::move(keyPem).error();
  return KeyedCertificate{std::move(*certPem), std::move(*keyPem)};
}

Result<KeyedCertificate> issueServing(const ServingRequest& request, const KeyedCertificate& ca,
                                      TimePoint now) {
  if (request.dnsNames.empty() && request.ipAddresses.empty()) {
    return makeError(ErrorKind::InvalidInput, "a serving certificate needs at least one DNS name or IP");
  }
  if (request.validity <= std::chrono::seconds{0}) {
    return makeError(ErrorKind::InvalidInput, "the certificate validity must be positive");
  }
  std::string san;
  for (const std::string& dns : request.dnsNames) {
    if (!isValidDnsName(dns))
      return makeError(ErrorKind::InvalidInput, "not a valid DNS name: \"" + dns + "\"");
    san += (san.empty() ? "DNS:" : ",DNS:") + dns;
  }
  for (const std::string& ip : request.ipAddresses) {
    if (!isValidIp(ip)) return makeError(ErrorKind::InvalidInput, "not a valid IP address: \"" + ip + "\"");
    san += (san.empty() ? "IP:" : ",IP:") + ip;
  }
  auto caCerts = parseCertificates(ca.certPem, "CA certificate");
  if (!caCerts) return std::move(caCerts).error();
  X509* caCert = caCerts->front().get();
  auto caKey = parseKey(ca.keyPem);
  if (!caKey) return std::move(caKey).error().withContext("reading the CA key");
  if (X509_check_private_key(caCert, caKey->get()) != 1 || X509_check_ca(caCert) <= 0) {
    return opensslError(ErrorKind::InvalidInput, "the CA certificate and key do not form a CA key pair");
  }

  const std::string commonName = !request.commonName.empty() ? request.commonName
                                 : !request.dnsNames.empty() ? request.dnsNames.front()
                                                             : request.ipAddresses.front();
  const TimePoint caNotAfter = fromAsn1(X509_get0_notAfter(caCert));
  const TimePoint notAfter = std::min(now + request.validity, caNotAfter);
  auto key = generateKey(request.keyType);
  if (!key) return std::move(key).error();
  auto cert = newCertificate(key->get(), commonName, now - kBackdate, notAfter);
  if (!cert) return std::move(cert).error();
  X509* x = cert->get();
  if (X509_set_issuer_name(x, X509_get_subject_name(caCert)) != 1) {
    return opensslError(ErrorKind::Internal, "setting the issuer");
  }
  const std::string keyUsage =
      isRsa(request.keyType) ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature";
  for (const auto& [nid, value] :
       std::initializer_list<std::pair<int, std::string>>{{NID_basic_constraints, "critical,CA:FALSE"},
                                                          {NID_key_usage, keyUsage},
                                                          {NID_ext_key_usage, "serverAuth"},
                                                          {NID_subject_key_identifier, "hash"},
                                                          {NID_authority_key_identifier, "keyid:always"},
                                                          {NID_subject_alt_name, san}}) {
    if (core::Status s = addExtension(x, caCert, nid, value); !s) return std::move(s).error();
  }
  if (X509_sign(x, caKey->get(), EVP_sha256()) == 0) {
    return opensslError(ErrorKind::Internal, "signing the serving certificate");
  }
  auto certPem = certToPem(x);
  if (!certPem) return std::move(certPem).error();
  auto keyPem = keyToPem(key->get());
  if (!keyPem) return std::move(keyPem).error();
  return KeyedCertificate{std::move(*certPem), std::move(*keyPem)};
}

Result<std::vector<CertificateInfo>> inspect(std::string_view pem) {
  auto certs = parseCertificates(pem, "certificate");
  if (!certs) return std::move(certs).error();
  std::vector<CertificateInfo> out;
  for (const X509Ptr& cert : *certs) out.push_back(describe(cert.get()));
  return out;
}

core::Status checkKeyMatches(std::string_view certPem, std::string_view keyPem) {
  auto certs = parseCertificates(certPem, "certificate");
  if (!certs) return std::move(certs).error();
  auto key = parseKey(keyPem);
  if (!key) return std::move(key).error();
  if (X509_check_private_key(certs->front().get(), key->get()) != 1) {
    return opensslError(ErrorKind::InvalidInput, "the private key does not belong to the certificate");
  }
  return core::okStatus();
}

core::Status checkIssuedBy(std::string_view leafPem, std::string_view caPem) {
  auto leaf = parseCertificates(leafPem, "certificate");
  if (!leaf) return std::move(leaf).error();
  auto ca = parseCertificates(caPem, "CA certificate");
  if (!ca) return std::move(ca).error();
  EVP_PKEY* caKey = X509_get0_pubkey(ca->front().get());
  if (caKey == nullptr || X509_check_issued(ca->front().get(), leaf->front().get()) != X509_V_OK ||
      X509_verify(leaf->front().get(), caKey) != 1) {
    return opensslError(ErrorKind::InvalidInput, "the certificate is not signed by this CA");
  }
  return core::okStatus();
}

Result<std::string> mergeBundle(std::string_view bundlePem, std::string_view addPem, TimePoint now) {
  std::vector<X509Ptr> kept;
  if (bundlePem.find("-----BEGIN") != std::string_view::npos) {
    auto existing = parseCertificates(bundlePem, "caBundle");
    if (!existing) return std::move(existing).error();
    kept = std::move(*existing);
  }
  auto added = parseCertificates(addPem, "new CA certificate");
  if (!added) return std::move(added).error();

  std::set<std::string> seen;
  std::string out;
  auto append = [&](X509* cert) -> core::Status {
    if (fromAsn1(X509_get0_notAfter(cert)) <= now) return core::okStatus();
    if (!seen.insert(fingerprint(cert)).second) return core::okStatus();
    auto pem = certToPem(cert);
    if (!pem) return std::move(pem).error();
    out += *pem;
    return core::okStatus();
  };
  for (X509Ptr& cert : kept) {
    if (core::Status s = append(cert.get()); !s) return std::move(s).error();
  }
  for (X509Ptr& cert : *added) {
    if (core::Status s = append(cert.get()); !s) return std::move(s).error();
  }
  return out;
}

}  // namespace restarter::certs
