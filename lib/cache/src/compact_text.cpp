#include "restarter/cache/compact_text.hpp"

#include <algorithm>
#include <map>
#include <mutex>

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

bool isDash(std::size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

int lowerHexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case too: it would not come back as the same text
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
  bool uuid = text.size() == kUuidLength;
  std::array<std::uint8_t, 16> bytes{};
  for (std::size_t i = 0, out = 0; uuid && i < text.size(); ++i) {
    if (isDash(i)) {
      uuid = text[i] == '-';
      continue;
    }
    const int high = lowerHexValue(text[i]);
    const int low = ++i < text.size() && !isDash(i) ? lowerHexValue(text[i]) : -1;
    if (high < 0 || low < 0) {
      uuid = false;
      break;
    }
    bytes[out++] = static_cast<std::uint8_t>(high << 4 | low);
  }
  if (uuid) {
    bytes_ = bytes;
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
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text;
  text.reserve(kUuidLength);
  for (std::size_t i = 0; i < bytes_.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    text += kHex[bytes_[i] >> 4];
    text += kHex[bytes_[i] & 0x0f];
  }
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
