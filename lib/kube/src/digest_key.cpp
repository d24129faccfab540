#include "restarter/kube/digest_key.hpp"

#include <openssl/rand.h>
#include <nlohmann/json.hpp>

#include "restarter/core/base64.hpp"
#include "restarter/kube/resource.hpp"

namespace restarter::kube {

namespace {

// The key in data[field] of `secret`: NotFound when the field is absent, InvalidInput when it is
// not base64 of exactly kDigestKeySize bytes (the message names the field and the size only).
core::Result<core::DigestKey> keyIn(const nlohmann::json& secret, std::string_view field,
                                    const std::string& where) {
  const nlohmann::json* data = nullptr;
  if (secret.is_object()) {
    const auto it = secret.find("data");
    if (it != secret.end() && it->is_object()) data = &*it;
  }
  const std::string name(field);
  if (data == nullptr || !data->contains(name)) {
    return core::makeError(core::ErrorKind::NotFound, where + ": no data." + name);
  }
  if (!(*data)[name].is_string()) {
    return core::makeError(core::ErrorKind::InvalidInput, where + ": data." + name + " is not a string");
  }
  const auto bytes = core::base64Decode((*data)[name].get_ref<const std::string&>());
  if (!bytes)
    return core::makeError(core::ErrorKind::InvalidInput, where + ": data." + name + " is not base64");
  auto key = core::DigestKey::fromBytes(*bytes);
  if (!key) {
    return core::makeError(core::ErrorKind::InvalidInput, where + ": data." + name + " must hold " +
                                                              std::to_string(core::kDigestKeySize) +
                                                              " bytes, holds " + std::to_string(bytes->size()));
  }
  return std::move(*key);
}

// The key of `secret` with its previous one, if any.
core::Result<core::DigestKey> keysIn(const nlohmann::json& secret, const std::string& where) {
  auto key = keyIn(secret, kDigestKeyDataKey, where);
  if (!key) {
    if (key.error().kind == core::ErrorKind::NotFound) {
      return core::makeError(core::ErrorKind::InvalidInput, key.error().message);  // a Secret without a key
    }
    return key;
  }
  auto previous = keyIn(secret, kPreviousDigestKeyDataKey, where);
  if (!previous) {
    if (previous.error().kind == core::ErrorKind::NotFound) return key;
    return std::move(previous).error();
  }
  return key->withPrevious(*previous);
}

std::string secretName(std::string_view namespace_, std::string_view name) {
  return "secret " + std::string(namespace_) + "/" + std::string(name);
}

core::Result<std::string> randomKeyBytes() {
  std::string bytes(core::kDigestKeySize, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(bytes.data()), static_cast<int>(bytes.size())) != 1) {
    return core::makeError(core::ErrorKind::Internal, "no random bytes for the digest key");
  }
  return bytes;
}

}  // namespace

core::Result<core::DigestKey> readDigestKey(Client& client, std::string_view namespace_,
                                            std::string_view name) {
  auto secret = client.get(resources::secrets(), namespace_, name);
  if (!secret) return std::move(secret).error();
  return keysIn(*secret, secretName(namespace_, name));
}

core::Result<core::DigestKey> rotateDigestKey(Client& client, std::string_view namespace_,
                                              std::string_view name) {
  const std::string where = secretName(namespace_, name);
  auto secret = client.get(resources::secrets(), namespace_, name);
  if (!secret) return std::move(secret).error();
  auto current = keysIn(*secret, where);
  if (!current) return current;
  if (current->previous() != nullptr) {
    return core::makeError(core::ErrorKind::Conflict, where + ": a rotation is under way (previous key " +
                                                          current->previous()->id() +
                                                          "): finish it first (rotate-digest-key --finish)");
  }
  auto bytes = randomKeyBytes();
  if (!bytes) return std::move(bytes).error();
  auto fresh = core::DigestKey::fromBytes(*bytes);
  if (!fresh) return core::makeError(core::ErrorKind::Internal, "the digest key could not be made");
  nlohmann::json updated = std::move(*secret);
  updated["data"][std::string(kPreviousDigestKeyDataKey)] = core::base64Encode(current->bytes());
  updated["data"][std::string(kDigestKeyDataKey)] = core::base64Encode(*bytes);
  // metadata.resourceVersion is kept: a concurrent change of the Secret makes this a Conflict.
  auto replaced = client.replace(resources::secrets(), namespace_, name, updated);
  if (!replaced) return std::move(replaced).error().withContext("rotating the key of " + where);
  return fresh->withPrevious(*current);
}

core::Result<core::DigestKey> finishDigestKeyRotation(Client& client, std::string_view namespace_,
                                                      std::string_view name, std::string_view previousId) {
  const std::string where = secretName(namespace_, name);
  auto secret = client.get(resources::secrets(), namespace_, name);
  if (!secret) return std::move(secret).error();
  auto current = keysIn(*secret, where);
  if (!current) return current;
  if (current->previous() == nullptr || current->previous()->id() != previousId) {
    return core::makeError(
        core::ErrorKind::Conflict,
        where + ": its previous key is not " + std::string(previousId) + " any more: someone else changed it");
  }
  nlohmann::json updated = std::move(*secret);
  updated["data"].erase(std::string(kPreviousDigestKeyDataKey));
  auto replaced = client.replace(resources::secrets(), namespace_, name, updated);
  if (!replaced) return std::move(replaced).error().withContext("dropping the previous key of " + where);
  auto key = core::DigestKey::fromBytes(current->bytes());
  if (!key) return core::makeError(core::ErrorKind::Internal, "the digest key could not be read back");
  return std::move(*key);
}

core::Result<core::DigestKey> ensureDigestKey(Client& client, std::string_view namespace_,
                                              std::string_view name) {
  auto existing = readDigestKey(client, namespace_, name);
  if (existing || existing.error().kind != core::ErrorKind::NotFound) return existing;
  auto random = randomKeyBytes();
  if (!random) return std::move(random).error();
  const std::string& bytes = *random;
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
    case core::ErrorKind::InvalidInput: {
      // readDigestKey's message starts with the Secret's name, which this line already says.
      std::string what = error.message;
      if (const std::string prefix = "secret " + secret + ": "; what.rfind(prefix, 0) == 0)
        what.erase(0, prefix.size());
      return "secret " + secret + " holds no valid digest key (" + what +
             "): put the 32-byte key back, or delete the Secret to have a new one made";
    }
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
