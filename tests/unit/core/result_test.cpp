#include "restarter/core/result.hpp"

#include <catch2/catch.hpp>

using namespace restarter::core;

TEST_CASE("a result holds a value or an error with its context trail", "[result]") {
  Result<int> good = 4;
  REQUIRE(good.ok());
  CHECK(*good == 4);

  Result<int> bad = makeError(ErrorKind::NotFound, "configmap x not found");
  bad = std::move(bad).withContext("reading references").withContext("reconciling default/web");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().kind == ErrorKind::NotFound);
  CHECK(bad.error().describe() ==
        "configmap x not found (while reading references; while reconciling default/web)");
  CHECK(std::string(errorKindName(ErrorKind::TooManyRequests)) == "too-many-requests");
}
