#pragma once
// Naming of pod-template annotation keys: `configmap.restarter.stackable.tech/<name>` and
// `secret.restarter.stackable.tech/<name>` (docs/architecture.md, "Annotation contract").
//
// The part after the slash must be a Kubernetes "qualified name": 1 to 63 characters of
// [A-Za-z0-9._-], starting and ending alphanumeric. Object names may be up to 253 characters, so
// the contract breaks for long names (commons-operator then writes an invalid key and its apply
// fails forever). Our extension, used by every code path:
//   - a name that is a valid qualified name without '_' is used as is (commons-operator
//     compatible: every real ConfigMap/Secret name of up to 63 characters qualifies);
//   - any other name maps to `<prefix>_<hash>`: <hash> is the first 20 hex digits (80 bits) of the
//     SHA-256 of the full name, <prefix> the name's first characters with anything outside
//     [A-Za-z0-9.-] replaced by '-', cut so the whole is at most 63 characters and trimmed to start
//     and end alphanumeric ("h" when nothing alphanumeric is left). Literal names never contain
//     '_' and mapped ones always do, so a mapped key never equals a literal one; two different
//     names collide only if their 80-bit hashes do.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "restarter/core/references.hpp"

namespace restarter::core {

inline constexpr std::size_t kMaxQualifiedNameLength = 63;
inline constexpr std::size_t kMappedKeyHashDigits = 20;

// True if `name` is a valid qualified name (the part of an annotation key after the slash).
bool isValidQualifiedName(std::string_view name) noexcept;

// The annotation key name part for an object name (the name itself, or its mapped form).
std::string annotationNameFor(std::string_view objectName);

// The full template annotation key for a reference kind and object name.
std::string templateAnnotationKey(RefKind kind, std::string_view objectName);

struct TemplateKey {
  RefKind kind = RefKind::ConfigMap;
  std::string namePart;  // the object name, or its mapped form (then `mapped` is true)
  bool mapped = false;
};

// Recognizes a restarter-owned template annotation key; nullopt for every other key.
std::optional<TemplateKey> parseTemplateAnnotationKey(std::string_view key);

}  // namespace restarter::core
