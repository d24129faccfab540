// FlagTable: rows bound to an options struct, its defaults rendered from the struct, every value
// checked by its row, rules after the rows, deprecated spellings.

#include "restarter/cli/flag_table.hpp"

#include <catch2/catch.hpp>
#include <cxxopts.hpp>

#include <sstream>
#include <vector>

namespace restarter::cli {
namespace {

using namespace std::chrono_literals;

struct Options {
  std::string name = "web";
  int port = 443;
  double rate = 10;
  bool force = false;
  bool on = true;
  std::optional<bool> elect;
  std::chrono::milliseconds wait{1500};
  std::chrono::seconds lifetime{3600};
  std::vector<std::string> namespaces;
};

FlagTable tableFor(Options& out) {
  FlagTable table;
  table.text({"name", "a name", "NAME"}, out.name, true)
      .integer({"port", "a port", "PORT"}, out.port, {.min = 1, .max = 65535})
      .positive({"rate", "a rate", "N"}, out.rate)
      .toggle({"force", "force it", ""}, out.force)
      .toggle({"on", "on or off", ""}, out.on)
      .toggle({"elect", "elect (default: in a cluster)", ""}, out.elect)
      .duration({"wait", "a wait", "DURATION"}, {.max = std::chrono::hours(1)}, out.wait)
      .duration({"lifetime", "a lifetime", "DURATION"}, {.min = 1ms}, out.lifetime)
      .list({"n,namespace", "namespaces", "NS"}, out.namespaces)
      .deprecatedAlias("old-name", "name")
      .rule([&out](const FlagTable& flags) {
        if (out.force && !flags.given("name")) return flagProblem("--force needs --name");
        return core::okStatus();
      });
  table.group("Connection").text({"server", "a server", "URL"}, out.name);
  return table;
}

struct Read {
  Options options;
  std::string problem;  // "" when read
  std::string warnings;
  std::string help;

  explicit Read(std::vector<const char*> args) {
    FlagTable table = tableFor(options);
    cxxopts::Options declared("test");
    table.declare(declared);
    help = declared.help();
    args.insert(args.begin(), "test");
    const cxxopts::ParseResult flags = declared.parse(static_cast<int>(args.size()), args.data());
    std::ostringstream warned;
    const core::Status status = table.read(flags, warned);
    problem = status ? "" : status.error().message;
    warnings = warned.str();
  }
};

TEST_CASE("a flag table leaves every flag not given at the struct's default", "[cli][flag-table]") {
  const Read read({});
  CHECK(read.problem.empty());
  const Options defaults;
  CHECK(read.options.name == defaults.name);
  CHECK(read.options.port == defaults.port);
  CHECK(read.options.wait == defaults.wait);
  CHECK(read.options.on);
  CHECK_FALSE(read.options.elect);
  CHECK(read.options.namespaces.empty());
}

TEST_CASE("a flag table renders each default from the struct's value", "[cli][flag-table]") {
  const Read read({});
  CHECK_THAT(read.help, Catch::Contains("a name (default: web)"));
  CHECK_THAT(read.help, Catch::Contains("a port (default: 443)"));
  CHECK_THAT(read.help, Catch::Contains("a wait (default: 1500ms)"));
  CHECK_THAT(read.help, Catch::Contains("a lifetime (default: 1h)"));
  CHECK_THAT(read.help, Catch::Contains("on or off (default: true)"));
  CHECK_THAT(read.help, Catch::Contains("elect (default: in a cluster)\n"));
  CHECK_THAT(read.help, Catch::Contains("-h, --help"));
  CHECK_THAT(read.help, Catch::Contains("Connection options:"));
  CHECK_THAT(read.help, Catch::Contains("--old-name NAME  deprecated: use --name"));
}

TEST_CASE("a flag table reads what was given into the struct", "[cli][flag-table]") {
  const Read read({"--name=db", "--port", "8443", "--rate", "0.5", "--force", "--on=false", "--elect=false",
                   "--wait", "250ms", "--lifetime", "2h", "-n", "a,b", "-n", "a", "--namespace", "c"});
  CHECK(read.problem.empty());
  CHECK(read.options.name == "db");
  CHECK(read.options.port == 8443);
  CHECK(read.options.rate == 0.5);
  CHECK(read.options.force);
  CHECK_FALSE(read.options.on);
  CHECK(read.options.elect == std::optional<bool>(false));
  CHECK(read.options.wait == 250ms);
  CHECK(read.options.lifetime == 2h);
  CHECK(read.options.namespaces == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("a flag table names the flag of each bad value", "[cli][flag-table]") {
  CHECK(Read({"--name", ""}).problem == "--name: empty");
  CHECK(Read({"--port", "0"}).problem == "--port must be 1-65535, got 0");
  CHECK(Read({"--port", "80x"}).problem == "invalid value \"80x\" for --port");
  CHECK(Read({"--port", "99999999999999999999"}).problem ==
        "invalid value \"99999999999999999999\" for --port");
  CHECK(Read({"--rate", "0"}).problem == "--rate must be positive, got 0");
  CHECK(Read({"--rate", "nan"}).problem == "--rate must be positive, got nan");
  CHECK(Read({"--rate", "inf"}).problem == "--rate must be positive, got inf");
  CHECK(Read({"--rate", "fast"}).problem == "invalid value \"fast\" for --rate");
  CHECK_THAT(Read({"--wait", "2h"}).problem, Catch::StartsWith("--wait: "));
  CHECK_THAT(Read({"--lifetime", "1500ms"}).problem, Catch::StartsWith("--lifetime: "));
  CHECK(Read({"-n", "a,,b"}).problem == "--namespace: an empty value");
  // The first bad row wins, then the rules.
  CHECK(Read({"--wait", "x", "--port", "0"}).problem == "--port must be 1-65535, got 0");
  CHECK(Read({"--force"}).problem == "--force needs --name");
  CHECK(Read({"--force", "--name", "db"}).problem.empty());
}

TEST_CASE("a flag table reads a deprecated spelling as its new name and warns", "[cli][flag-table]") {
  const Read old({"--old-name", "db"});
  CHECK(old.problem.empty());
  CHECK(old.options.name == "db");
  CHECK(old.warnings == "Flag --old-name has been deprecated, use --name instead\n");
  // given() answers for the new name whichever spelling was used.
  CHECK(Read({"--old-name", "db", "--force"}).problem.empty());
  CHECK(Read({"--old-name", "db", "--name", "x"}).problem ==
        "give --name only (--old-name is its deprecated spelling)");
  CHECK(Read({"--name", "x"}).warnings.empty());
}

}  // namespace
}  // namespace restarter::cli
