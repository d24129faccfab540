#pragma once
// Compact forms of the text every cache entry carries (store.hpp). A cache of tens of thousands of
// ConfigMaps and Secrets is mostly these fields, so their size is most of the controller's memory
// (docs/architecture.md, "Compact cache entries"):
//
//   SharedText  a value many entries hold, an object's namespace: one copy per distinct value,
//               shared by every entry that holds it, instead of a heap string per entry (a
//               namespace longer than 15 characters does not fit in std::string itself).
//   CompactUid  an object's uid: the 16 bytes of the UUID when it is one in canonical lower-case
//               form (every uid the apiserver assigns), the text otherwise. Either way str()
//               gives back exactly the text it was made from.
//
// Both are immutable values: copies share nothing that can change, so they can be read from any
// thread. SharedText's pool (compact_text.cpp) has a lock of its own.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace restarter::cache {

class SharedText {
 public:
  SharedText() = default;
  // The pooled copy of `text` (thread-safe). Implicit, like std::string's conversions: a SharedText
  // stands where the text did. The empty text shares nothing.
  SharedText(std::string_view text);
  SharedText(const char* text) : SharedText(std::string_view(text)) {}
  SharedText(const std::string& text) : SharedText(std::string_view(text)) {}

  const std::string& str() const noexcept;
  operator std::string_view() const noexcept { return str(); }
  bool empty() const noexcept { return str().empty(); }

  friend bool operator==(const SharedText& a, const SharedText& b) noexcept {
    return a.text_ == b.text_ || a.str() == b.str();
  }

  // Tests: how many distinct values are held now; how many entries the pool has (those plus the
  // ones no longer held and not yet swept).
  static std::size_t heldValues();
  static std::size_t poolEntries();

 private:
  std::shared_ptr<const std::string> text_;  // null for the empty text
};

class CompactUid {
 public:
  CompactUid() = default;
  CompactUid(std::string_view text);
  CompactUid(const char* text) : CompactUid(std::string_view(text)) {}
  CompactUid(const std::string& text) : CompactUid(std::string_view(text)) {}
  CompactUid(const CompactUid& other);
  CompactUid& operator=(const CompactUid& other);
  CompactUid(CompactUid&&) noexcept = default;
  CompactUid& operator=(CompactUid&&) noexcept = default;
  ~CompactUid() = default;

  // The text it was made from.
  std::string str() const;
  bool empty() const noexcept { return !uuid_ && (!text_ || text_->empty()); }
  // True when held as 16 bytes (tests: the apiserver's uids take no heap memory).
  bool compact() const noexcept { return uuid_; }

  friend bool operator==(const CompactUid& a, const CompactUid& b) noexcept;

 private:
  // 32 bytes, as a std::string, but without its heap copy of 37 for an apiserver uid.
  std::array<std::uint8_t, 16> bytes_{};
  std::unique_ptr<std::string> text_;  // any other text (null when uuid_ or empty)
  bool uuid_ = false;
};

}  // namespace restarter::cache
