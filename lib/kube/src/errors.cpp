#include "restarter/kube/errors.hpp"

#include <charconv>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "restarter/core/json_parse.hpp"

namespace restarter::kube {
namespace {

using core::ErrorKind;

ErrorKind kindFor(long status, const std::string& reason) {
  if (reason == "AlreadyExists") return ErrorKind::AlreadyExists;
  if (reason == "Timeout" || reason == "ServerTimeout") return ErrorKind::Timeout;
  if (reason == "Expired" || reason == "Gone") return ErrorKind::Gone;
  switch (status) {
    case 400:
    case 422: return ErrorKind::InvalidInput;
    case 401: return ErrorKind::Unauthorized;
    case 403: return ErrorKind::Forbidden;
    case 404: return ErrorKind::NotFound;
    case 409: return ErrorKind::Conflict;
    case 410: return ErrorKind::Gone;
    case 429: return ErrorKind::TooManyRequests;
    case 408:
    case 504: return ErrorKind::Timeout;
    default: break;
  }
  if (status >= 500 && status <= 599) return ErrorKind::Unavailable;
  return ErrorKind::Internal;
}

std::optional<std::int64_t> parseSeconds(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r'))
    text.remove_suffix(1);
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

struct StatusFields {
  std::string reason;
  std::string message;
  long code = 0;
  std::optional<std::int64_t> retryAfterSeconds;
  bool isStatus = false;
};

// A metav1.Status is a few hundred bytes; the longest real ones (a validation error listing many
// fields) a few KB. Anything larger (a proxy's page, garbage) is not read as one: its raw prefix is
// shown instead.
constexpr std::size_t kMaxStatusBytes = std::size_t{1} << 20;

StatusFields readStatus(std::string_view body) {
  StatusFields fields;
  const auto parsed = core::parseJson(body, core::JsonLimits{kMaxStatusBytes, core::kMaxJsonDepth});
  if (!parsed || !parsed->is_object()) return fields;
  const nlohmann::json& doc = *parsed;
  auto kind = doc.find("kind");
  fields.isStatus = kind != doc.end() && kind->is_string() && *kind == "Status";
  if (auto it = doc.find("reason"); it != doc.end() && it->is_string()) fields.reason = it->get<std::string>();
  if (auto it = doc.find("message"); it != doc.end() && it->is_string())
    fields.message = it->get<std::string>();
  if (auto it = doc.find("code"); it != doc.end() && it->is_number_integer()) fields.code = it->get<long>();
  if (auto details = doc.find("details"); details != doc.end() && details->is_object()) {
    if (auto it = details->find("retryAfterSeconds");
        it != details->end() && it->is_number_integer() && it->get<std::int64_t>() >= 0)
      fields.retryAfterSeconds = it->get<std::int64_t>();
  }
  return fields;
}

core::Error build(long httpStatus, const StatusFields& status, std::optional<std::int64_t> retryAfter,
                  std::string_view rawBody) {
  std::string reason = status.reason.empty() ? "HTTP " + std::to_string(httpStatus) : status.reason;
  std::string message = reason;
  if (!status.message.empty()) {
    message += ": " + status.message;
  } else if (!status.isStatus && !rawBody.empty()) {
    // Not a Status (a proxy's page, garbage): show a bounded, printable prefix.
    std::string snippet;
    for (char c : rawBody.substr(0, 200)) snippet += (c >= 0x20 && c < 0x7f) ? c : '.';
    message += ": " + snippet;
  }
  message += " (HTTP " + std::to_string(httpStatus) + ")";
  core::Error error = core::makeError(kindFor(httpStatus, status.reason), std::move(message));
  if (!retryAfter) retryAfter = status.retryAfterSeconds;
  if (retryAfter) error.context.push_back(std::string(kRetryAfterContextPrefix) + std::to_string(*retryAfter));
  return error;
}

}  // namespace

core::Error errorFromResponse(long httpStatus, const HeaderMap& headers, std::string_view body) {
  StatusFields status = readStatus(body);
  std::optional<std::int64_t> retryAfterHeader;
  if (auto it = headers.find("retry-after"); it != headers.end())
    retryAfterHeader = parseSeconds(it->second);  // HTTP-date form: ignored, details may have it
  return build(httpStatus, status, retryAfterHeader, body);
}

core::Error errorFromStatusObject(std::string_view statusJson) {
  StatusFields status = readStatus(statusJson);
  if (!status.isStatus && status.code == 0) {
    return core::makeError(core::ErrorKind::InvalidInput, "watch ERROR event without a metav1.Status object");
  }
  return build(status.code, status, std::nullopt, statusJson);
}

std::optional<std::chrono::seconds> retryAfter(const core::Error& error) {
  for (const auto& line : error.context) {
    if (std::string_view(line).substr(0, kRetryAfterContextPrefix.size()) == kRetryAfterContextPrefix) {
      if (auto seconds = parseSeconds(std::string_view(line).substr(kRetryAfterContextPrefix.size())))
        return std::chrono::seconds(*seconds);
    }
  }
  return std::nullopt;
}

}  // namespace restarter::kube
