#pragma once
// The key of keyed content digests (core/content.hpp, DigestKey) in its Secret
// (docs/architecture.md, "Keyed digests"): an Opaque Secret whose data key kDigestKeyDataKey holds
// kDigestKeySize random bytes. serve-controller makes it when it is missing (ensureDigestKey);
// serve-webhook and explain-restart only read it (readDigestKey). DigestKeyHolder is how a server
// shares the key it read between threads.

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "restarter/core/content.hpp"
#include "restarter/core/result.hpp"
#include "restarter/kube/client.hpp"
#include "restarter/kube/install_defaults.hpp"

namespace restarter::kube {

// serve-controller, serve-webhook and explain-restart --digest-key-secret's default.
inline constexpr std::string_view kDefaultDigestKeySecret = "restarter-digest-key";

// Where the key lives: --digest-key-namespace and --digest-key-secret of the commands that make
// or read it, defaulting to where manifests/ install it.
struct DigestKeySecret {
  std::string namespace_ = kInstallNamespace;
  std::string name = std::string(kDefaultDigestKeySecret);
};
inline constexpr std::string_view kDigestKeyDataKey = "key";
// During a rotation: the key `key` replaced, until no record uses it (docs/architecture.md, "Keyed
// digests"; core::DigestKey::previous).
inline constexpr std::string_view kPreviousDigestKeyDataKey = "previous";

// GETs the Secret and reads its key, with the previous one when data.previous is there: NotFound
// when the Secret does not exist, InvalidInput when it holds no key of exactly kDigestKeySize bytes
// or a previous one of another size (the message never holds the bytes), the client's error
// otherwise.
core::Result<core::DigestKey> readDigestKey(Client& client, std::string_view namespace_, std::string_view name);

// Starts a rotation (restarter rotate-digest-key): a new key from RAND_bytes in data.key and the
// current one in data.previous, by a PUT carrying the resourceVersion read (Conflict when the
// Secret changed meanwhile). Conflict, and nothing written, when a rotation is under way already;
// the readDigestKey errors when the Secret holds no valid key. Returns the new key with its previous.
core::Result<core::DigestKey> rotateDigestKey(Client& client, std::string_view namespace_,
                                              std::string_view name);

// Ends a rotation (rotate-digest-key --finish, once no record uses the previous key): removes
// data.previous by a PUT carrying the resourceVersion read. Conflict when the Secret's previous key
// is not `previousId` (someone else rotated or finished meanwhile). Returns the key alone.
core::Result<core::DigestKey> finishDigestKeyRotation(Client& client, std::string_view namespace_,
                                                      std::string_view name, std::string_view previousId);

// readDigestKey, and when the Secret is missing creates it with kDigestKeySize bytes from
// OpenSSL's RAND_bytes; a create answered 409 AlreadyExists (another replica was first) reads the
// winner's key, so every replica ends up with the same one. A Secret that exists but holds no
// valid key is an error (InvalidInput), never overwritten. A create answered 404 (the namespace
// does not exist) is NotFound "namespace <ns> does not exist".
core::Result<core::DigestKey> ensureDigestKey(Client& client, std::string_view namespace_,
                                              std::string_view name);

// What an error of ensureDigestKey means and what to do about it, in one line for /readyz, the
// log and `restarter status` (docs/architecture.md, "Keyed digests"): ensureDigestKey's NotFound
// names the missing namespace ("create namespace X or pass --digest-key-namespace"), another
// NotFound the missing Secret, InvalidInput the invalid key,
// Forbidden/Unauthorized the Role to grant; anything else is passed on as it is.
std::string digestKeyAdvice(const core::Error& error, std::string_view namespace_, std::string_view name);

// The key a server has read, shared between threads: one mutex guards it (set by the thread that
// reads the Secret, read by every lookup). Empty until set.
class DigestKeyHolder {
 public:
  std::shared_ptr<const core::DigestKey> get() const;
  void set(core::DigestKey key);

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const core::DigestKey> key_;
};

}  // namespace restarter::kube
