#include "restarter/cli/flag_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <ostream>
#include <sstream>

#include <cxxopts.hpp>

#include "restarter/cli/flags.hpp"

namespace restarter::cli {

namespace {

// The long name of a spelling: "namespace" of "n,namespace".
std::string longName(const std::string& spelling) {
  const auto comma = spelling.find(',');
  return comma == std::string::npos ? spelling : spelling.substr(comma + 1);
}

// How cxxopts used to say a value of the wrong type, kept because scripts match it.
core::Status invalidValue(const std::string& flag, const std::string& text) {
  return flagProblem("invalid value \"" + text + "\" for " + flag);
}

// Reads a whole number within `bounds` into `target`: "invalid value" when it is not one,
// "--FLAG must be MIN-MAX, got V" (or "at least MIN") when it is out of bounds.
template <typename T>
auto integerReader(T& target, IntBounds bounds) {
  return [&target, bounds](const std::string& flag, const std::string& text) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return invalidValue(flag, text);
    if (value < bounds.min || value > bounds.max) {
      const std::string range = bounds.max == IntBounds{}.max
                                    ? "at least " + std::to_string(bounds.min)
                                    : std::to_string(bounds.min) + "-" + std::to_string(bounds.max);
      return flagProblem(flag + " must be " + range + ", got " + std::to_string(value));
    }
    target = static_cast<T>(value);
    return core::okStatus();
  };
}

// Reads a duration within `bounds` into `target` (milliseconds or seconds).
template <typename Duration>
auto durationReader(Duration& target, core::DurationBounds bounds) {
  return [&target, bounds](const std::string& flag, const std::string& text) {
    auto value = core::parseDurationWithin(text, bounds);
    if (!value) return flagProblem(flag + ": " + value.error().message);
    target = std::chrono::duration_cast<Duration>(*value);
    return core::okStatus();
  };
}

}  // namespace

// One row: a flag, or the deprecated spelling of one (`aliasOf` set; it reads into that row).
struct FlagTable::Row {
  FlagSpec spec;
  std::string name;
  std::string group;
  RowKind kind = RowKind::Text;
  std::string shownDefault;
  TextReader readText;
  ToggleReader readToggle;
  ListReader readList;
  std::string aliasOf;
};

core::Status flagProblem(std::string message) {
  return core::makeError(core::ErrorKind::InvalidInput, std::move(message));
}

FlagTable::FlagTable() = default;
FlagTable::FlagTable(FlagTable&&) noexcept = default;
FlagTable& FlagTable::operator=(FlagTable&&) noexcept = default;
FlagTable::~FlagTable() = default;

FlagTable& FlagTable::group(std::string name) {
  group_ = std::move(name);
  return *this;
}

FlagTable::Row& FlagTable::addRow(FlagSpec spec, RowKind kind) {
  Row& row = rows_.emplace_back();
  row.name = longName(spec.spelling);
  row.spec = std::move(spec);
  row.group = group_;
  row.kind = kind;
  return row;
}

FlagTable& FlagTable::addText(FlagSpec spec, std::string shownDefault, TextReader reader) {
  Row& row = addRow(std::move(spec), RowKind::Text);
  row.shownDefault = std::move(shownDefault);
  row.readText = std::move(reader);
  return *this;
}

FlagTable& FlagTable::text(FlagSpec spec, std::string& target, bool nonEmpty) {
  return addText(std::move(spec), target,
                 [&target, nonEmpty](const std::string& flag, const std::string& text) {
                   if (nonEmpty && text.empty()) return flagProblem(flag + ": empty");
                   target = text;
                   return core::okStatus();
                 });
}

FlagTable& FlagTable::integer(FlagSpec spec, int& target, IntBounds bounds) {
  return addText(std::move(spec), std::to_string(target), integerReader(target, bounds));
}

FlagTable& FlagTable::integer(FlagSpec spec, std::size_t& target, IntBounds bounds) {
  return addText(std::move(spec), std::to_string(target), integerReader(target, bounds));
}

FlagTable& FlagTable::positive(FlagSpec spec, double& target) {
  std::ostringstream shown;
  shown << target;
  return addText(std::move(spec), shown.str(), [&target](const std::string& flag, const std::string& text) {
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return invalidValue(flag, text);
    if (!std::isfinite(value) || !(value > 0)) return flagProblem(flag + " must be positive, got " + text);
    target = value;
    return core::okStatus();
  });
}

FlagTable& FlagTable::toggle(FlagSpec spec, bool& target) {
  Row& row = addRow(std::move(spec), RowKind::Toggle);
  row.shownDefault = target ? "true" : "false";
  row.readToggle = [&target](bool value) { target = value; };
  return *this;
}

FlagTable& FlagTable::toggle(FlagSpec spec, std::optional<bool>& target) {
  addRow(std::move(spec), RowKind::Toggle).readToggle = [&target](bool value) { target = value; };
  return *this;
}

FlagTable& FlagTable::duration(FlagSpec spec, core::DurationBounds bounds, std::chrono::milliseconds& target) {
  return addText(std::move(spec), core::formatDuration(target), durationReader(target, bounds));
}

FlagTable& FlagTable::duration(FlagSpec spec, core::DurationBounds bounds, std::chrono::seconds& target) {
  bounds.wholeSeconds = true;
  return addText(std::move(spec), core::formatDuration(target), durationReader(target, bounds));
}

FlagTable& FlagTable::list(FlagSpec spec, std::vector<std::string>& target) {
  Row& row = addRow(std::move(spec), RowKind::List);
  for (const std::string& item : target) row.shownDefault += (row.shownDefault.empty() ? "" : ",") + item;
  row.readList = [&target](const std::string& flag, const std::vector<std::string>& items) {
    std::vector<std::string> values;
    for (const std::string& item : items) {
      if (item.empty()) return flagProblem(flag + ": an empty value");
      if (std::find(values.begin(), values.end(), item) == values.end()) values.push_back(item);
    }
    if (values.empty()) return flagProblem(flag + ": an empty value");
    target = std::move(values);
    return core::okStatus();
  };
  return *this;
}

FlagTable& FlagTable::deprecatedAlias(const std::string& oldName, const std::string& name) {
  const auto of = std::find_if(rows_.begin(), rows_.end(), [&](const Row& row) { return row.name == name; });
  if (of == rows_.end()) return *this;  // a programming error: the flag test lists every alias
  Row row = *of;
  row.name = oldName;
  row.spec = FlagSpec{oldName, deprecatedHelp(name), of->spec.argName};
  row.group = "Deprecated";
  row.shownDefault.clear();
  row.aliasOf = name;
  rows_.push_back(std::move(row));
  return *this;
}

FlagTable& FlagTable::rule(Rule check) {
  rules_.push_back(std::move(check));
  return *this;
}

void FlagTable::declare(cxxopts::Options& options) const {
  const auto add = [&options](const Row& row) {
    switch (row.kind) {
      case RowKind::Text: {
        auto value = cxxopts::value<std::string>();
        if (!row.shownDefault.empty()) value->default_value(row.shownDefault);
        options.add_options(row.group)(row.spec.spelling, row.spec.help, value, row.spec.argName);
        break;
      }
      case RowKind::Toggle: {
        auto value = cxxopts::value<bool>()->implicit_value("true");
        if (!row.shownDefault.empty()) value->default_value(row.shownDefault);
        options.add_options(row.group)(row.spec.spelling, row.spec.help, value);
        break;
      }
      case RowKind::List: {
        auto value = cxxopts::value<std::vector<std::string>>();
        if (!row.shownDefault.empty()) value->default_value(row.shownDefault);
        options.add_options(row.group)(row.spec.spelling, row.spec.help, value, row.spec.argName);
        break;
      }
    }
  };
  // The subcommand's own flags first, then -h/--help, then each other group in order of first use.
  for (const Row& row : rows_) {
    if (row.group.empty()) add(row);
  }
  options.add_options()("h,help", "show this help");
  std::vector<std::string> groups;
  for (const Row& row : rows_) {
    if (!row.group.empty() && std::find(groups.begin(), groups.end(), row.group) == groups.end())
      groups.push_back(row.group);
  }
  for (const std::string& group : groups) {
    for (const Row& row : rows_) {
      if (row.group == group) add(row);
    }
  }
}

core::Status FlagTable::read(const cxxopts::ParseResult& flags, std::ostream& warnings) {
  given_.clear();
  for (const Row& row : rows_) {
    if (!row.aliasOf.empty()) continue;
    std::string from;
    if (flags.count(row.name) > 0) from = row.name;
    for (const Row& alias : rows_) {
      if (alias.aliasOf != row.name || flags.count(alias.name) == 0) continue;
      if (!from.empty()) {
        return flagProblem("give --" + row.name + " only (--" + alias.name + " is its deprecated spelling)");
      }
      warnings << "Flag --" << alias.name << " has been deprecated, use --" << row.name << " instead\n";
      from = alias.name;
    }
    if (from.empty()) continue;
    given_.insert(row.name);
    const std::string flag = "--" + row.name;
    core::Status status = core::okStatus();
    switch (row.kind) {
      case RowKind::Text: status = row.readText(flag, flags[from].as<std::string>()); break;
      case RowKind::Toggle: row.readToggle(flags[from].as<bool>()); break;
      case RowKind::List: status = row.readList(flag, flags[from].as<std::vector<std::string>>()); break;
    }
    if (!status) return status;
  }
  for (const auto& check : rules_) {
    if (core::Status status = check(*this); !status) return status;
  }
  return core::okStatus();
}

bool FlagTable::given(const std::string& name) const { return given_.count(name) > 0; }

}  // namespace restarter::cli
