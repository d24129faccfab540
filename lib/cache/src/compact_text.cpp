#include "restarter/cache/compact_text.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "restarter/core/content.hpp"

namespace restarter::cache {
namespace {

// The SharedText pool: a weak reference per distinct value, so a value nobody holds any more
// (a deleted namespace) is freed with its last holder. Expired references are swept whenever the
// pool has doubled since the last sweep, so it stays within twice the values held.
struct Pool {
  std::mutex mutex;
  std::map<std::string, std::weak_ptr<const std::string>, std::less<>> byText;  // guarded by mutex
  std::size_t sweepAt = 64;                                                     // guarded by mutex
};

// Never destroyed: entries may be made and dropped by threads that outlive static destruction.
Pool& pool() {
  static Pool* const instance = new Pool;
  return *instance;
}

const std::string& emptyText() {
  static const std::string empty;
  return empty;
}

constexpr std::size_t kUuidLength = 36;

bool isDashPosition(std::size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

// The 32 hex digits of a canonical lower-case UUID, dashes removed; empty for anything else (upper
// case too: it would not come back as the same text).
std::string uuidDigits(std::string_view text) {
  if (text.size() != kUuidLength) return {};
  std::string digits;
  digits.reserve(32);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (isDashPosition(i) != (c == '-')) return {};
    if (c == '-') continue;
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return {};
    digits += c;
  }
  return digits;
}

}  // namespace

SharedText::SharedText(std::string_view text) {
  if (text.empty()) return;
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  auto it = p.byText.find(text);
  if (it != p.byText.end()) {
    if (auto shared = it->second.lock()) {
      text_ = std::move(shared);
      return;
    }
  } else {
    it = p.byText.emplace(std::string(text), std::weak_ptr<const std::string>()).first;
  }
  text_ = std::make_shared<const std::string>(text);
  it->second = text_;
  if (p.byText.size() >= p.sweepAt) {
    std::erase_if(p.byText, [](const auto& entry) { return entry.second.expired(); });
    p.sweepAt = std::max<std::size_t>(64, 2 * p.byText.size());
  }
}

const std::string& SharedText::str() const noexcept { return text_ ? *text_ : emptyText(); }

std::size_t SharedText::heldValues() {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  return static_cast<std::size_t>(std::count_if(p.byText.begin(), p.byText.end(),
                                                [](const auto& entry) { return !entry.second.expired(); }));
}

std::size_t SharedText::poolEntries() {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  return p.byText.size();
}

CompactUid::CompactUid(std::string_view text) {
  if (text.empty()) return;
  // 16 bytes as 32 hex digits: the content digests' codec (core/content.hpp).
  if (auto bytes = core::parseDigest(uuidDigits(text))) {
    bytes_ = *bytes;
    uuid_ = true;
  } else {
    text_ = std::make_unique<std::string>(text);
  }
}

CompactUid::CompactUid(const CompactUid& other)
    : bytes_(other.bytes_),
      text_(other.text_ ? std::make_unique<std::string>(*other.text_) : nullptr),
      uuid_(other.uuid_) {}

CompactUid& CompactUid::operator=(const CompactUid& other) {
  if (this != &other) *this = CompactUid(other);
  return *this;
}

std::string CompactUid::str() const {
  if (!uuid_) return text_ ? *text_ : std::string();
  std::string text = core::formatDigest(bytes_);
  for (std::size_t at : {std::size_t{8}, std::size_t{13}, std::size_t{18}, std::size_t{23}})
    text.insert(at, 1, '-');
  return text;
}

bool operator==(const CompactUid& a, const CompactUid& b) noexcept {
  if (a.uuid_ != b.uuid_) return false;
  if (a.uuid_) return a.bytes_ == b.bytes_;
  const std::string_view left = a.text_ ? std::string_view(*a.text_) : std::string_view();
  const std::string_view right = b.text_ ? std::string_view(*b.text_) : std::string_view();
  return left == right;
}

}  // namespace restarter::cache
