#include "restarter/core/decision_fold.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "restarter/core/annotation_keys.hpp"
#include "restarter/core/baseline.hpp"

namespace restarter::core {

namespace {

// Do the restarter-owned keys of `current` differ from `desired` (which holds owned keys only)?
bool ownedKeysDiffer(const AnnotationMap& current, const AnnotationMap& desired) {
  std::size_t owned = 0;
  for (const auto& [key, value] : current) {
    if (!parseTemplateAnnotationKey(key)) continue;
    ++owned;
    const auto it = desired.find(key);
    if (it == desired.end() || it->second != value) return true;
  }
  return owned != desired.size();
}

bool workloadRolls(const std::vector<ReferenceDecision>& decisions, const AnnotationMap& templateNow,
                   const AnnotationMap& unrolled) {
  return std::any_of(decisions.begin(), decisions.end(),
                     [](const ReferenceDecision& d) { return d.forcesRoll; }) ||
         ownedKeysDiffer(templateNow, unrolled);
}

// The key the lookups' digests are keyed with, if any (the last reference's that has one).
std::string lookupsKeyId(const std::vector<ReferenceStatus>& references) {
  std::string keyId;
  for (const ReferenceStatus& status : references) {
    if (status.state.contentDigest && !status.state.digestKeyId.empty()) keyId = status.state.digestKeyId;
  }
  return keyId;
}

RecordRewrite recordRewriteOf(const ContentRecords& recorded, const ContentRecords& records,
                              const std::string& keyId) {
  if (recordNeedsRekey(recorded, keyId)) return RecordRewrite::Rekey;
  const bool incomplete = std::any_of(records.begin(), records.end(), [&recorded](const auto& entry) {
    const auto it = recorded.find(entry.first);
    return it == recorded.end() || !(it->second == entry.second);
  });
  return incomplete ? RecordRewrite::Complete : RecordRewrite::None;
}

}  // namespace

DesiredAnnotations foldDecisions(std::vector<ReferenceDecision> decisions, const AnnotationMap& templateNow,
                                 const ContentRecords& recorded) {
  DesiredAnnotations out;
  for (const ReferenceDecision& decision : decisions) {
    if (decision.status.value) out.annotations.emplace(decision.status.key, *decision.status.value);
  }
  const bool rolling = workloadRolls(decisions, templateNow, out.annotations);
  ContentRecords records;
  BaselineRecords baseline;
  out.references.reserve(decisions.size());
  for (ReferenceDecision& decision : decisions) {
    ReferenceStatus& status = decision.status;
    const std::string recordKey = contentRecordKey(status.ref.kind, status.ref.name);
    if (decision.ifRolled && rolling) {
      status.noRestart = NoRestart::None;
      status.value = std::move(decision.ifRolled->value);
      if (status.value) {
        out.annotations.insert_or_assign(status.key, *status.value);
      } else {
        out.annotations.erase(status.key);
      }
      decision.record = std::move(decision.ifRolled->record);
    } else if (decision.baselineEntry) {
      baseline.insert_or_assign(recordKey, std::move(*decision.baselineEntry));
    }
    if (decision.record) records.insert_or_assign(recordKey, std::move(*decision.record));
    out.references.push_back(std::move(status));
  }
  out.contentDigests = formatContentRecords(records);
  out.recordRewrite = recordRewriteOf(recorded, records, lookupsKeyId(out.references));
  out.baseline = formatBaseline(baseline);
  return out;
}

}  // namespace restarter::core
