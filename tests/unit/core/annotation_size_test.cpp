#include "restarter/core/annotation_size.hpp"

#include <catch2/catch.hpp>

using namespace restarter::core;

namespace {

const std::string kKey = "configmap.restarter.stackable.tech/app";        // 38 bytes
const std::string kValue = "0b9c3a4e-1f2d-4c5b-8a79-6e5d4c3b2a10/12345";  // 42 bytes: uid/rv

AnnotationChange added(const std::string& key, const std::string& value) {
  AnnotationChange change;
  change.key = key;
  change.after = value;
  return change;
}

// Annotations of exactly `total` bytes: one foreign key holding a filler value.
AnnotationMap filledTo(std::size_t total) {
  const std::string key = "example.com/filler";
  return {{key, std::string(total - key.size(), 'x')}};
}

}  // namespace

TEST_CASE("the annotations size is the sum of key and value bytes", "[annotation_size]") {
  CHECK(annotationsBytes({}) == 0);
  CHECK(annotationsBytes({{"a", ""}, {"bc", "def"}}) == 6);
  // Bytes, not characters, as Go's len(): "ü" is two bytes.
  CHECK(annotationsBytes({{"k", "\xc3\xbc"}}) == 3);
  CHECK(kMaxAnnotationsBytes == 262144);
}

TEST_CASE("a change that ends exactly at the limit fits", "[annotation_size]") {
  const auto size = annotationsSizeAfter(filledTo(kMaxAnnotationsBytes - 80), {added(kKey, kValue)});
  CHECK(size.before == kMaxAnnotationsBytes - 80);
  CHECK(size.after == kMaxAnnotationsBytes);
  CHECK(size.fits());
}

TEST_CASE("a change that ends one byte under the limit fits", "[annotation_size]") {
  const auto size = annotationsSizeAfter(filledTo(kMaxAnnotationsBytes - 81), {added(kKey, kValue)});
  CHECK(size.after == kMaxAnnotationsBytes - 1);
  CHECK(size.fits());
}

TEST_CASE("a change that ends one byte over the limit does not fit", "[annotation_size]") {
  const auto size = annotationsSizeAfter(filledTo(kMaxAnnotationsBytes - 79), {added(kKey, kValue)});
  CHECK(size.after == kMaxAnnotationsBytes + 1);
  CHECK_FALSE(size.fits());
}

TEST_CASE("an updated value counts only its new length and a removal frees its bytes", "[annotation_size]") {
  const std::string other = "secret.restarter.stackable.tech/creds";  // 37 bytes, with "uid/1" 42
  AnnotationMap current = filledTo(kMaxAnnotationsBytes - 80 - 42);
  current[kKey] = kValue;
  current[other] = "uid/1";
  REQUIRE(annotationsBytes(current) == kMaxAnnotationsBytes);
  // A resourceVersion two digits longer for kKey: two bytes more, over the limit.
  const auto grown = annotationsSizeAfter(current, {added(kKey, kValue + "67")});
  CHECK(grown.before == kMaxAnnotationsBytes);
  CHECK(grown.after == kMaxAnnotationsBytes + 2);
  CHECK_FALSE(grown.fits());
  // Removing `other` in the same change frees its 42 bytes.
  AnnotationChange removal;
  removal.key = other;
  removal.before = "uid/1";
  const auto both = annotationsSizeAfter(current, {added(kKey, kValue + "67"), removal});
  CHECK(both.after == kMaxAnnotationsBytes + 2 - 42);
  CHECK(both.fits());
  // Removing a key that is not there changes nothing.
  AnnotationChange absent;
  absent.key = "configmap.restarter.stackable.tech/gone";
  CHECK(annotationsSizeAfter(current, {absent}).after == kMaxAnnotationsBytes);
}

TEST_CASE("annotations already over the limit do not fit after a change that grows them", "[annotation_size]") {
  const auto size = annotationsSizeAfter(filledTo(kMaxAnnotationsBytes + 10), {added(kKey, kValue)});
  CHECK(size.before == kMaxAnnotationsBytes + 10);
  CHECK_FALSE(size.fits());
}
