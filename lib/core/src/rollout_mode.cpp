#include "restarter/core/rollout_mode.hpp"

#include <openssl/evp.h>

#include <array>

#include "restarter/core/constants.hpp"
#include "restarter/core/text.hpp"

namespace restarter::core {

RolloutModeSetting rolloutModeOf(const nlohmann::json& workload) {
  RolloutModeSetting setting;
  if (!workload.is_object()) return setting;
  const auto metadata = workload.find("metadata");
  if (metadata == workload.end() || !metadata->is_object()) return setting;
  const auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return setting;
  const auto value = annotations->find(std::string(kRolloutModeAnnotation));
  if (value == annotations->end()) return setting;
  if (!value->is_string()) {
    setting.invalid = truncateUtf8(value->dump(), kMaxQuotedModeBytes);
    return setting;
  }
  const std::string& text = value->get_ref<const std::string&>();
  if (text == kRolloutModeManualValue) {
    setting.mode = RolloutMode::Manual;
  } else if (text != kRolloutModeAutoValue) {
    setting.invalid = truncateUtf8(text, kMaxQuotedModeBytes);
  }
  return setting;
}

std::string invalidRolloutModeNote(const std::string& quoted) {
  return std::string(kRolloutModeAnnotation) + " is \"" + quoted + "\", neither \"" +
         std::string(kRolloutModeManualValue) + "\" nor \"" + std::string(kRolloutModeAutoValue) +
         "\": restarter rolls this workload itself (auto)";
}

std::string pendingSetDigest(const AnnotationMap& desiredTemplateAnnotations) {
  // Length-prefixed keys and values in key order (AnnotationMap is sorted): no two sets share bytes.
  std::string bytes;
  for (const auto& [key, value] : desiredTemplateAnnotations) {
    for (const std::string* part : {&key, &value}) {
      bytes += std::to_string(part->size());
      bytes += ':';
      bytes += *part;
    }
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &size, EVP_sha256(), nullptr) != 1 || size < 8)
    return "unknown";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < 8; ++i) {
    out += kHex[digest[i] >> 4];
    out += kHex[digest[i] & 0xf];
  }
  return out;
}

std::string rollCommand(WorkloadKind kind, std::string_view namespace_, std::string_view name) {
  std::string command = "kubectl restarter roll ";
  command += managedKind(kind).id;
  command += '/';
  command += name;
  if (!namespace_.empty()) {
    command += " -n ";
    command += namespace_;
  }
  return command;
}

std::string rolloutPendingNote(std::string_view described, std::string_view digest, std::string_view command) {
  // The digest and the command first: the API keeps at most 1024 bytes of a note.
  std::string note = "Not restarting pods (";
  note += kRolloutModeAnnotation;
  note += ": manual): pending set ";
  note += digest;
  note += ", run `";
  note += command;
  note += "` to roll it: ";
  note += described;
  return note;
}

}  // namespace restarter::core
