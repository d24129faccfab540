#include "restarter/core/result.hpp"

namespace restarter::core {

const char* errorKindName(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::InvalidInput: return "invalid-input";
    case ErrorKind::NotFound: return "not-found";
    case ErrorKind::AlreadyExists: return "already-exists";
    case ErrorKind::Conflict: return "conflict";
    case ErrorKind::Gone: return "gone";
    case ErrorKind::TooManyRequests: return "too-many-requests";
    case ErrorKind::Unauthorized: return "unauthorized";
    case ErrorKind::Forbidden: return "forbidden";
    case ErrorKind::Timeout: return "timeout";
    case ErrorKind::Unavailable: return "unavailable";
    case ErrorKind::Internal: return "internal";
  }
  return "internal";
}

std::string Error::describe() const {
  std::string out = message;
  if (!context.empty()) {
    out += " (";
    for (std::size_t i = 0; i < context.size(); ++i) {
      if (i > 0) out += "; ";
      out += "while " + context[i];
    }
    out += ")";
  }
  return out;
}

}  // namespace restarter::core
