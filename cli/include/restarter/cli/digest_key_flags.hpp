#pragma once
// --digest-key-secret and --digest-key-namespace: the Secret holding the key of content digests
// (kube/digest_key.hpp; docs/architecture.md, "Keyed digests"). Declared once, so serve-controller
// (which creates the key when it is missing), serve-webhook and explain-restart (which only read
// it) name the same Secret alike (docs/architecture.md, "Flags").

#include <string>

#include "restarter/kube/digest_key.hpp"

namespace restarter::cli {

class FlagTable;
using kube::DigestKeySecret;

// Adds both flags bound to `out` (neither may be empty); `role` ends the help text: who makes or
// reads the key.
void addDigestKeyFlags(FlagTable& table, DigestKeySecret& out, const std::string& role);

}  // namespace restarter::cli
