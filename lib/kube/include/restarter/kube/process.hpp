#pragma once
// The process-runner seam: exec credential plugins are run through it, tests script it.

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "restarter/core/result.hpp"

namespace restarter::kube {

struct ProcessSpec {
  std::string command;  // a path, or a name looked up in PATH
  std::vector<std::string> args;
  // Added to (overriding) the calling process's environment.
  std::vector<std::pair<std::string, std::string>> env;
  bool inheritStdin = false;  // interactive: the child reads our stdin, its stderr is ours
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

struct ProcessOutput {
  int exitCode = 0;
  std::string out;
  std::string err;  // empty when inheritStdin (then stderr went to ours)
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Runs to completion. Error: could not start (NotFound), timed out (Timeout, the child is
  // killed). A non-zero exit is a value, not an error. Thread-safe.
  virtual core::Result<ProcessOutput> run(const ProcessSpec& spec) = 0;
};

// posix_spawn with pipes; output is capped at 16 MiB per stream (more is an InvalidInput error).
ProcessRunner& systemProcessRunner();

}  // namespace restarter::kube
