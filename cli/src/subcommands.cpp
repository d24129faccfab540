#include "restarter/cli/subcommand.hpp"

#include "restarter/cli/explain_restart.hpp"
#include "restarter/cli/gen_certs.hpp"
#include "restarter/cli/install_mwc.hpp"
#include "restarter/cli/roll.hpp"
#include "restarter/cli/rotate_digest_key.hpp"
#include "restarter/cli/serve_controller.hpp"
#include "restarter/cli/serve_webhook.hpp"
#include "restarter/cli/status.hpp"
#include "restarter/cli/version.hpp"

namespace restarter::cli {

const std::vector<Subcommand>& subcommands() {
  // A subcommand joins this list once it does everything its help says.
  static const std::vector<Subcommand> all = {
      genCertsCommand(),   explainRestartCommand(),  statusCommand(),
      rollCommand(),       serveControllerCommand(), serveWebhookCommand(),
      installMwcCommand(), rotateDigestKeyCommand(), versionCommand(),
  };
  return all;
}

}  // namespace restarter::cli
