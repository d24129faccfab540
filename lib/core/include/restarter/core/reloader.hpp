#pragma once
// Reloader's annotations (docs/architecture.md, "Reloader annotations"): with
// --reloader-annotations, a workload opted in the way stakater/Reloader reads it is managed with
// Reloader's selection rules and restarter's own mechanism (one template annotation per tracked
// reference, annotations.hpp). Pure: the workload's JSON and the flags in, decisions out.
//
// Reloader's rules, as its ShouldReload (pkg/common/common.go) applies them to one changed
// ConfigMap or Secret and one workload, in this order:
//   1. the object is annotated reloader.stakater.com/ignore: "true": never;
//   2. its name is in the workload's configmaps.exclude.reloader.stakater.com/reload (or
//      secrets.exclude...) list, read from the workload's metadata only: never;
//   3. its name is in configmap.reloader.stakater.com/reload (secret.../reload), comma-separated:
//      yes, referenced by the pod spec or not;
//   4. the workload has reloader.stakater.com/search: "true" and the object
//      reloader.stakater.com/match: "true", and the pod spec references it: yes;
//   5. reloader.stakater.com/auto or the kind's own configmap.reloader.stakater.com/auto
//      (secret...) is true (Go's strconv.ParseBool), or both are unset or empty and
//      --auto-reload-all is on, and the pod spec references it: yes;
//   otherwise no. Rules 3-5 read the workload's metadata annotations, or, when the metadata has
//   none of the kind's reload list, auto, typed auto and search, the pod template's.
// Restarter keeps its own mechanism: a selected reference is tracked exactly as under the
// restarter label (and ignored by restarter's own ignore label and annotations too); a reference
// that is not selected keeps whatever value its template annotation has, none if none, as an
// ignored one does, so starting or stopping to select it restarts nothing.
// Not taken: reload-list entries are names, not Reloader's (undocumented) regular expressions; an
// entry that is not an object name selects nothing.
// A workload labeled restarter.stackable.tech/enabled=true keeps restarter's rules (everything
// referenced); its Reloader annotations are not read. One labeled ...enabled=false is not managed
// whatever its Reloader annotations say (the webhook configuration's objectSelector leaves it out).

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "restarter/core/annotations.hpp"
#include "restarter/core/references.hpp"
#include "restarter/core/result.hpp"
#include "restarter/core/selection.hpp"

namespace restarter::core {

enum class ManagedBy { None, Label, Reloader };

struct Management {
  ManagedBy by = ManagedBy::None;
  // What opted it in: "label restarter.stackable.tech/enabled=true", or the Reloader rules that
  // select something, e.g. "reloader.stakater.com/search", "--auto-reload-all"; empty for None.
  std::string reason;
};

// Reloader's rules of one referenced kind for one workload.
struct ReloaderKindRules {
  RefKind kind = RefKind::ConfigMap;
  bool fromTemplate = false;          // read from the pod template's annotations (rule fallback)
  std::vector<std::string> listed;    // the reload list's entries that are object names
  std::vector<std::string> unusable;  // the reload list's other entries (patterns): they select nothing
  bool search = false;
  std::optional<std::string> autoBy;  // what selects every referenced object of the kind
  std::set<std::string> excluded;

  // True when some rule can select an object of this kind.
  bool selectsAny() const { return !listed.empty() || search || autoBy.has_value(); }
};

struct ReloaderRules {
  ReloaderKindRules configMaps;  // kind ConfigMap
  ReloaderKindRules secrets;     // kind Secret

  const ReloaderKindRules& of(RefKind kind) const { return kind == RefKind::ConfigMap ? configMaps : secrets; }
};

// Reads Reloader's rules from a workload object (lenient: a value that is not a string counts as
// absent, as Reloader's typed maps cannot hold one).
ReloaderRules reloaderRules(const nlohmann::json& workload, bool autoReloadAll);

// Whether and why restarter manages the workload: labeled, or (with reloaderAnnotations) some
// Reloader rule can select one of its objects. The controller's filter, the webhook's enabled()
// and status all ask this.
Management workloadManagement(const nlohmann::json& workload, const SelectionOptions& options);

// Whether a reference is tracked, and which rule says so (explain-restart shows `reason`).
struct Selection {
  bool selected = true;
  std::string reason;
};

// Which references of one workload are tracked: everything referenced (restarter's label, or
// Reloader's annotations off), or Reloader's rules.
class ReferenceSelector {
 public:
  // Everything referenced.
  ReferenceSelector() = default;
  explicit ReferenceSelector(ReloaderRules rules);

  bool reloader() const { return rules_.has_value(); }
  // Adds the reload lists' names the pod spec does not reference to `refs` (kept sorted by
  // (kind, name)); they are tracked with the same per-reference annotations.
  void addListed(std::vector<Reference>& refs);
  // Decided without looking the object up: not selected whatever the object says (excluded, or no
  // rule can select it). nullopt: the object's state decides (select).
  std::optional<Selection> preselect(const Reference& ref) const;
  // Decided with the object's state (Present or Absent).
  Selection select(const Reference& ref, const ObjectState& state) const;

 private:
  std::optional<ReloaderRules> rules_;
  std::set<std::pair<RefKind, std::string>> listedOnly_;  // added by addListed: not referenced
};

// The selector for a workload: Reloader's rules when workloadManagement says ManagedBy::Reloader,
// everything otherwise.
ReferenceSelector referenceSelector(const nlohmann::json& workload, const SelectionOptions& options);

// The references whose objects a workload's desired annotations read: the pod template's, plus
// the reload lists' names when Reloader's rules apply. The controller's reference index and the
// webhook's lookups use it. Errors as collectReferences; InvalidInput without spec.template.
Result<std::vector<Reference>> trackedReferences(const nlohmann::json& workload,
                                                 const SelectionOptions& options);

// Go's strconv.ParseBool: "1", "t", "T", "TRUE", "true", "True" are true; nullopt for anything
// that is not one of those or the false spellings.
std::optional<bool> parseGoBool(std::string_view text) noexcept;

}  // namespace restarter::core
