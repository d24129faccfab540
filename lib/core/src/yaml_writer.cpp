#include "restarter/core/yaml_writer.hpp"

#include <cstddef>
#include <string_view>

namespace restarter::core {

namespace {

// Plain scalars YAML 1.1 (kubectl's go-yaml, PyYAML) reads as booleans, nulls, a merge key or a
// value key instead of strings; YAML 1.2's core schema reads a subset of them.
constexpr std::string_view kNonStringWords[] = {
    "y",     "Y",     "yes", "Yes", "YES", "n",   "N",   "no",  "No",   "NO",   "true", "True", "TRUE", "false",
    "False", "FALSE", "on",  "On",  "ON",  "off", "Off", "OFF", "null", "Null", "NULL", "~",    "<<",   "="};

// Characters a plain scalar must not start with: YAML's indicators (YAML 1.2 section 5.3), and the
// first characters of numbers, .inf/.nan and timestamps, which are quoted rather than told apart.
constexpr std::string_view kQuotedFirst = "-?:,[]{}#&*!|>'\"%@`+.0123456789";

// The longest implicit key YAML allows (YAML 1.2 section 7.4.2: 1,024 characters; counted here
// in bytes, which is never fewer).
constexpr std::size_t kMaxImplicitKey = 1024;

bool needsQuotes(std::string_view text) {
  if (text.empty() || text.front() == ' ' || text.back() == ' ') return true;
  if (kQuotedFirst.find(text.front()) != std::string_view::npos) return true;
  for (std::string_view word : kNonStringWords) {
    if (text == word) return true;
  }
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    // Controls, DEL and anything not ASCII; ':' and '#' wherever they stand (": " starts a value
    // and " #" a comment; the others are quoted too rather than told apart).
    if (byte < 0x20 || byte >= 0x7f || c == ':' || c == '#') return true;
  }
  return false;
}

void appendHex(std::string& out, std::string_view prefix, unsigned value, int digits) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out += prefix;
  for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out += kHex[(value >> shift) & 0xFU];
}

void appendQuoted(std::string& out, std::string_view text) {
  out += '"';
  const auto at = [&](std::size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0U; };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned c = at(i);
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      appendHex(out, "\\x", c, 2);
    } else if (c == 0xC2 && at(i + 1) >= 0x80 && at(i + 1) <= 0x9F) {  // U+0080-U+009F, NEL among them
      appendHex(out, "\\u", at(i + 1), 4);
      i += 1;
    } else if (c == 0xE2 && at(i + 1) == 0x80 && (at(i + 2) == 0xA8 || at(i + 2) == 0xA9)) {  // U+2028, U+2029
      appendHex(out, "\\u", 0x2000U + at(i + 2) - 0x80U, 4);
      i += 2;
    } else if (c == 0xEF && at(i + 1) == 0xBB && at(i + 2) == 0xBF) {  // U+FEFF
      out += "\\uFEFF";
      i += 2;
    } else {
      out += text[i];
    }
  }
  out += '"';
}

void appendString(std::string& out, std::string_view text) {
  if (needsQuotes(text)) {
    appendQuoted(out, text);
  } else {
    out += text;
  }
}

template <typename Json>
void appendScalar(std::string& out, const Json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::string:
      appendString(out, value.template get_ref<const std::string&>());
      break;
    case nlohmann::json::value_t::boolean: out += value.template get<bool>() ? "true" : "false"; break;
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: out += value.dump(); break;
    case nlohmann::json::value_t::number_float: {
      std::string number = value.dump();  // the shortest text that reads back as the same double
      // YAML 1.1 reads "1e+20" as a string: its floats need a "." ("1.0e+20").
      if (const auto e = number.find_first_of("eE");
          e != std::string::npos && number.find('.') == std::string::npos) {
        number.insert(e, ".0");
      }
      out += number;
      break;
    }
    case nlohmann::json::value_t::object: out += "{}"; break;  // only empty ones get here
    case nlohmann::json::value_t::array: out += "[]"; break;
    default: out += '~'; break;  // null (and discarded, which parsing never leaves)
  }
}

template <typename Json>
bool isBlock(const Json& value) {
  return (value.is_object() || value.is_array()) && !value.empty();
}

template <typename Json>
void appendBlock(std::string& out, const Json& value, std::size_t indent, bool firstOnOpenLine);

// `child` after a "key:", a "? key" line's ":" or a "-" already written on the current line.
template <typename Json>
void appendChild(std::string& out, const Json& child, std::size_t indent, bool afterKey) {
  if (!isBlock(child)) {
    out += ' ';
    appendScalar(out, child);
    out += '\n';
  } else if (afterKey) {  // the collection on the following lines
    out += '\n';
    appendBlock(out, child, indent, false);
  } else {  // an item: the collection's first entry on the item's line
    out += ' ';
    appendBlock(out, child, indent, true);
  }
}

// The entries of a non-empty object or array, each line indented by `indent` spaces but the first
// when `firstOnOpenLine` (it continues a "- " already written).
template <typename Json>
void appendBlock(std::string& out, const Json& value, std::size_t indent, bool firstOnOpenLine) {
  bool first = true;
  const auto startLine = [&] {
    if (!first || !firstOnOpenLine) out.append(indent, ' ');
    first = false;
  };
  if (value.is_object()) {
    for (const auto& [key, child] : value.items()) {
      startLine();
      if (key.size() > kMaxImplicitKey) {
        out += "? ";
        appendString(out, key);
        out += '\n';
        out.append(indent, ' ');
      } else {
        appendString(out, key);
      }
      out += ':';
      appendChild(out, child, indent + 2, true);
    }
  } else {
    for (const auto& child : value) {
      startLine();
      out += '-';
      appendChild(out, child, indent + 2, false);
    }
  }
}

template <typename Json>
std::string documentToYaml(const Json& document) {
  std::string out;
  if (isBlock(document)) {
    appendBlock(out, document, 0, false);
  } else {
    appendScalar(out, document);
    out += '\n';
  }
  return out;
}

}  // namespace

std::string toYaml(const nlohmann::json& document) { return documentToYaml(document); }
std::string toYaml(const nlohmann::ordered_json& document) { return documentToYaml(document); }

}  // namespace restarter::core
