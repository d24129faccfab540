#pragma once
// A subcommand's flags as rows, each bound to a field of the subcommand's options struct
// (docs/architecture.md, "Flags"). A row names the flag, says what it means and which field it
// fills; the field's value when the row is added is the flag's default, and --help renders it
// from that value, so every default is written once: in the options struct, or in the library's
// option struct it embeds. read() fills the fields of the flags the user gave and leaves the others
// at their defaults; every value is checked by its row (type, bounds, syntax), rules across flags
// ("X needs Y") are rows too (rule()), and the first problem comes back as one core::Status whose
// message names the flag: "--FLAG: why" or "--FLAG must be 1-30, got 0". parseFlags (flags.hpp)
// reports it as the usage error. The one way a subcommand declares and reads its flags.
//
// Ownership: a table holds references into the struct it was built on. Build it, declare it into
// the cxxopts::Options, read it, drop it, all while the struct lives; one thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "restarter/core/result.hpp"
#include "restarter/core/time.hpp"

namespace cxxopts {
class Options;
class ParseResult;
}  // namespace cxxopts

namespace restarter::cli {

// What a row shows in --help: its spelling ("name", or "n,name" with a one-letter form), its help
// text and the name of its value ("DURATION"; empty for a toggle).
struct FlagSpec {
  std::string spelling;
  std::string help;
  std::string argName;
};

// Inclusive bounds of an integer flag.
struct IntBounds {
  std::int64_t min = 0;
  std::int64_t max = INT32_MAX;
};

class FlagTable {
 public:
  // Parses a flag's text into the field; the message of its error follows "--FLAG: ".
  template <typename T>
  using Parse = std::function<core::Result<T>(const std::string& text)>;
  // The field's value as its flag's text, for --help's "(default: ...)"; "" shows none.
  template <typename T>
  using Format = std::function<std::string(const T& value)>;

  FlagTable();
  FlagTable(FlagTable&&) noexcept;
  FlagTable& operator=(FlagTable&&) noexcept;
  ~FlagTable();

  // The help group of the rows added next ("": the subcommand's own, listed first).
  FlagTable& group(std::string name);

  // A string; with `nonEmpty`, "" is refused ("--FLAG: empty"). Default shown when not empty.
  FlagTable& text(FlagSpec spec, std::string& target, bool nonEmpty = false);
  // A whole number within `bounds` ("--FLAG must be MIN-MAX, got V").
  FlagTable& integer(FlagSpec spec, int& target, IntBounds bounds);
  FlagTable& integer(FlagSpec spec, std::size_t& target, IntBounds bounds);
  // A number more than zero ("--FLAG must be positive, got V").
  FlagTable& positive(FlagSpec spec, double& target);
  // --FLAG alone means true; --FLAG=false and --FLAG=true are accepted (pflag's bools).
  FlagTable& toggle(FlagSpec spec, bool& target);
  // The same, left nullopt when not given (its help says what that means).
  FlagTable& toggle(FlagSpec spec, std::optional<bool>& target);
  // core::parseDuration's syntax within `bounds`; a seconds field takes whole seconds only.
  FlagTable& duration(FlagSpec spec, core::DurationBounds bounds, std::chrono::milliseconds& target);
  FlagTable& duration(FlagSpec spec, core::DurationBounds bounds, std::chrono::seconds& target);
  // Repeatable, and comma-separated values split ("-n a,b -n c"); empty items are refused
  // ("--FLAG: an empty value"), repeated ones kept once. Given, it replaces the default.
  FlagTable& list(FlagSpec spec, std::vector<std::string>& target);
  // Any other value: `parse` reads the text, `format` renders the default.
  template <typename T>
  FlagTable& parsed(FlagSpec spec, T& target, Parse<T> parse, Format<T> format);

  // `oldName` is the deprecated spelling of row `name` (added before): listed in the "Deprecated"
  // group, read as `name` with pflag's warning "Flag --OLD has been deprecated, use --NAME
  // instead" on the warnings stream; giving both is a problem.
  FlagTable& deprecatedAlias(const std::string& oldName, const std::string& name);

  // A rule across flags, checked after every flag was read, in the order added; it may ask the
  // table which flags were given.
  using Rule = std::function<core::Status(const FlagTable& table)>;
  FlagTable& rule(Rule check);

  // Adds every row to `options` (groups in order of first use), then -h/--help.
  void declare(cxxopts::Options& options) const;
  // Fills the fields of the flags given in `flags` (parsed with declare()'s options); the first
  // problem, in row order, then the rules. Deprecation warnings go to `warnings`.
  core::Status read(const cxxopts::ParseResult& flags, std::ostream& warnings);
  // After read(): whether the user gave flag `name` (its long name), by any spelling.
  bool given(const std::string& name) const;

 private:
  struct Row;
  // Reads a flag's value into its field; `flag` is "--NAME", for the message.
  using TextReader = std::function<core::Status(const std::string& flag, const std::string& text)>;
  using ToggleReader = std::function<void(bool value)>;
  using ListReader =
      std::function<core::Status(const std::string& flag, const std::vector<std::string>& items)>;
  enum class RowKind { Text, Toggle, List };
  Row& addRow(FlagSpec spec, RowKind kind);
  FlagTable& addText(FlagSpec spec, std::string shownDefault, TextReader reader);

  std::string group_;
  std::vector<Row> rows_;
  std::vector<Rule> rules_;
  std::set<std::string> given_;
};

// The usage problem `message` as a Status (InvalidInput): what rules and readers return.
core::Status flagProblem(std::string message);

template <typename T>
FlagTable& FlagTable::parsed(FlagSpec spec, T& target, Parse<T> parse, Format<T> format) {
  return addText(std::move(spec), format(target),
                 [&target, parse = std::move(parse)](const std::string& flag, const std::string& text) {
                   core::Result<T> value = parse(text);
                   if (!value) return flagProblem(flag + ": " + value.error().message);
                   target = std::move(value).value();
                   return core::okStatus();
                 });
}

}  // namespace restarter::cli
