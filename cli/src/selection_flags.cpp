#include "restarter/cli/selection_flags.hpp"

#include "restarter/cli/flag_table.hpp"

namespace restarter::cli {

void addReloaderAnnotationsFlag(FlagTable& table, bool& target) {
  table.toggle({"reloader-annotations",
                "also manage workloads opted in with stakater/Reloader's annotations, with its "
                "selection rules (docs/migrating.md); every workload of the three "
                "kinds is then listed or sent to the webhook",
                ""},
               target);
}

void addArgoRolloutsFlag(FlagTable& table, bool& target) {
  table.toggle({"argo-rollouts",
                "also manage Argo Rollouts' Rollouts (argoproj.io/v1alpha1) like Deployments, as Reloader's "
                "--is-Argo-Rollouts; watched only while their CRD is installed (docs/behaviour.md)",
                ""},
               target);
}

void addSelectionFlags(FlagTable& table, core::SelectionOptions& out) {
  addReloaderAnnotationsFlag(table, out.reloaderAnnotations);
  table
      .toggle({"auto-reload-all",
               "with --reloader-annotations: as Reloader's flag, every workload whose "
               "reloader.stakater.com/auto is not set to false",
               ""},
              out.autoReloadAll)
      .rule([&out](const FlagTable&) {
        if (out.autoReloadAll && !out.reloaderAnnotations) {
          return flagProblem("--auto-reload-all needs --reloader-annotations");
        }
        return core::okStatus();
      });
}

}  // namespace restarter::cli
