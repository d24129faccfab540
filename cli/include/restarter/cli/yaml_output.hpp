#pragma once
// JSON to YAML for `-o yaml` and `--dry-run` outputs (yaml-cpp, kept out of this header). Keys
// keep their JSON order; strings that YAML would read as another type are quoted.

#include <string>

#include <nlohmann/json.hpp>

namespace restarter::cli {

std::string toYaml(const nlohmann::ordered_json& document);

}  // namespace restarter::cli
