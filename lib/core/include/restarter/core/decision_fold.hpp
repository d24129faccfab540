#pragma once
// Step two of desiredAnnotations (annotations.hpp): the references' decisions
// (reference_decision.hpp) folded into the one write of the workload. Pure.
//
// One rollout takes everything (docs/architecture.md, "Restart only when pods need it"): the
// workload rolls when a decision forces it, or when the values the decisions hold where it does not
// roll differ from the restarter-owned keys of the template now (keys restarter does not own are
// never compared). Then every held decision takes its ifRolled value and record, without NoRestart,
// and the baseline empties; else each decision keeps its value, record and baseline entry.

#include <vector>

#include "restarter/core/annotations.hpp"
#include "restarter/core/content.hpp"
#include "restarter/core/reference_decision.hpp"

namespace restarter::core {

// The write of `decisions`, against `templateNow` (the template's annotations now) and `recorded`
// (the content record now):
//   annotations     each decision's value under its key;
//   references      the decisions' statuses, in their order;
//   contentDigests  each decision's record entry (formatContentRecords);
//   baseline        the baseline entries kept (formatBaseline; empty where the workload rolls);
//   recordRewrite   Rekey where `recorded` holds an entry not keyed with the key the decisions'
//                   digests are keyed with (recordNeedsRekey); else Complete where the new record
//                   holds an entry `recorded` lacks or holds otherwise; else None.
// optingIn is left false: it is the caller's (WorkloadSituation::optingIn).
DesiredAnnotations foldDecisions(std::vector<ReferenceDecision> decisions, const AnnotationMap& templateNow,
                                 const ContentRecords& recorded);

}  // namespace restarter::core
