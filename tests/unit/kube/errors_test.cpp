#include "restarter/kube/errors.hpp"

#include <catch2/catch.hpp>

using restarter::core::ErrorKind;
using namespace restarter::kube;

namespace {
std::string statusBody(int code, const std::string& reason, const std::string& message) {
  return R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":")" + message + R"(","reason":")" +
         reason + R"(","code":)" + std::to_string(code) + "}";
}
}  // namespace

TEST_CASE("metav1.Status codes and reasons map to error kinds", "[kube][errors]") {
  CHECK(errorFromResponse(404, {}, statusBody(404, "NotFound", "x not found")).kind == ErrorKind::NotFound);
  CHECK(errorFromResponse(409, {}, statusBody(409, "AlreadyExists", "exists")).kind ==
        ErrorKind::AlreadyExists);
  CHECK(errorFromResponse(409, {}, statusBody(409, "Conflict", "modified")).kind == ErrorKind::Conflict);
  CHECK(errorFromResponse(410, {}, statusBody(410, "Expired", "too old")).kind == ErrorKind::Gone);
  CHECK(errorFromResponse(401, {}, statusBody(401, "Unauthorized", "no")).kind == ErrorKind::Unauthorized);
  CHECK(errorFromResponse(403, {}, statusBody(403, "Forbidden", "no")).kind == ErrorKind::Forbidden);
  CHECK(errorFromResponse(422, {}, statusBody(422, "Invalid", "bad")).kind == ErrorKind::InvalidInput);
  CHECK(errorFromResponse(504, {}, statusBody(504, "Timeout", "slow")).kind == ErrorKind::Timeout);
  CHECK(errorFromResponse(500, {}, statusBody(500, "ServerTimeout", "slow")).kind == ErrorKind::Timeout);
  CHECK(errorFromResponse(503, {}, "").kind == ErrorKind::Unavailable);
  CHECK(errorFromResponse(418, {}, "").kind == ErrorKind::Internal);
}

TEST_CASE("the message carries reason and Status message and code", "[kube][errors]") {
  auto error = errorFromResponse(404, {}, statusBody(404, "NotFound", "configmaps \\\"a\\\" not found"));
  CHECK(error.message == "NotFound: configmaps \"a\" not found (HTTP 404)");
}

TEST_CASE("429 keeps the Retry-After header", "[kube][errors]") {
  auto error =
      errorFromResponse(429, {{"retry-after", " 7 "}}, statusBody(429, "TooManyRequests", "slow down"));
  CHECK(error.kind == ErrorKind::TooManyRequests);
  REQUIRE(retryAfter(error));
  CHECK(retryAfter(error)->count() == 7);
}

TEST_CASE("Retry-After falls back to details.retryAfterSeconds", "[kube][errors]") {
  auto error = errorFromResponse(
      429, {{"retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"}},
      R"({"kind":"Status","reason":"TooManyRequests","code":429,"details":{"retryAfterSeconds":3}})");
  REQUIRE(retryAfter(error));
  CHECK(retryAfter(error)->count() == 3);
  CHECK_FALSE(retryAfter(errorFromResponse(404, {}, "")));
}

TEST_CASE("a body that is not a Status gives a bounded printable message", "[kube][errors]") {
  std::string html = "<html>\x01" + std::string(1000, 'x');
  auto error = errorFromResponse(502, {}, html);
  CHECK(error.kind == ErrorKind::Unavailable);
  CHECK(error.message.size() < 300);
  CHECK(error.message.find('\x01') == std::string::npos);
  CHECK(errorFromResponse(500, {}, "{\"kind\":").kind == ErrorKind::Unavailable);
  CHECK(errorFromResponse(500, {}, "[1,2]").kind == ErrorKind::Unavailable);
  CHECK(errorFromResponse(404, {}, R"({"kind":"Status","code":"x","reason":5})").kind == ErrorKind::NotFound);
}

TEST_CASE("a watch ERROR event Status becomes a typed error", "[kube][errors]") {
  auto error = errorFromStatusObject(statusBody(410, "Expired", "too old resource version"));
  CHECK(error.kind == ErrorKind::Gone);
  CHECK(errorFromStatusObject("{}").kind == ErrorKind::InvalidInput);
  CHECK(errorFromStatusObject("not json").kind == ErrorKind::InvalidInput);
}

TEST_CASE("an error body nested deeper than the depth limit is shown as text", "[kube][errors]") {
  const std::string deep = R"({"kind":"Status","reason":"NotFound","x":)" + std::string(100000, '[') +
                           std::string(100000, ']') + "}";
  auto error = errorFromResponse(500, {}, deep);
  CHECK(error.kind == ErrorKind::Unavailable);  // the reason inside was not read
  CHECK(error.message.find("{\"kind\":\"Status\"") != std::string::npos);
  CHECK(error.message.size() < 300);
  CHECK(errorFromStatusObject(deep).kind == ErrorKind::InvalidInput);
}
