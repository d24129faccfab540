#include "restarter/kube/files.hpp"

#include <catch2/catch.hpp>

#include "restarter/testing/temp_dir.hpp"

namespace restarter::kube {
namespace {

using restarter::testing::TempDir;

TEST_CASE("readFile returns the contents byte for byte", "[kube][files]") {
  TempDir dir;
  const std::string bytes("a\0b\r\n\xff", 6);
  auto read = readFile(dir.write("f", bytes));
  REQUIRE(read);
  CHECK(*read == bytes);
  auto empty = readFile(dir.write("empty", ""));
  REQUIRE(empty);
  CHECK(empty->empty());
}

TEST_CASE("readFile names a missing file and why", "[kube][files]") {
  TempDir dir;
  auto read = readFile(dir.path() + "/absent");
  REQUIRE_FALSE(read);
  CHECK(read.error().kind == core::ErrorKind::NotFound);
  CHECK(read.error().message == "cannot read \"" + dir.path() + "/absent\": No such file or directory");
  auto under = readFile(dir.write("file", "x") + "/below");
  REQUIRE_FALSE(under);
  CHECK(under.error().kind == core::ErrorKind::NotFound);
}

TEST_CASE("readFile refuses more than its bound by size or while reading", "[kube][files]") {
  TempDir dir;
  const std::string path = dir.write("big", std::string(100, 'x'));
  auto bySize = readFile(path, 99);
  REQUIRE_FALSE(bySize);
  CHECK(bySize.error().kind == core::ErrorKind::InvalidInput);
  CHECK(bySize.error().message.find("larger than 99 bytes") != std::string::npos);
  CHECK(readFile(path, 100));
  // A device has no size: /dev/zero (a --kubeconfig /dev/zero) ends at the bound, not never.
  auto zero = readFile("/dev/zero");
  REQUIRE_FALSE(zero);
  CHECK(zero.error().kind == core::ErrorKind::InvalidInput);
}

TEST_CASE("readFile refuses a directory", "[kube][files]") {
  TempDir dir;
  auto read = readFile(dir.path());
  REQUIRE_FALSE(read);
  CHECK(read.error().kind == core::ErrorKind::Unavailable);
  CHECK(read.error().message == "cannot read \"" + dir.path() + "\": Is a directory");
}

}  // namespace
}  // namespace restarter::kube
