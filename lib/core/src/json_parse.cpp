#include "restarter/core/json_parse.hpp"

#include <utility>

namespace restarter::core {

using nlohmann::json;

namespace {

// The size and depth checks every parse makes before building anything.
Status checkLimits(std::string_view text, const JsonLimits& limits) {
  if (text.size() > limits.maxBytes) {
    return makeError(ErrorKind::InvalidInput, "JSON text of " + std::to_string(text.size()) +
                                                  " bytes exceeds the limit of " +
                                                  std::to_string(limits.maxBytes) + " bytes");
  }
  if (jsonNestingDepth(text, limits.maxDepth) > limits.maxDepth) {
    return makeError(ErrorKind::InvalidInput,
                     "JSON text nests deeper than " + std::to_string(limits.maxDepth) + " levels");
  }
  return okStatus();
}

Result<json> checked(json doc) {
  if (doc.is_discarded()) return makeError(ErrorKind::InvalidInput, "not valid JSON");
  return doc;
}

// Builds the tree from nlohmann's SAX events as its own DOM parser does, leaving out the members
// `keep` rejects. Not nlohmann's parser callback: its parser removes a dropped value by scanning
// the parent container after every value ends, so an array of n objects costs n^2 (measured: 40 s
// for 220,000 env entries). Here each event costs O(1) plus the path for `keep`; the stacks are at
// most the nesting depth deep, which the caller has bounded.
class FilteringBuilder {
 public:
  FilteringBuilder(json& root, const JsonMemberFilter& keep) : root_(root), keep_(keep) {}

  bool null() { return scalar(json(nullptr)); }
  bool boolean(bool value) { return scalar(json(value)); }
  bool number_integer(json::number_integer_t value) { return scalar(json(value)); }
  bool number_unsigned(json::number_unsigned_t value) { return scalar(json(value)); }
  bool number_float(json::number_float_t value, const json::string_t&) { return scalar(json(value)); }
  bool string(json::string_t& value) { return scalar(json(std::move(value))); }
  bool binary(json::binary_t& value) { return scalar(json(std::move(value))); }  // not in JSON text
  bool start_object(std::size_t) { return start(json::object()); }
  bool start_array(std::size_t) { return start(json::array()); }
  bool end_object() { return end(); }
  bool end_array() { return end(); }

  bool key(json::string_t& name) {
    if (skipped_ > 0) return true;
    // A member of an object inside an array is kept with its array (see json_parse.hpp); otherwise
    // path_ holds the keys of the open containers below the root.
    if (arraysOpen_ == 0) {
      path_.push_back(name);
      const bool wanted = keep_(path_);
      path_.pop_back();
      if (!wanted) {
        dropNext_ = true;
        return true;
      }
    }
    key_ = std::move(name);
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const json::exception&) { return false; }

 private:
  // Where the next value goes: the root, the end of the open array, or the open object's member
  // named by the last key (a repeated key keeps its last value, as nlohmann's own parser does).
  json& place(json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return root_;
    }
    json& parent = *open_.back().container;
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return parent.back();
    }
    json& member = parent[key_];
    member = std::move(value);
    return member;
  }

  bool scalar(json&& value) {
    if (skipped_ > 0) return true;
    if (dropNext_) {
      dropNext_ = false;
      return true;
    }
    place(std::move(value));
    return true;
  }

  bool start(json&& container) {
    if (skipped_ > 0) {
      ++skipped_;
      return true;
    }
    if (dropNext_) {
      dropNext_ = false;
      skipped_ = 1;
      return true;
    }
    const bool member = !open_.empty() && open_.back().container->is_object();
    const bool isArray = container.is_array();
    // A pointer into the parent stays valid while the container is open: nothing else is added
    // to the parent until it ends.
    open_.push_back(Open{&place(std::move(container)), member});
    if (member) path_.push_back(key_);
    if (isArray) ++arraysOpen_;
    return true;
  }

  bool end() {
    if (skipped_ > 0) {
      --skipped_;
      return true;
    }
    if (open_.back().container->is_array()) --arraysOpen_;
    if (open_.back().member) path_.pop_back();
    open_.pop_back();
    return true;
  }

  struct Open {
    json* container;
    bool member;  // a member of an object (its key is on path_), not an array element or the root
  };

  json& root_;
  const JsonMemberFilter& keep_;
  std::vector<Open> open_;
  std::vector<std::string> path_;  // keys of the open member containers
  std::size_t arraysOpen_ = 0;     // arrays among open_
  std::string key_;                // the last key kept, naming the next value of an object
  bool dropNext_ = false;          // the last key was not kept: leave out its value
  std::size_t skipped_ = 0;        // > 0: inside a value left out, this many containers deep
};

}  // namespace

std::size_t jsonNestingDepth(std::string_view text, std::size_t stopAbove) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool inString = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (inString) {
      if (c == '\\') {
        ++i;  // the escaped byte ('"', '\\', 'u', ...) neither ends the string nor escapes another
      } else if (c == '"') {
        inString = false;
      }
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest > stopAbove) return deepest;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      // A closing bracket without an opening one makes the text invalid; the parser stops there.
      --depth;
    }
  }
  return deepest;
}

Result<json> parseJson(std::string_view text, const JsonLimits& limits) {
  if (Status s = checkLimits(text, limits); !s) return std::move(s).error();
  return checked(json::parse(text, nullptr, /*allow_exceptions=*/false));
}

Result<json> parseJson(std::string_view text, const JsonLimits& limits, const JsonMemberFilter& keep) {
  if (Status s = checkLimits(text, limits); !s) return std::move(s).error();
  json root;
  FilteringBuilder builder(root, keep);
  if (!json::sax_parse(text, &builder)) return makeError(ErrorKind::InvalidInput, "not valid JSON");
  return root;
}

}  // namespace restarter::core
