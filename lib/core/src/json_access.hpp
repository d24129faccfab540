#pragma once
// Private helpers: typed, non-throwing access to fields of outside JSON. Absent and null fields
// are "not there"; a field of the wrong type is an InvalidInput error naming its JSON path. (The
// lenient reads every module uses, where a wrong type reads as "", are the public
// restarter/core/json_access.hpp.)

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "restarter/core/result.hpp"

namespace restarter::core::detail {

// Appends ".key" to a path ("spec" + "volumes" -> "spec.volumes").
std::string joinPath(std::string_view path, std::string_view key);
// Appends "[index]" to a path.
std::string indexPath(std::string_view path, std::size_t index);

// The object at parent[key], nullptr when absent or null. Precondition: parent is an object.
Result<const nlohmann::json*> optionalObject(const nlohmann::json& parent, std::string_view key,
                                             std::string_view path);
// The array at parent[key], nullptr when absent or null.
Result<const nlohmann::json*> optionalArray(const nlohmann::json& parent, std::string_view key,
                                            std::string_view path);
// The string at parent[key], nullopt when absent or null.
Result<std::optional<std::string>> optionalString(const nlohmann::json& parent, std::string_view key,
                                                  std::string_view path);
// The boolean at parent[key], false when absent or null.
Result<bool> optionalBool(const nlohmann::json& parent, std::string_view key, std::string_view path);

// Error helper: "<path>: expected <what>, got <json type>".
Error wrongType(std::string_view path, std::string_view expected, const nlohmann::json& got);

}  // namespace restarter::core::detail
