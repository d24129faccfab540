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

TEST_CASE("an error passed up gains context outermost last and keeps its kind", "[result]") {
  Result<int> failed = makeError(ErrorKind::Conflict, "the object changed");
  const Error passed =
      std::move(failed).error().withContext("applying annotations").withContext("reconciling ns/web");
  CHECK(passed.kind == ErrorKind::Conflict);
  CHECK(passed.message == "the object changed");
  CHECK(passed.context == std::vector<std::string>{"applying annotations", "reconciling ns/web"});
  CHECK(passed.describe() == "the object changed (while applying annotations; while reconciling ns/web)");
}
