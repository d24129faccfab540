#pragma once
// Private: RAII owners for the OpenSSL objects lib/certs uses, and error-queue draining.

#include <memory>
#include <string>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "restarter/core/result.hpp"

namespace restarter::certs::detail {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const noexcept { Free(p); }
};

using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using BignumPtr = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;
using ExtensionPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION, X509_EXTENSION_free>>;

inline void freeGeneralNames(GENERAL_NAMES* names) { GENERAL_NAMES_free(names); }
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES, freeGeneralNames>>;

// An error of `kind` whose message is `what` plus everything on OpenSSL's (thread-local) error
// queue, which is left empty.
inline core::Error opensslError(core::ErrorKind kind, const std::string& what) {
  std::string message = what;
  bool first = true;
  while (unsigned long code = ERR_get_error()) {
    char buffer[256];
    ERR_error_string_n(code, buffer, sizeof buffer);
    message += first ? ": " : "; ";
    message += buffer;
    first = false;
  }
  return core::makeError(kind, message);
}

}  // namespace restarter::certs::detail
