#pragma once
// Table cells shared by the explanation text and the status table.

#include <cstddef>
#include <string>

namespace restarter::inspect {

// `s` padded with spaces to `width` columns (never cut).
inline std::string padCell(const std::string& s, std::size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

}  // namespace restarter::inspect
