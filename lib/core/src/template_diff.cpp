#include "restarter/core/template_diff.hpp"

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "restarter/core/annotation_keys.hpp"

namespace restarter::core {

using nlohmann::json;

namespace {

bool isPlainKey(const std::string& key) {
  if (key.empty()) return false;
  for (char c : key) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string child(const std::string& path, const std::string& key) {
  if (isPlainKey(key)) return path.empty() ? key : path + "." + key;
  return path + "[" + key + "]";
}

// Elements keyed by their "name" when every element is an object with a unique string name.
bool namedElements(const json& array, std::map<std::string, const json*>& out) {
  for (const json& element : array) {
    if (!element.is_object()) return false;
    auto name = element.find("name");
    if (name == element.end() || !name->is_string()) return false;
    if (!out.emplace(name->get<std::string>(), &element).second) return false;
  }
  return true;
}

class Differ {
 public:
  void diff(const json& before, const json& after, const std::string& path) {
    if (before == after) return;
    // A label or annotation map that appears or disappears: name its keys, not the whole map.
    if (path.rfind("metadata.", 0) == 0 && (before.is_null() || after.is_null()) &&
        (before.is_object() || after.is_object())) {
      const json empty = json::object();
      diff(before.is_null() ? empty : before, after.is_null() ? empty : after, path);
      return;
    }
    if (before.is_object() && after.is_object()) {
      std::set<std::string> keys;
      for (const auto& item : before.items()) keys.insert(item.key());
      for (const auto& item : after.items()) keys.insert(item.key());
      for (const std::string& key : keys) {
        const json missing;
        const auto b = before.find(key);
        const auto a = after.find(key);
        diff(b == before.end() ? missing : *b, a == after.end() ? missing : *a, child(path, key));
      }
      return;
    }
    if (before.is_array() && after.is_array()) {
      std::map<std::string, const json*> beforeByName, afterByName;
      if (namedElements(before, beforeByName) && namedElements(after, afterByName)) {
        std::set<std::string> names;
        for (const auto& [name, element] : beforeByName) names.insert(name);
        for (const auto& [name, element] : afterByName) names.insert(name);
        const json missing;
        for (const std::string& name : names) {
          const auto b = beforeByName.find(name);
          const auto a = afterByName.find(name);
          diff(b == beforeByName.end() ? missing : *b->second, a == afterByName.end() ? missing : *a->second,
               path + "[" + name + "]");
        }
        return;
      }
      if (before.size() == after.size()) {
        for (std::size_t i = 0; i < before.size(); ++i) {
          diff(before[i], after[i], path + "[" + std::to_string(i) + "]");
        }
        return;
      }
    }
    paths_.insert(path);
  }

  std::vector<std::string> take() && {
    std::vector<std::string> out;
    for (const std::string& path : paths_) {
      out.push_back(path.rfind("spec.", 0) == 0   ? path.substr(5)
                    : path.rfind("spec[", 0) == 0 ? path.substr(4)
                                                  : path);
    }
    return out;
  }

 private:
  std::set<std::string> paths_;
};

// The template without restarter-owned annotations (and without an annotations object left
// empty by that), so that adding the first restarter annotation is not a metadata change.
json withoutRestarterAnnotations(const json& podTemplate) {
  if (!podTemplate.is_object()) return podTemplate;
  const auto metadata = podTemplate.find("metadata");
  if (metadata == podTemplate.end() || !metadata->is_object()) return podTemplate;
  const auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return podTemplate;
  json copy = podTemplate;
  json& copied = copy["metadata"]["annotations"];
  for (const auto& item : annotations->items()) {
    if (parseTemplateAnnotationKey(item.key())) copied.erase(item.key());
  }
  if (copied.empty()) copy["metadata"].erase("annotations");
  return copy;
}

}  // namespace

std::vector<std::string> templateChangePaths(const json& before, const json& after) {
  Differ differ;
  differ.diff(withoutRestarterAnnotations(before), withoutRestarterAnnotations(after), "");
  return std::move(differ).take();
}

}  // namespace restarter::core
