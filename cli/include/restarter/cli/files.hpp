#pragma once
// Writing files so that a reader never sees a half-written one and a failure leaves the old file
// in place: write a temporary file in the same directory, fsync, set the mode, rename.

#include <filesystem>
#include <string_view>

#include <sys/types.h>

#include "restarter/core/result.hpp"

namespace restarter::cli {

core::Status writeFileAtomically(const std::filesystem::path& path, std::string_view content, mode_t mode);

}  // namespace restarter::cli
