// Fuzz target: PEM certificate, key and bundle loading (lib/certs and the webhook's
// CertificateStore), which read a Secret other replicas wrote, --cert-dir files and caBundles.
// The input is split at the first NUL byte into `a` (certificates) and `b` (a key or a second
// PEM text). Checks beyond "no crash": inspect() gives at least one certificate or an error; a
// merged bundle parses again and holds each certificate once; an installed serving certificate
// has a fingerprint; an error has a message.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "check.hpp"
#include "restarter/certs/certs.hpp"
#include "restarter/core/base64.hpp"
#include "restarter/webhook/certificates.hpp"
#include "restarter/webhook/server.hpp"

namespace {

constexpr const char* kTarget = "pem_fuzz";

[[noreturn]] void fail(const char* what) { restarter::fuzz::fail(kTarget, what); }

template <typename T>
void expectMessage(const restarter::core::Result<T>& result) {
  restarter::fuzz::expectMessage(kTarget, result);
}

// 2027-01-15: a fixed "now", so runs are reproducible (certificates are judged by it).
const restarter::core::TimePoint kNow{std::chrono::seconds(1'800'000'000)};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view a = input.substr(0, nul);
  const std::string_view b = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
  using namespace restarter;

  const auto infos = certs::inspect(a);
  expectMessage(infos);
  if (infos && infos->empty()) fail("inspect() succeeded without a certificate");
  expectMessage(certs::checkKeyMatches(a, b));
  expectMessage(certs::checkIssuedBy(a, b));
  expectMessage(certs::checkIssuedBy(b, a));

  const auto bundle = certs::mergeBundle(a, b, kNow);
  expectMessage(bundle);
  if (bundle && !bundle->empty()) {
    const auto merged = certs::inspect(*bundle);
    if (!merged) fail("a merged bundle does not parse");
    std::set<std::string> fingerprints;
    for (const auto& info : *merged) {
      if (!fingerprints.insert(info.sha256Fingerprint).second) fail("a merged bundle repeats a certificate");
    }
  }

  webhook::CertificateStore store;
  const auto installed = store.update(a, b);
  expectMessage(installed);
  if (installed && store.fingerprint().empty()) fail("an installed certificate has no fingerprint");
  if (!installed && store.ready()) fail("a refused certificate was installed");

  (void)core::base64Decode(a);
  return 0;
}
