#include "restarter/cli/yaml_output.hpp"

#include <yaml-cpp/yaml.h>

namespace restarter::cli {

namespace {

// True when a plain YAML scalar with this text would be read as something other than a string
// (YAML 1.1 booleans and nulls, numbers, timestamps), so it must be quoted. yaml-cpp quotes
// strings with special characters itself but not these.
bool readsAsNonString(const std::string& s) {
  static const char* const kWords[] = {"y",  "Y",    "yes",  "Yes",  "YES",   "n",     "N",     "no", "No",
                                       "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On",
                                       "ON", "off",  "Off",  "OFF",  "null",  "Null",  "NULL",  "~",  ""};
  for (const char* word : kWords) {
    if (s == word) return true;
  }
  const char first = s.front();
  if (!(first == '-' || first == '+' || first == '.' || (first >= '0' && first <= '9'))) return false;
  // Numbers (also hex, octal, .inf, .nan) and dates/timestamps all start like this: quote them all.
  return true;
}

void emit(YAML::Emitter& out, const nlohmann::ordered_json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::object:
      out << YAML::BeginMap;
      for (const auto& [key, child] : value.items()) {
        out << YAML::Key << key << YAML::Value;
        emit(out, child);
      }
      out << YAML::EndMap;
      break;
    case nlohmann::json::value_t::array:
      out << YAML::BeginSeq;
      for (const auto& child : value) emit(out, child);
      out << YAML::EndSeq;
      break;
    case nlohmann::json::value_t::string:
      if (readsAsNonString(value.get_ref<const std::string&>())) out << YAML::DoubleQuoted;
      out << value.get<std::string>();
      break;
    case nlohmann::json::value_t::boolean: out << value.get<bool>(); break;
    case nlohmann::json::value_t::number_integer: out << value.get<std::int64_t>(); break;
    case nlohmann::json::value_t::number_unsigned: out << value.get<std::uint64_t>(); break;
    case nlohmann::json::value_t::number_float: out << value.get<double>(); break;
    default: out << YAML::Null; break;
  }
}

}  // namespace

std::string toYaml(const nlohmann::ordered_json& document) {
  YAML::Emitter out;
  emit(out, document);
  return std::string(out.c_str()) + "\n";
}

}  // namespace restarter::cli
