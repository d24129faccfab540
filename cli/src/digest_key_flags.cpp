#include "restarter/cli/digest_key_flags.hpp"

#include "restarter/cli/flag_table.hpp"

namespace restarter::cli {

void addDigestKeyFlags(FlagTable& table, DigestKeySecret& out, const std::string& role) {
  table
      .text({"digest-key-secret",
             "Secret holding the key of content digests (HMAC-SHA256, so no digest restarter writes helps "
             "guess a Secret's content); " +
                 role,
             "NAME"},
            out.name, true)
      .text({"digest-key-namespace", "namespace of --digest-key-secret", "NS"}, out.namespace_, true);
}

}  // namespace restarter::cli
