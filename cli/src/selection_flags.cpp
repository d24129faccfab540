#include "restarter/cli/selection_flags.hpp"

#include <cxxopts.hpp>

namespace restarter::cli {

void addSelectionFlags(cxxopts::Options& options, bool autoReloadAll) {
  options.add_options()("reloader-annotations",
                        "also manage workloads opted in with stakater/Reloader's annotations, with its "
                        "selection rules (docs/migrating.md); every workload of the three "
                        "kinds is then listed or sent to the webhook",
                        cxxopts::value<bool>()->default_value("false")->implicit_value("true"));
  if (autoReloadAll) {
    options.add_options()("auto-reload-all",
                          "with --reloader-annotations: as Reloader's flag, every workload whose "
                          "reloader.stakater.com/auto is not set to false",
                          cxxopts::value<bool>()->default_value("false")->implicit_value("true"));
  }
}

std::optional<std::string> readSelectionFlags(const cxxopts::ParseResult& flags, core::SelectionOptions& out) {
  out.reloaderAnnotations = flags["reloader-annotations"].as<bool>();
  if (flags.count("auto-reload-all") > 0) out.autoReloadAll = flags["auto-reload-all"].as<bool>();
  if (out.autoReloadAll && !out.reloaderAnnotations) {
    return std::string("--auto-reload-all needs --reloader-annotations");
  }
  return std::nullopt;
}

}  // namespace restarter::cli
