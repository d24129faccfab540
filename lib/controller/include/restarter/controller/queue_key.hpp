#pragma once
// What the work queue holds: which reconciler is to look at which object. Typed, so that nothing
// joins a key into a string and splits it again (a name never holds "/", but a key that is never
// parsed needs no such argument).

#include <cstddef>
#include <functional>
#include <string>

namespace restarter::controller {

// A namespaced object by name: what a reconciler is asked to look at.
struct ObjectName {
  std::string namespace_;
  std::string name;

  // "<namespace>/<name>": the object's key in the caches (cache::objectKey) and its name in logs.
  std::string key() const;

  friend bool operator==(const ObjectName&, const ObjectName&) = default;
};

class Reconciler;  // reconcile.hpp

// A work-queue key: which reconciler is to look at which object. The reconciler is the one the
// watch table queued (docs/architecture.md, "Watches and dispatch"), owned by the controller and
// never null; the worker calls it, so no key is ever told apart by a name.
struct QueueKey {
  Reconciler* reconciler = nullptr;
  ObjectName object;

  // "<reconciler name>/<namespace>/<name>", for messages only; never parsed.
  std::string toString() const;

  friend bool operator==(const QueueKey&, const QueueKey&) = default;
};

}  // namespace restarter::controller

template <>
struct std::hash<restarter::controller::QueueKey> {
  std::size_t operator()(const restarter::controller::QueueKey& key) const noexcept;
};
