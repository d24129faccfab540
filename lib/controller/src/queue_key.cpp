#include "restarter/controller/queue_key.hpp"

#include <initializer_list>

#include "restarter/cache/store.hpp"
#include "restarter/controller/reconcile.hpp"

namespace restarter::controller {

std::string ObjectName::key() const { return cache::objectKey(namespace_, name); }

std::string QueueKey::toString() const {
  return (reconciler == nullptr ? std::string("?") : reconciler->name()) + "/" + object.key();
}

}  // namespace restarter::controller

std::size_t std::hash<restarter::controller::QueueKey>::operator()(
    const restarter::controller::QueueKey& key) const noexcept {
  // boost::hash_combine's mixing, over the three fields (the reconciler by identity).
  std::size_t seed = std::hash<const void*>{}(key.reconciler);
  for (const std::string* part : {&key.object.namespace_, &key.object.name}) {
    seed ^= std::hash<std::string>{}(*part) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  }
  return seed;
}
