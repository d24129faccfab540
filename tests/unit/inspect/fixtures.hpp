#pragma once
// The pod template the inspect tests build their workloads and revisions from, and the bare
// explanation the renderers' tests fill in.

#include <string>

#include <nlohmann/json.hpp>

#include "restarter/inspect/explanation.hpp"

namespace inspect_fixtures {

inline const std::string kCm = "configmap.restarter.stackable.tech/cfg";

// Container "app" running `image`, mounting ConfigMap "cfg", with these template annotations.
inline nlohmann::json podTemplate(const std::string& image, const nlohmann::json& annotations) {
  return {{"metadata", {{"labels", {{"app", "web"}}}, {"annotations", annotations}}},
          {"spec",
           {{"containers", {{{"name", "app"}, {"image", image}}}},
            {"volumes", {{{"name", "cfg"}, {"configMap", {{"name", "cfg"}}}}}}}}};
}

// StatefulSet shop/web (uid w-uid), labeled, with no revisions, a change due (configmap/cfg u/2
// -> u/3) that nothing holds, and no roll section.
inline restarter::inspect::Explanation dueExplanation() {
  using namespace restarter;
  inspect::Explanation explanation;
  explanation.workload = {core::WorkloadKind::StatefulSet, "shop", "web", "w-uid"};
  explanation.management = {core::ManagedBy::Label, "label restarter.stackable.tech/enabled=true"};
  explanation.firstRollout.verdict = core::FirstRolloutVerdict::RestartFree;
  explanation.firstRollout.reason = "revision 1 already carried the restarter annotations";
  explanation.firstRollout.generation = 3;
  explanation.pending.state = inspect::PendingState::RestartDue;
  core::AnnotationChange change;
  change.kind = core::RefKind::ConfigMap;
  change.name = "cfg";
  change.cause = core::ChangeCause::Updated;
  change.before = "u/2";
  change.after = "u/3";
  explanation.pending.changes = {change};
  explanation.pending.window.window = "always";
  return explanation;
}

}  // namespace inspect_fixtures
