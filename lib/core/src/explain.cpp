#include "restarter/core/explain.hpp"

#include <algorithm>
#include <cctype>

#include "restarter/core/annotation_keys.hpp"
#include "restarter/core/constants.hpp"
#include "restarter/core/references.hpp"
#include "restarter/core/template_diff.hpp"

namespace restarter::core {

using nlohmann::json;

Result<WorkloadKind> parseWorkloadKind(std::string_view text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "statefulset" || lower == "statefulsets" || lower == "sts" || lower == "statefulset.apps") {
    return WorkloadKind::StatefulSet;
  }
  if (lower == "deployment" || lower == "deployments" || lower == "deploy" || lower == "deployment.apps") {
    return WorkloadKind::Deployment;
  }
  if (lower == "daemonset" || lower == "daemonsets" || lower == "ds" || lower == "daemonset.apps") {
    return WorkloadKind::DaemonSet;
  }
  // kubectl's spellings of Argo Rollouts' kind (its short name is "ro").
  if (lower == "rollout" || lower == "rollouts" || lower == "ro" || lower == "rollout.argoproj.io") {
    return WorkloadKind::Rollout;
  }
  return makeError(ErrorKind::InvalidInput,
                   "unknown workload kind \"" + std::string(text) +
                       "\" (use statefulset/sts, deployment/deploy, daemonset/ds or rollout/ro)");
}

const char* workloadKindName(WorkloadKind kind) noexcept {
  return managedKind(kind).name.data();  // the table's literals are NUL-terminated
}

std::string_view fieldManagerFor(WorkloadKind kind) noexcept { return managedKind(kind).fieldManager; }

namespace {

AnnotationMap annotationsOf(const json& podTemplate) {
  AnnotationMap out;
  if (!podTemplate.is_object()) return out;
  const auto metadata = podTemplate.find("metadata");
  if (metadata == podTemplate.end() || !metadata->is_object()) return out;
  const auto annotations = metadata->find("annotations");
  if (annotations == metadata->end() || !annotations->is_object()) return out;
  for (const auto& [key, value] : annotations->items()) {
    if (value.is_string()) out.emplace(key, value.get<std::string>());
  }
  return out;
}

// True if a managedFields fieldsV1 tree owns a restarter template annotation.
bool ownsRestarterAnnotation(const json& fieldsV1) {
  const json* node = &fieldsV1;
  for (const char* step : {"f:spec", "f:template", "f:metadata", "f:annotations"}) {
    if (!node->is_object()) return false;
    const auto next = node->find(step);
    if (next == node->end()) return false;
    node = &*next;
  }
  if (!node->is_object()) return false;
  for (const auto& item : node->items()) {
    const std::string& key = item.key();
    if (key.rfind("f:", 0) == 0 && parseTemplateAnnotationKey(std::string_view(key).substr(2))) {
      return true;
    }
  }
  return false;
}

}  // namespace

RevisionCause revisionCause(const json& previousTemplate, const json& currentTemplate) {
  RevisionCause cause;
  auto refs = collectReferences(currentTemplate);
  cause.annotations = diffAnnotations(annotationsOf(previousTemplate), annotationsOf(currentTemplate),
                                      refs ? refs.value() : std::vector<Reference>{});
  cause.templatePaths = templateChangePaths(previousTemplate, currentTemplate);
  return cause;
}

std::vector<ExplainedRevision> explainRevisions(std::vector<Revision> revisions) {
  std::stable_sort(revisions.begin(), revisions.end(),
                   [](const Revision& a, const Revision& b) { return a.number < b.number; });
  std::vector<ExplainedRevision> out(revisions.size());
  for (std::size_t i = 0; i < revisions.size(); ++i) {
    if (i == 0) {
      out[i].cause.created = true;
    } else {
      out[i].cause = revisionCause(revisions[i - 1].podTemplate, revisions[i].podTemplate);
    }
  }
  for (std::size_t i = 0; i < revisions.size(); ++i) out[i].revision = std::move(revisions[i]);
  return out;
}

const char* firstRolloutVerdictName(FirstRolloutVerdict verdict) noexcept {
  switch (verdict) {
    case FirstRolloutVerdict::RestartFree: return "restart-free";
    case FirstRolloutVerdict::ExtraRestart: return "extra-restart";
    case FirstRolloutVerdict::Unknown: return "unknown";
  }
  return "unknown";
}

const char* annotationWriterName(AnnotationWriter writer) noexcept {
  switch (writer) {
    case AnnotationWriter::Admission: return "admission";
    case AnnotationWriter::Controller: return "controller";
    case AnnotationWriter::Other: return "other";
    case AnnotationWriter::None: return "none";
    case AnnotationWriter::Unknown: return "unknown";
  }
  return "unknown";
}

FirstRollout judgeFirstRollout(const json& workload, WorkloadKind kind,
                               const std::vector<ExplainedRevision>& revisions,
                               const std::vector<AnnotationChange>& pending) {
  FirstRollout first;
  first.revisions = revisions.size();
  const json metadata = workload.is_object() ? workload.value("metadata", json::object()) : json::object();
  if (metadata.is_object() && metadata.contains("generation") && metadata["generation"].is_number_integer()) {
    first.generation = metadata["generation"].get<std::int64_t>();
  }

  // Who wrote the annotations the live template has.
  const json spec = workload.is_object() ? workload.value("spec", json::object()) : json::object();
  const AnnotationMap live = annotationsOf(spec.is_object() ? spec.value("template", json::object()) : json());
  const bool hasRestarterAnnotations = std::any_of(live.begin(), live.end(), [](const auto& kv) {
    return parseTemplateAnnotationKey(kv.first).has_value();
  });
  const auto managedFields = metadata.is_object() ? metadata.find("managedFields") : metadata.end();
  if (!hasRestarterAnnotations) {
    first.writer = AnnotationWriter::None;
  } else if (!metadata.is_object() || managedFields == metadata.end() || !managedFields->is_array()) {
    first.writer = AnnotationWriter::Unknown;
  } else {
    first.writer = AnnotationWriter::Admission;  // unless a manager owns them
    for (const json& entry : *managedFields) {
      if (!entry.is_object() || !ownsRestarterAnnotation(entry.value("fieldsV1", json::object()))) continue;
      const json manager = entry.value("manager", json(""));
      first.fieldManager = manager.is_string() ? manager.get<std::string>() : "";
      if (first.fieldManager == fieldManagerFor(kind)) {
        first.writer = AnnotationWriter::Controller;
        break;  // the controller applied them after creation
      }
      first.writer = AnnotationWriter::Other;
    }
  }

  if (revisions.empty()) {
    first.reason = "the workload has no revisions";
    return first;
  }
  if (revisions.front().revision.number != 1) {
    first.reason = "revision 1 is no longer kept (revisionHistoryLimit), so the first rollout cannot be judged";
    return first;
  }
  if (revisions.size() >= 2) {
    const RevisionCause& second = revisions[1].cause;
    const bool onlyAdds = !second.annotations.empty() &&
                          std::all_of(second.annotations.begin(), second.annotations.end(),
                                      [](const AnnotationChange& c) { return c.cause == ChangeCause::Added; });
    if (onlyAdds && second.templatePaths.empty()) {
      first.verdict = FirstRolloutVerdict::ExtraRestart;
      first.reason =
          "revision 2 only added restarter annotations: the first pods started without "
          "them and were restarted";
      return first;
    }
  }
  const AnnotationMap firstAnnotations = annotationsOf(revisions.front().revision.podTemplate);
  const bool hadAnnotations = std::any_of(firstAnnotations.begin(), firstAnnotations.end(), [](const auto& kv) {
    return parseTemplateAnnotationKey(kv.first).has_value();
  });
  const bool addsPending = std::any_of(pending.begin(), pending.end(),
                                       [](const AnnotationChange& c) { return c.cause == ChangeCause::Added; });
  if (revisions.size() == 1 && !hadAnnotations && addsPending) {
    first.verdict = FirstRolloutVerdict::ExtraRestart;
    first.reason =
        "revision 1 started without the restarter annotations: adding them (pending) "
        "restarts the pods once more";
    return first;
  }
  first.verdict = FirstRolloutVerdict::RestartFree;
  first.reason = hadAnnotations ? "revision 1 already carried the restarter annotations"
                                : "revision 1 needed no restarter annotations";
  return first;
}

std::optional<HeldRollout> currentRolloutHold(const std::vector<HeldRollout>& events,
                                              std::optional<TimePoint> lastRollout, bool changesPending) {
  if (!changesPending || events.empty()) return std::nullopt;
  const auto latest =
      std::max_element(events.begin(), events.end(),
                       [](const HeldRollout& a, const HeldRollout& b) { return a.recorded < b.recorded; });
  if (lastRollout && latest->recorded <= *lastRollout) return std::nullopt;
  return *latest;
}

}  // namespace restarter::core
