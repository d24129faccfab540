#include "restarter/kube/digest_key.hpp"

#include <openssl/rand.h>
#include <nlohmann/json.hpp>

#include "restarter/core/base64.hpp"
#include "restarter/kube/resource.hpp"

namespace restarter::kube {

core::Result<core::DigestKey> readDigestKey(Client& client, std::string_view namespace_,
                                            std::string_view name) {
  auto secret = client.get(resources::secrets(), namespace_, name);
  if (!secret) return std::move(secret).error();
  const std::string where = "secret " + std::string(namespace_) + "/" + std::string(name);
  const nlohmann::json* data = nullptr;
  if (secret->is_object()) {
    const auto it = secret->find("data");
    if (it != secret->end() && it->is_object()) data = &*it;
  }
  if (data == nullptr || !data->contains(kDigestKeyDataKey) ||
      !(*data)[std::string(kDigestKeyDataKey)].is_string()) {
    return core::makeError(core::ErrorKind::InvalidInput,
                           where + ": no data." + std::string(kDigestKeyDataKey));
  }
  const auto bytes = core::base64Decode((*data)[std::string(kDigestKeyDataKey)].get_ref<const std::string&>());
  if (!bytes) {
    return core::makeError(core::ErrorKind::InvalidInput,
                           where + ": data." + std::string(kDigestKeyDataKey) + " is not base64");
  }
  auto key = core::DigestKey::fromBytes(*bytes);
  if (!key) {
    return core::makeError(core::ErrorKind::InvalidInput, where + ": data." + std::string(kDigestKeyDataKey) +
                                                              " must hold " +
                                                              std::to_string(core::kDigestKeySize) +
                                                              " bytes, holds " + std::to_string(bytes->size()));
  }
  return std::move(*key);
}

core::Result<core::DigestKey> ensureDigestKey(Client& client, std::string_view namespace_,
                                              std::string_view name) {
  auto existing = readDigestKey(client, namespace_, name);
  if (existing || existing.error().kind != core::ErrorKind::NotFound) return existing;
  std::string bytes(core::kDigestKeySize, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(bytes.size())) != 1) {
    return core::makeError(core::ErrorKind::Internal, "no random bytes for the digest key");
  }
  const nlohmann::json secret = {
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata",
       {{"name", name},
        {"namespace", namespace_},
        {"labels", {{"app.kubernetes.io/name", "restarter"}, {"app.kubernetes.io/component", "digest-key"}}}}},
      {"type", "Opaque"},
      {"data", {{kDigestKeyDataKey, core::base64Encode(bytes)}}}};
  auto created = client.create(resources::secrets(), namespace_, secret);
  if (!created) {
    // Another replica created it first: everyone uses the winner's key.
    if (created.error().kind == core::ErrorKind::AlreadyExists) return readDigestKey(client, namespace_, name);
    // A create answered 404: the Secret's namespace does not exist (digestKeyAdvice).
    if (created.error().kind == core::ErrorKind::NotFound) {
      return core::makeError(core::ErrorKind::NotFound,
                             "namespace " + std::string(namespace_) + " does not exist");
    }
    return std::move(created).error();
  }
  auto key = core::DigestKey::fromBytes(bytes);
  if (!key) return core::makeError(core::ErrorKind::Internal, "the digest key could not be made");
  return std::move(*key);
}

std::string digestKeyAdvice(const core::Error& error, std::string_view namespace_, std::string_view name) {
  const std::string ns(namespace_);
  const std::string secret = ns + "/" + std::string(name);
  switch (error.kind) {
    case core::ErrorKind::NotFound:
      if (error.message == "namespace " + ns + " does not exist") {
        return "the digest key's namespace " + ns + " does not exist: create namespace " + ns +
               " or pass --digest-key-namespace";
      }
      return "secret " + secret +
             " does not exist: serve-controller creates it as it starts (same "
             "--digest-key-namespace and --digest-key-secret)";
    case core::ErrorKind::InvalidInput:
      return "secret " + secret + " holds no valid digest key (" + error.message +
             "): put the 32-byte key back, or delete the Secret to have a new one made";
    case core::ErrorKind::Forbidden:
    case core::ErrorKind::Unauthorized:
      return "not allowed to get or create secret " + secret + " (" + error.message +
             "): grant the restarter-controller-digest-key Role in namespace " + ns + " (manifests/)";
    default: return "cannot get or create the digest key " + secret + ": " + error.describe();
  }
}

std::shared_ptr<const core::DigestKey> DigestKeyHolder::get() const {
  std::lock_guard lock(mutex_);
  return key_;
}

void DigestKeyHolder::set(core::DigestKey key) {
  auto shared = std::make_shared<const core::DigestKey>(std::move(key));
  std::lock_guard lock(mutex_);
  key_ = std::move(shared);
}

}  // namespace restarter::kube
