#pragma once
// Which workloads restarter manages and which of their references it tracks: the flags
// --reloader-annotations and --auto-reload-all (reloader.hpp decides with them). Its own header so
// that annotations.hpp (DesiredOptions) and reloader.hpp can both hold it.

namespace restarter::core {

// What the serve commands, explain-restart and status are told. autoReloadAll counts only with
// reloaderAnnotations.
struct SelectionOptions {
  bool reloaderAnnotations = false;
  bool autoReloadAll = false;
};

}  // namespace restarter::core
