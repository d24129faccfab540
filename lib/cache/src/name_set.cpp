#include "restarter/cache/name_set.hpp"

#include <array>
#include <random>
#include <string>
#include <utility>

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <boost/unordered/unordered_flat_set.hpp>

namespace restarter::cache {
namespace {

using SaltBytes = std::array<unsigned char, 16>;

// Drawn once per process, from OpenSSL's generator or, should it fail (never expected), the
// system's random device.
const SaltBytes& salt() {
  static const SaltBytes bytes = [] {
    SaltBytes drawn{};
    if (RAND_bytes(drawn.data(), static_cast<int>(drawn.size())) != 1) {
      std::random_device device;
      for (unsigned char& byte : drawn) byte = static_cast<unsigned char>(device());
    }
    return drawn;
  }();
  return bytes;
}

}  // namespace

struct NameSet::Table {
  // The element is already a digest: no second hash of it.
  struct DigestHash {
    using is_avalanching = void;  // tells Boost the low bits are as good as the high ones
    std::size_t operator()(std::uint64_t digest) const noexcept { return static_cast<std::size_t>(digest); }
  };
  boost::unordered_flat_set<std::uint64_t, DigestHash> digests;
};

NameSet::NameSet() : table_(std::make_unique<Table>()) {}
NameSet::~NameSet() = default;
NameSet::NameSet(NameSet&& other) noexcept : table_(std::exchange(other.table_, std::make_unique<Table>())) {}
NameSet& NameSet::operator=(NameSet&& other) noexcept {
  table_.swap(other.table_);
  return *this;
}

std::uint64_t NameSet::digestOf(std::string_view key) {
  std::string input(reinterpret_cast<const char*>(salt().data()), salt().size());
  input.append(key);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  std::uint64_t out = 0;
  if (EVP_Digest(input.data(), input.size(), digest.data(), &length, EVP_sha256(), nullptr) == 1 &&
      length >= 8) {
    for (std::size_t i = 0; i < 8; ++i) out = (out << 8) | digest[i];
  }
  return out;
}

bool NameSet::insert(std::string_view key) { return table_->digests.insert(digestOf(key)).second; }
bool NameSet::erase(std::string_view key) { return table_->digests.erase(digestOf(key)) > 0; }
bool NameSet::contains(std::string_view key) const { return table_->digests.contains(digestOf(key)); }
std::size_t NameSet::size() const noexcept { return table_->digests.size(); }

std::size_t NameSet::tableBytes() const noexcept {
  // Boost's open-addressing table: one slot of the element's size and one byte of metadata per
  // bucket (boost/unordered/detail/foa), nothing per element beyond that.
  return table_->digests.bucket_count() * (sizeof(std::uint64_t) + 1);
}

void NameSet::clear() { table_->digests.clear(); }

}  // namespace restarter::cache
