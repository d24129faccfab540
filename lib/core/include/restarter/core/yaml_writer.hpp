#pragma once
// JSON to YAML, the one writer of every YAML restarter prints (explain-restart and status
// `-o yaml`, install-mwc --dry-run). Pure text, so it lives in core, below both cli and webhook.
//
// The output is block-style YAML that YAML 1.1 and 1.2 parsers (kubectl's, yaml-cpp, PyYAML) read
// back as the same JSON document:
//   - objects keep their key order (pass an ordered_json to keep insertion order); each entry is
//     `key: value`, a nested object or array on the following lines, 2 spaces deeper, arrays too
//     (`key:` then `  - item`); an object or array inside an array starts on the item's line;
//     empty ones are `{}` and `[]`;
//   - null is `~`, booleans `true`/`false`, numbers as JSON writes them (a float always with a
//     "." so that YAML 1.1 reads it as a float);
//   - a string (value or key) is written plain when a parser can read it only as that string, else
//     in double quotes with escapes. Quoted: the empty string; YAML 1.1's booleans and nulls in
//     every spelling ("yes", "No", "on", "OFF", "null", "~", ...), "<<" and "="; anything that
//     starts like a number, a date, .inf/.nan or a YAML indicator ("-", "+", ".", digits,
//     "-?:,[]{}#&*!|>'\"%@`"); leading or trailing spaces; any ':' or '#'; control characters
//     and anything not ASCII. In quotes, '"' '\' and control characters are escaped, and so are
//     the C1 controls, U+2028, U+2029 and U+FEFF (which YAML 1.1 reads as line breaks or a BOM);
//     other UTF-8 stays as it is. A key longer than 1,024 bytes (the longest implicit key YAML
//     allows) is written as an explicit `? key` / `: value` entry.
// Strings must be UTF-8, as nlohmann's parser guarantees for what it reads. Never throws but
// std::bad_alloc. The text ends with a newline.

#include <string>

#include <nlohmann/json.hpp>

namespace restarter::core {

std::string toYaml(const nlohmann::json& document);
std::string toYaml(const nlohmann::ordered_json& document);

}  // namespace restarter::core
