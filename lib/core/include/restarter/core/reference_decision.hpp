#pragma once
// Step one of desiredAnnotations (annotations.hpp): the decision of one reference of the pod
// template, from what is known of it, before the workload-wide question (does the workload roll?)
// is answered. decision_fold.hpp folds the decisions into one write. Pure: no lookup, no JSON.
//
// decideReference takes the first row that matches. T: the template's value for the reference
// now, B: its baseline entry (baseline.hpp), E: its content record entry, H: T, else B; a
// "version" is a `<uid>/<resourceVersion>` (not kBaselineAbsent); "running":
// WorkloadSituation::podsRunning; "required": not Reference::optional; "tracked(X)":
// decideTrackedValue (content.hpp) of the object now against X and E, "now": against nothing.
// "Held": the decision's ifRolled is set (what it gets if the workload rolls anyway).
//
//   screened out by the ignore annotation         IgnoredByAnnotation, value T
//   screened out by Reloader's rules              NotSelected, value T
//   state Unknown                                 error Unavailable: a guess would restart pods
//   Present with the ignore label                 IgnoredByLabel, value T
//   Reloader's rules do not select it             NotSelected, value T
//   Absent:
//     T is commons-operator's `changes-ignored`   value T (a migrated cluster sees no write)
//     running, required, H a version              DeletedKept, value T; held: if rolled nothing;
//                                                 baseline entry B where T is none; record E
//                                                 where E is H's version
//     running, optional, no T, B a version        no value; baseline entry absent; forces a roll
//                                                 (an optional object the pods had, deleted)
//     optional, no T, and B or no restarter       no value; baseline entry absent (the pods
//       record                                    start without it); held while running
//     otherwise                                   no value
//   Present (Tracked):
//     T, or not running                           tracked(T)
//     B absent, optional                          tracked(now): the pods started without it
//     B a version                                 tracked(B); where that is B: Baseline, no
//                                                 value, held (if rolled: B) with baseline
//                                                 entry B; else its value
//     opting in, or required and (the workload    OptedIn / CreatedAfterWorkload, no value;
//       has a record or B)                        held (if rolled: now), baseline entry now
//     otherwise                                   tracked(now): an optional object appeared
// A decision's content record entry is its tracked value's (if rolled too), E for DeletedKept (none
// if rolled), else none.

#include <optional>
#include <string>

#include "restarter/core/annotations.hpp"
#include "restarter/core/content.hpp"
#include "restarter/core/references.hpp"
#include "restarter/core/reloader.hpp"
#include "restarter/core/result.hpp"

namespace restarter::core {

// What holds for every reference of one workload.
struct WorkloadSituation {
  bool podsRunning = false;  // DesiredOptions::podsRunning
  bool optingIn = false;     // DesiredAnnotations::optingIn
  bool hasRecord = false;    // the workload carries a restarter record (hasRestarterRecord)
};

// How a reference was screened before its object was looked up.
enum class Screening {
  LookedUp,             // ReferenceFacts::state is the lookup's answer
  IgnoredByAnnotation,  // the workload's ignore annotation names it: not looked up
  NotSelected,          // Reloader's rules select it in no case (ReferenceSelector::preselect)
};

// What is known of one reference before its decision.
struct ReferenceFacts {
  Reference ref;
  std::optional<std::string> templateValue;  // T: the template's annotation for it now
  std::optional<std::string> baseline;       // B: its baseline entry
  std::optional<ContentRecord> recorded;     // E: its content record entry
  Screening screening = Screening::LookedUp;
  // LookedUp: the object now, narrowed to the keys the reference reads (desiredAnnotations).
  ObjectState state;
  // Reloader's rule that selects it or why none does (ReferenceSelector::select, or preselect's
  // answer when screened out); selected, with no reason, under the restarter label.
  Selection selection;
};

// What a held reference gets where the workload rolls anyway: the template value as it would be
// now (none: the key is removed) and its content record entry.
struct RolledValue {
  std::optional<std::string> value;
  std::optional<ContentRecord> record;
};

struct ReferenceDecision {
  // The reference as explain-restart shows it, with the value and NoRestart that hold where the
  // workload does not roll.
  ReferenceStatus status;
  std::optional<ContentRecord> record;       // the content record entry where it does not roll
  std::optional<std::string> baselineEntry;  // the baseline entry where it does not roll
  // Held out of the template while pods run: what it gets where the workload rolls (then without
  // baseline entry or NoRestart). nullopt: the same as where it does not roll.
  std::optional<RolledValue> ifRolled;
  bool forcesRoll = false;  // the workload rolls though no template value changes
};

// The decision of one reference, by the table above; status.key is the reference's template
// annotation key, status.baseline B, status.state and status.selection the facts'. Unavailable
// when the object's state is Unknown.
Result<ReferenceDecision> decideReference(ReferenceFacts facts, const WorkloadSituation& situation);

}  // namespace restarter::core
