#pragma once
// The baseline record (docs/architecture.md, "Restart only when pods need it"): the versions a
// workload's pods run with for references whose template annotation restarter has not written,
// because writing it would have restarted pods that did not need a restart:
//   - the workload was opted in while running (labeled, or selected, with pods already up): the
//     pods run with the objects as they are; restarter records them and waits for a real change;
//   - an object the pods need (a reference that is not `optional`) was created after its
//     workload: the pods could not start without it, so they start with its first version.
// The record is the workload *metadata* annotation kBaselineAnnotation (constants.hpp), so writing
// it restarts nothing; value a comma-separated list, sorted, of
//   <kind>/<name>=<uid>/<resourceVersion>
// e.g. `configmap/app=0b0e...-uid/41`, or `<kind>/<name>=absent` (kBaselineAbsent) for an
// optional reference whose object did not exist when restarter first recorded the workload: the
// pods started without it, so its creation rolls them. An entry counts only while the template holds no annotation
// for the reference; the first rollout writes every reference into the template and empties the
// record. An entry that does not parse is no entry: a broken record can cost a restart, never hide
// one. Pure: no I/O.

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace restarter::core {

// The Event reason the controller records when it writes a baseline (explain-restart reads it).
inline constexpr std::string_view kBaselineRecordedReason = "BaselineRecorded";

// The entry of an optional object the pods started without.
inline constexpr std::string_view kBaselineAbsent = "absent";

// "<kind>/<name>" (contentRecordKey) -> "<uid>/<resourceVersion>" or kBaselineAbsent.
using BaselineRecords = std::map<std::string, std::string>;

// Entries that do not parse are skipped (see the file comment). Never fails.
BaselineRecords parseBaseline(std::string_view value);
// The annotation value: entries sorted by key, joined by ",". Empty for no entries.
std::string formatBaseline(const BaselineRecords& records);

// The workload's kBaselineAnnotation, parsed; empty when absent or not a string.
BaselineRecords recordedBaseline(const nlohmann::json& workload);

// Does the workload carry anything restarter wrote: a restarter-owned template annotation, or one
// of restarter's metadata annotations (baseline, content record, last rollout)? A workload without
// any is one restarter has never seen: it is being opted in.
bool hasRestarterRecord(const nlohmann::json& workload);

}  // namespace restarter::core
