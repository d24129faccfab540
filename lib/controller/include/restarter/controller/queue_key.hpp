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

// A work-queue key. `kind` names the reconciler: a WorkloadKind::name ("statefulset", ...), the
// OnDelete roller of one ("ondelete-statefulset"), or "pod" (pod expiry).
struct QueueKey {
  std::string kind;
  ObjectName object;

  // "<kind>/<namespace>/<name>", for messages only; never parsed.
  std::string toString() const;

  friend bool operator==(const QueueKey&, const QueueKey&) = default;
};

}  // namespace restarter::controller

template <>
struct std::hash<restarter::controller::QueueKey> {
  std::size_t operator()(const restarter::controller::QueueKey& key) const noexcept;
};
