#include "restarter/core/json_access.hpp"

#include "json_access.hpp"

namespace restarter::core {

using nlohmann::json;

const json* valueAt(const json& object, std::initializer_list<std::string_view> path) {
  const json* value = &object;
  for (std::string_view key : path) {
    if (!value->is_object()) return nullptr;
    auto it = value->find(key);
    if (it == value->end()) return nullptr;
    value = &*it;
  }
  return value;
}

std::string stringAt(const json& object, std::initializer_list<std::string_view> path) {
  const json* value = valueAt(object, path);
  if (value == nullptr || !value->is_string()) return {};
  return value->get_ref<const std::string&>();
}

std::string metadataString(const json& object, std::string_view field) {
  return stringAt(object, {"metadata", field});
}

}  // namespace restarter::core

namespace restarter::core::detail {

using nlohmann::json;

std::string joinPath(std::string_view path, std::string_view key) {
  std::string out(path);
  if (!out.empty()) out += '.';
  out += key;
  return out;
}

std::string indexPath(std::string_view path, std::size_t index) {
  return std::string(path) + "[" + std::to_string(index) + "]";
}

Error wrongType(std::string_view path, std::string_view expected, const json& got) {
  return makeError(ErrorKind::InvalidInput,
                   std::string(path) + ": expected " + std::string(expected) + ", got " + got.type_name());
}

namespace {
// The member parent[key] or nullptr; never inserts, never throws.
const json* member(const json& parent, std::string_view key) {
  if (!parent.is_object()) return nullptr;
  auto it = parent.find(key);
  if (it == parent.end() || it->is_null()) return nullptr;
  return &*it;
}
}  // namespace

Result<const json*> optionalObject(const json& parent, std::string_view key, std::string_view path) {
  const json* value = member(parent, key);
  if (value != nullptr && !value->is_object()) {
    return wrongType(joinPath(path, key), "an object", *value);
  }
  return value;
}

Result<const json*> optionalArray(const json& parent, std::string_view key, std::string_view path) {
  const json* value = member(parent, key);
  if (value != nullptr && !value->is_array()) {
    return wrongType(joinPath(path, key), "an array", *value);
  }
  return value;
}

Result<std::optional<std::string>> optionalString(const json& parent, std::string_view key,
                                                  std::string_view path) {
  const json* value = member(parent, key);
  if (value == nullptr) return std::optional<std::string>{};
  if (!value->is_string()) return wrongType(joinPath(path, key), "a string", *value);
  return std::optional<std::string>{value->get_ref<const std::string&>()};
}

Result<bool> optionalBool(const json& parent, std::string_view key, std::string_view path) {
  const json* value = member(parent, key);
  if (value == nullptr) return false;
  if (!value->is_boolean()) return wrongType(joinPath(path, key), "a boolean", *value);
  return value->get<bool>();
}

}  // namespace restarter::core::detail
