#pragma once
// Result<T>: the value of an operation that can fail in an expected way (bad input, a refused
// request). Errors are values carrying a kind, a message and a context trail; exceptions never
// cross a lib/ module boundary (docs/architecture.md, "No exception across modules"). Like std::expected.

#include <cassert>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace restarter::core {

// What went wrong, coarsely enough that callers can pick a policy (retry, report, give up).
enum class ErrorKind {
  InvalidInput,     // outside input does not have the expected shape or value
  NotFound,         // the object or file does not exist
  AlreadyExists,    // a create found the object already there
  Conflict,         // optimistic concurrency or apply conflict
  Gone,             // a resourceVersion is too old (watch must relist)
  TooManyRequests,  // throttled or refused by a PodDisruptionBudget; retry later
  Unauthorized,     // credentials missing or rejected
  Forbidden,        // authenticated but not allowed
  Timeout,          // a deadline passed
  Unavailable,      // could not reach the peer, or it answered 5xx
  Internal,         // a bug or an unexpected state on our side
};

// Stable lower-case name of a kind, for logs and messages.
const char* errorKindName(ErrorKind kind) noexcept;

struct Error {
  ErrorKind kind = ErrorKind::Internal;
  std::string message;
  // Outermost last: each layer that passes an error up may add what it was doing.
  std::vector<std::string> context;

  // "message (while a; while b)": the one-line form used in logs and CLI errors.
  std::string describe() const;

  // This error with `what` added as its outermost context line, for passing it up:
  // `return std::move(result).error().withContext("reading x");`.
  Error withContext(std::string what) && {
    context.push_back(std::move(what));
    return std::move(*this);
  }
};

inline Error makeError(ErrorKind kind, std::string message) { return Error{kind, std::move(message), {}}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const noexcept { return std::holds_alternative<T>(state_); }
  explicit operator bool() const noexcept { return ok(); }

  // Preconditions: ok() for value(), !ok() for error(). Checked in debug builds.
  T& value() & {
    assert(ok());
    return std::get<T>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(state_));
  }
  const Error& error() const& {
    assert(!ok());
    return std::get<Error>(state_);
  }
  Error&& error() && {
    assert(!ok());
    return std::get<Error>(std::move(state_));
  }

  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // Adds a context line to an error; a value passes through unchanged.
  Result withContext(std::string what) && {
    if (!ok()) state_ = std::move(std::get<Error>(state_)).withContext(std::move(what));
    return std::move(*this);
  }

 private:
  std::variant<T, Error> state_;
};

// Result<void>: success carries nothing.
struct Unit {};
using Status = Result<Unit>;
inline Status okStatus() { return Unit{}; }

}  // namespace restarter::core
