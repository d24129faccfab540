#pragma once
// Explaining restarts (explain-restart): why each revision of a workload exists, and whether its
// first rollout was restart-free. Pure: the caller reads revisions and the workload from the API.
//
// A revision's cause is its difference from the previous revision: restarter annotation changes
// (the same diffAnnotations the controller announces restarts with) and other template paths
// (template_diff.hpp). The first rollout had an extra restart when revision 2 does nothing but add
// restarter annotations: the first pods started before the annotations were there (the bug the
// webhook fixes).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "restarter/core/annotations.hpp"
#include "restarter/core/result.hpp"
#include "restarter/core/time.hpp"
#include "restarter/core/workload_kinds.hpp"

namespace restarter::core {

// Accepts what kubectl accepts for these kinds, case-insensitively: statefulset(s), sts,
// statefulset.apps, deployment(s), deploy, deployment.apps, daemonset(s), ds, daemonset.apps.
Result<WorkloadKind> parseWorkloadKind(std::string_view text);
const char* workloadKindName(WorkloadKind kind) noexcept;  // "StatefulSet", ...
std::string_view fieldManagerFor(WorkloadKind kind) noexcept;

struct Revision {
  std::string name;
  std::int64_t number = 0;
  std::string created;  // creationTimestamp (RFC 3339)
  nlohmann::json podTemplate;
  std::int64_t pods = 0;  // pods running this revision now
};

struct RevisionCause {
  bool created = false;  // the first revision kept: nothing to compare with
  std::vector<AnnotationChange> annotations;
  std::vector<std::string> templatePaths;
};

struct ExplainedRevision {
  Revision revision;
  RevisionCause cause;
};

// The cause of `current` given the revision before it.
RevisionCause revisionCause(const nlohmann::json& previousTemplate, const nlohmann::json& currentTemplate);

// Sorts by number and explains each revision against the one before it.
std::vector<ExplainedRevision> explainRevisions(std::vector<Revision> revisions);

enum class FirstRolloutVerdict { RestartFree, ExtraRestart, Unknown };
const char* firstRolloutVerdictName(FirstRolloutVerdict verdict) noexcept;  // restart-free, ...

// Who wrote the restarter annotations of the live template, read from metadata.managedFields:
//   Controller  owned by restarter's field manager for the kind (applied after creation);
//   Other       owned by another field manager (e.g. the workload's own manifest carries them);
//   Admission   present but owned by no manager: the apiserver records no owner for fields a
//               mutating webhook adds (seen on kube-apiserver 1.37), so this is the webhook;
//   None        the live template has no restarter annotations;
//   Unknown     the object carries no managedFields.
enum class AnnotationWriter { Admission, Controller, Other, None, Unknown };
const char* annotationWriterName(AnnotationWriter writer) noexcept;  // admission, controller, ...

struct FirstRollout {
  FirstRolloutVerdict verdict = FirstRolloutVerdict::Unknown;
  std::string reason;
  std::int64_t generation = 0;
  std::size_t revisions = 0;
  AnnotationWriter writer = AnnotationWriter::Unknown;
  std::string fieldManager;  // the manager owning the annotations, if any
};

// `revisions` as explainRevisions returns them; `workload` the live object; `pending` the changes
// the controller has yet to apply (when revision 1 is the only one and lacks annotations that are
// pending, the extra restart is still to come).
FirstRollout judgeFirstRollout(const nlohmann::json& workload, WorkloadKind kind,
                               const std::vector<ExplainedRevision>& revisions,
                               const std::vector<AnnotationChange>& pending = {});

// A RolloutHeld Event of the workload (rollout.hpp): when it was recorded, and the time its note
// says the held rollout will be made.
struct HeldRollout {
  TimePoint recorded;
  TimePoint until;
};

// The hold in force, if any: the most recently recorded RolloutHeld Event, provided it was
// recorded after the workload's last restarter rollout (`lastRollout`, its kLastRolloutAnnotation:
// the held rollout, once made, writes a later one) and a change is still pending (`changesPending`;
// a rollout someone else made, e.g. a spec change the webhook annotated, may have applied it).
std::optional<HeldRollout> currentRolloutHold(const std::vector<HeldRollout>& events,
                                              std::optional<TimePoint> lastRollout, bool changesPending);

}  // namespace restarter::core
