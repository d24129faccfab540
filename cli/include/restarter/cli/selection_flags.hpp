#pragma once
// --reloader-annotations and --auto-reload-all (core/reloader.hpp): which workloads restarter
// manages and which of their references it tracks. Declared once, so serve-controller,
// serve-webhook, install-mwc, explain-restart and status read them alike (docs/architecture.md,
// "Flags"). Both are bools like --leader-elect: given alone they mean true, and =false is accepted.

#include <optional>
#include <string>

#include "restarter/core/reloader.hpp"

namespace cxxopts {
class Options;
class ParseResult;
}  // namespace cxxopts

namespace restarter::cli {

// Adds --reloader-annotations; with `autoReloadAll` also --auto-reload-all (install-mwc builds
// the same configuration whatever that flag says, so it does not take it).
void addSelectionFlags(cxxopts::Options& options, bool autoReloadAll = true);

// Reads the flags into `out`; a usage problem when --auto-reload-all is given without
// --reloader-annotations (it would select nothing and say nothing).
std::optional<std::string> readSelectionFlags(const cxxopts::ParseResult& flags, core::SelectionOptions& out);

}  // namespace restarter::cli
