#pragma once
// Where an Argo Rollout's pod template comes from (docs/behaviour.md, "Argo Rollouts";
// docs/architecture.md, "Custom resource kinds"). A Rollout carries its own spec.template, or
// names a workload with spec.workloadRef whose template Argo Rollouts copies (its template must
// then stay empty: Argo refuses a workloadRef Rollout whose template has labels or annotations).
// restarter follows a workloadRef to an apps Deployment in the Rollout's namespace and manages
// that Deployment's template, where a change makes Argo create a new ReplicaSet; it never writes
// the workloadRef Rollout's own template.
//
// Pure; never throws. Every other kind's template is its own.

#include <string>

#include <nlohmann/json.hpp>

#include "restarter/core/workload_kinds.hpp"

namespace restarter::core {

enum class TemplateSource {
  Own,          // spec.template: managed like a Deployment's
  WorkloadRef,  // spec.workloadRef to an apps Deployment of the same namespace (`name`)
  Missing,      // neither spec.template nor spec.workloadRef: nothing to manage
  Unsupported,  // a workloadRef restarter does not follow (another kind, no name, a namespace)
};

struct PodTemplateSource {
  TemplateSource source = TemplateSource::Own;
  std::string name;     // WorkloadRef: the Deployment's name
  std::string problem;  // Missing, Unsupported: what is wrong, for a log line
};

// The source of `workload`'s pod template. A kind other than Rollout, or any value that is not a
// JSON object, is Own (the callers' usual checks then report what is wrong with it). A Rollout
// with spec.workloadRef is decided by the reference alone, whatever spec.template holds.
PodTemplateSource podTemplateSourceOf(const nlohmann::json& workload, WorkloadKind kind);

}  // namespace restarter::core
