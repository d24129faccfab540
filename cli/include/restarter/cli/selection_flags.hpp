#pragma once
// --reloader-annotations and --auto-reload-all (core/reloader.hpp): which workloads restarter
// manages and which of their references it tracks. Declared once, so serve-controller,
// serve-webhook, install-mwc, explain-restart and status read them alike (docs/architecture.md,
// "Flags"). Both are bools like --leader-elect: given alone they mean true, and =false is accepted.

#include "restarter/core/reloader.hpp"

namespace restarter::cli {

class FlagTable;

// Adds --reloader-annotations and --auto-reload-all bound to `out`, and the rule that
// --auto-reload-all needs --reloader-annotations (alone it would select nothing and say nothing).
void addSelectionFlags(FlagTable& table, core::SelectionOptions& out);

// Adds --reloader-annotations alone, bound to `target`: install-mwc builds the same configuration
// whatever --auto-reload-all says, so it does not take that one.
void addReloaderAnnotationsFlag(FlagTable& table, bool& target);

// Adds --argo-rollouts bound to `target`: also manage Argo Rollouts' Rollouts (serve-controller
// watches them while their CRD is installed; serve-webhook and install-mwc add their webhook rule).
void addArgoRolloutsFlag(FlagTable& table, bool& target);

}  // namespace restarter::cli
