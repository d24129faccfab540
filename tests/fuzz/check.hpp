#pragma once
// What a fuzz target does when one of its checks fails: say which check, then abort, so that
// libFuzzer reports a crash and keeps the input as an artifact.

#include <cstdio>
#include <cstdlib>
#include <string>

#include "restarter/core/result.hpp"

namespace restarter::fuzz {

[[noreturn]] inline void fail(const char* target, const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "%s: %s%s%s\n", target, what, detail.empty() ? "" : ": ", detail.c_str());
  std::abort();
}

// Every error must say what went wrong: callers log and return its message.
template <typename T>
void expectMessage(const char* target, const core::Result<T>& result) {
  if (!result && result.error().message.empty())
    fail(target, "an error without a message", result.error().describe());
}

}  // namespace restarter::fuzz
